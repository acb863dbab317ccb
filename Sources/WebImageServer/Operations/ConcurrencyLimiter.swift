import Synchronization

/// Caps the image requests in progress. A request over the cap is turned away at once (the
/// proxy answers 503 with `Retry-After`) instead of waiting in an unbounded queue: under
/// overload, fast refusals keep latency and memory bounded, and the client or the CDN in front
/// retries.
///
/// ```swift
/// let limiter = ConcurrencyLimiter(limit: 32)
/// guard limiter.tryAcquire() else { throw ProxyError.busy }
/// defer { limiter.release() }
/// ```
package final class ConcurrencyLimiter: Sendable {
    package let limit: Int
    private let inFlight = Mutex(0)

    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Takes a slot if one is free.
    package func tryAcquire() -> Bool {
        inFlight.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    package func release() {
        inFlight.withLock { $0 = max(0, $0 - 1) }
    }

    /// Requests in progress now.
    package var current: Int { inFlight.withLock { $0 } }
}
