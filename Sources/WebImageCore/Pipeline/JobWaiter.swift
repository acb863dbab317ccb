import Synchronization

/// Waits for the outcome of a job in a ``JobTable`` from inside an async function: subscribes,
/// forwards the job's progress and previews, follows priority changes, and unsubscribes when
/// the waiting task is cancelled.
final class JobWaiter<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var job: SharedJob<Value>?
        var id: Int?
        var isDone = false
    }

    private let state = Mutex(State())
    private let forward: @Sendable (SharedJob<Value>.Event) -> Void

    init(forward: @escaping @Sendable (SharedJob<Value>.Event) -> Void = { _ in }) {
        self.forward = forward
    }

    /// Subscribes to `key` in `table` (starting `body` when no job runs) and returns its value.
    ///
    /// - Throws: the job's ``ImageError``, or ``ImageError/cancelled`` when the calling task is
    ///   cancelled (the subscription is then dropped, and the job cancelled if it was the last).
    func value(
        of table: JobTable<Key, Value>,
        key: Key,
        priority: ImagePriority,
        body: @escaping @Sendable (SharedJob<Value>) async -> Void
    ) async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let proceed = state.withLock { state in
                    guard !state.isDone else { return false }
                    state.continuation = continuation
                    return true
                }
                guard proceed else { return continuation.resume(throwing: ImageError.cancelled) }
                let (job, id, _) = table.subscribe(key: key, priority: priority, handler: { [self] in handle($0) }, body: body)
                let leave = state.withLock { state -> Bool in
                    guard !state.isDone else { return id != nil }
                    state.job = job
                    state.id = id
                    return false
                }
                // Cancelled while subscribing: leave now that there is an id to leave with.
                if leave, let id { job.unsubscribe(id) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Follows a new priority of the waiting work.
    func setPriority(_ priority: ImagePriority) {
        let (job, id) = state.withLock { ($0.job, $0.id) }
        if let job, let id { job.setPriority(priority, of: id) }
    }

    /// Stops waiting: the caller gets ``ImageError/cancelled`` and the job loses a subscriber.
    func cancel() {
        let (continuation, job, id) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, SharedJob<Value>?, Int?) in
            guard !state.isDone else { return (nil, nil, nil) }
            state.isDone = true
            defer {
                state.continuation = nil
                state.job = nil
            }
            return (state.continuation, state.job, state.id)
        }
        if let job, let id { job.unsubscribe(id) }
        continuation?.resume(throwing: ImageError.cancelled)
    }

    private func handle(_ event: SharedJob<Value>.Event) {
        switch event {
        case .progress, .preview:
            let live = state.withLock { !$0.isDone }
            if live { forward(event) }
        case .value(let value):
            finish(.success(value))
        case .failure(let error):
            finish(.failure(error))
        }
    }

    private func finish(_ result: Result<Value, ImageError>) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard !state.isDone else { return nil }
            state.isDone = true
            defer {
                state.continuation = nil
                state.job = nil
            }
            return state.continuation
        }
        continuation?.resume(with: result.mapError { $0 as any Error })
    }
}
