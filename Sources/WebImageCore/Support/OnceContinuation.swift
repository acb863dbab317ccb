import Synchronization

/// A continuation resumed by whichever of several racing outcomes comes first (a job's result
/// or its timeout, an operation or a grace period); later outcomes are dropped.
///
/// ```swift
/// let once = OnceContinuation<Int>()
/// let value = try await withCheckedThrowingContinuation { continuation in
///     once.set(continuation)
///     Task { once.resume(with: .success(1)) }
///     Task { once.resume(with: .failure(CancellationError())) }
/// }
/// ```
package final class OnceContinuation<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)

    package init() {}

    package func set(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    /// Resumes the continuation the first time; later calls do nothing.
    package func resume(with result: Result<T, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}
