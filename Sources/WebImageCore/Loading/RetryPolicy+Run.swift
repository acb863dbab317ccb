import Foundation
import Synchronization

extension RetryPolicy {
    /// A retry about to happen: which attempt failed (from 1), why, and the wait before the next.
    package struct Retry: Sendable, Hashable {
        package var attempt: Int
        package var reason: Reason
        package var delay: Duration

        package init(attempt: Int, reason: Reason, delay: Duration) {
            self.attempt = attempt
            self.reason = reason
            self.delay = delay
        }
    }

    /// What one attempt saw besides its error: whether any of the body reached the caller
    /// (the attempt is then never repeated: the caller has had those bytes, as progress or
    /// chunks) and the server's `Retry-After`. Written by the attempt, which may run in a child
    /// task of its timeout, and read once it has ended.
    package final class Attempt: Sendable {
        private struct State {
            var deliveredBody = false
            var retryAfter: Duration?
        }

        private let state = Mutex(State())

        package init() {}

        /// Whether some of the body reached the caller.
        package var deliveredBody: Bool { state.withLock { $0.deliveredBody } }
        /// The wait the server asked for, when it did.
        package var retryAfter: Duration? { state.withLock { $0.retryAfter } }

        /// Called before the first body byte is handed on (once: later calls change nothing).
        package func markDeliveredBody() {
            state.withLock { $0.deliveredBody = true }
        }

        /// Keeps the server's `Retry-After` value, when it sent one that parses.
        package func noteRetryAfter(_ value: String?) {
            guard let value, let wait = RetryPolicy.retryAfter(value) else { return }
            state.withLock { $0.retryAfter = wait }
        }

        /// The reason to try again after `error`, unless the body had started.
        package func retryReason(for error: ImageError) -> Reason? {
            deliveredBody ? nil : error.retryReason
        }
    }

    /// Runs `operation` (given the attempt's number, from 1) until it succeeds, fails with what
    /// `transient` does not call transient (it returns the reason and the server's wait, or
    /// `nil`), ``maximumAttempts`` have failed, or the next attempt could not start before
    /// `deadline`; then throws the last failure. Between
    /// attempts it tells `onRetry`, then waits (see ``delay(afterAttempt:retryAfter:fraction:)``);
    /// a cancellation during the wait throws `cancelled()` at once, with no further attempt.
    ///
    /// When the first attempt succeeds this costs nothing but the call: no clock, no lock, no
    /// allocation.
    package func run<Value, Failure: Error>(
        until deadline: ContinuousClock.Instant? = nil,
        _ operation: (_ attempt: Int) async throws(Failure) -> Value,
        transient: (Failure) -> (reason: Reason, retryAfter: Duration?)?,
        cancelled: () -> Failure,
        onRetry: (Retry) -> Void = { _ in }
    ) async throws(Failure) -> Value {
        var attempt = 1
        while true {
            do throws(Failure) {
                return try await operation(attempt)
            } catch {
                guard attempt < maximumAttempts, !Task.isCancelled, let cause = transient(error) else { throw error }
                let wait = delay(afterAttempt: attempt, retryAfter: cause.retryAfter, fraction: Self.jitterFraction())
                // Never past the request's own deadline: a retry that could not start before it
                // would only fail later.
                if let deadline, ContinuousClock.now + wait >= deadline { throw error }
                onRetry(Retry(attempt: attempt, reason: cause.reason, delay: wait))
                do {
                    try await Task.sleep(for: wait)
                } catch {
                    throw cancelled()
                }
                attempt += 1
            }
        }
    }
}
