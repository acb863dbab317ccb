import Synchronization
import WebImageCore

/// The grace period of a graceful shutdown: started when shutdown begins, it bounds every wait
/// that follows, so that a decode still running (bounded by the decoding limits, but possibly
/// seconds long) never holds the process past it.
///
/// ```swift
/// let shutdown = ShutdownClock(gracePeriod: .seconds(10))
/// // when the signal arrives: shutdown.start()
/// let finished = try await shutdown.bounding { try await group.run() }   // false: time ran out
/// ```
final class ShutdownClock: Sendable {
    let gracePeriod: Duration
    private struct State {
        var deadline: ContinuousClock.Instant?
        var nextWaiter = 0
        /// Resumed with the deadline when the clock starts, or `nil` when the waiting task is
        /// cancelled first.
        var waiters: [Int: CheckedContinuation<ContinuousClock.Instant?, Never>] = [:]
    }
    private let state = Mutex(State())

    init(gracePeriod: Duration) {
        self.gracePeriod = gracePeriod
    }

    /// Starts the grace period (once; later calls change nothing).
    func start() {
        let (deadline, waiters) = state.withLock { state -> (ContinuousClock.Instant, [CheckedContinuation<ContinuousClock.Instant?, Never>]) in
            if let deadline = state.deadline { return (deadline, []) }
            let deadline = ContinuousClock.now + gracePeriod
            state.deadline = deadline
            defer { state.waiters = [:] }
            return (deadline, Array(state.waiters.values))
        }
        for waiter in waiters { waiter.resume(returning: deadline) }
    }

    /// The end of the grace period once it has started; `nil` if the task is cancelled first.
    private func deadline() async -> ContinuousClock.Instant? {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let deadline = state.withLock { state -> ContinuousClock.Instant?? in
                    if let deadline = state.deadline { return .some(deadline) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let deadline { continuation.resume(returning: deadline) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    /// Runs `operation` to its end, or until the grace period has run out, whichever comes
    /// first: `true` when it ended, `false` when time ran out (it then goes on, unawaited, and
    /// ends with the process). Its error, if it ended by throwing, is rethrown.
    func bounding(_ operation: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        let outcome = OnceContinuation<Bool>()
        let timer = Task {
            guard let deadline = await deadline() else { return }
            try? await Task.sleep(until: deadline, clock: .continuous)
            outcome.resume(with: .success(false))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            outcome.set(continuation)
            Task {
                do {
                    try await operation()
                    outcome.resume(with: .success(true))
                } catch {
                    outcome.resume(with: .failure(error))
                }
            }
        }
    }
}
