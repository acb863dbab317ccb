import Synchronization

extension RetryPolicy {
    /// Where the backoff's random fraction (from 0 to 1) comes from: `nil`, the system's
    /// generator. A task-local, so that a test binds a seeded source around its loads (it
    /// follows them into the pipeline's shared jobs) without touching any other test's:
    ///
    /// ```swift
    /// let jitter = SeededJitter(seed: 7)
    /// try await RetryPolicy.$jitter.withValue({ jitter.next() }) { try await loader.load(request, context: context) }
    /// ```
    @TaskLocal package static var jitter: (@Sendable () -> Double)?

    /// A draw of the backoff's fraction.
    static func jitterFraction() -> Double {
        jitter?() ?? Double.random(in: 0...1)
    }
}

/// A reproducible source of fractions from 0 to 1 (SplitMix64), for ``RetryPolicy/jitter``:
/// the same seed draws the same waits.
package final class SeededJitter: Sendable {
    private let state: Mutex<UInt64>

    package init(seed: UInt64) {
        state = Mutex(seed)
    }

    /// The next fraction, in `0...1`.
    package func next() -> Double {
        let bits = state.withLock { state -> UInt64 in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        // The top 53 bits: every double this gives is exact.
        return Double(bits >> 11) / Double(((1 as UInt64) << 53) - 1)
    }
}
