import Synchronization

/// One piece of work that several subscribers wait on: a download, a decode, a processing
/// chain. The pipeline's coalescing rests on it.
///
/// The job runs once, in its own task, at the highest priority of its subscribers. Each
/// subscriber is told every event and leaves on its own; when the last one leaves before the job
/// finished, the job's task is cancelled, so no work continues that nobody wants. A subscriber
/// that arrives after the job finished is told the outcome at once (the job stays in its
/// ``JobTable`` until its after-work, such as a disk write, is done).
final class SharedJob<Value: Sendable>: Sendable {
    enum Event: Sendable {
        case progress(ImageLoadContext.Progress)
        case preview(Value)
        case value(Value)
        case failure(ImageError)

        var isFailure: Bool {
            if case .failure = self { true } else { false }
        }

        var isFinal: Bool {
            switch self {
            case .value, .failure: true
            case .progress, .preview: false
            }
        }
    }

    typealias Handler = @Sendable (Event) -> Void

    private struct Subscriber {
        var id: Int
        var priority: ImagePriority
        var handler: Handler
    }

    private struct State {
        var subscribers: [Subscriber] = []
        var nextID = 0
        var outcome: Event?
        var isCancelled = false
        var task: Task<Void, Never>?
        var priority: ImagePriority = .veryLow
        var priorityHandler: (@Sendable (ImagePriority) -> Void)?
        var cancellationHandler: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// What ``subscribe(priority:handler:)`` found.
    enum Subscription {
        /// Subscribed: events will reach the handler.
        case subscribed(id: Int)
        /// The job already finished: here is its outcome (deliver it outside any lock).
        case finished(Event)
        /// The job was cancelled (its last subscriber left): start a new one.
        case cancelled
    }

    /// Adds a subscriber. Never calls `handler` itself, so it is safe under a caller's lock.
    func subscribe(priority: ImagePriority, handler: @escaping Handler) -> Subscription {
        let (subscription, change) = state.withLock { state -> (Subscription, (@Sendable (ImagePriority) -> Void, ImagePriority)?) in
            if let outcome = state.outcome { return (.finished(outcome), nil) }
            if state.isCancelled { return (.cancelled, nil) }
            let id = state.nextID
            state.nextID += 1
            state.subscribers.append(Subscriber(id: id, priority: priority, handler: handler))
            return (.subscribed(id: id), Self.updatePriority(&state))
        }
        if let (handler, priority) = change { handler(priority) }
        return subscription
    }

    /// Removes a subscriber; the last one to leave an unfinished job cancels it.
    func unsubscribe(_ id: Int) {
        let cancel: (Task<Void, Never>?, (@Sendable () -> Void)?)? = state.withLock { state in
            guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return nil }
            state.subscribers.remove(at: index)
            guard state.subscribers.isEmpty, state.outcome == nil, !state.isCancelled else { return nil }
            state.isCancelled = true
            defer {
                state.task = nil
                state.cancellationHandler = nil
                state.priorityHandler = nil
            }
            return (state.task, state.cancellationHandler)
        }
        guard let (task, handler) = cancel else {
            // Not the last one: the job may now run at a lower priority.
            let change = state.withLock { Self.updatePriority(&$0) }
            if let (handler, priority) = change { handler(priority) }
            return
        }
        handler?()
        task?.cancel()
    }

    /// Changes one subscriber's priority; the job follows the highest.
    func setPriority(_ priority: ImagePriority, of id: Int) {
        let change = state.withLock { state -> (@Sendable (ImagePriority) -> Void, ImagePriority)? in
            guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return nil }
            state.subscribers[index].priority = priority
            return Self.updatePriority(&state)
        }
        if let (handler, priority) = change { handler(priority) }
    }

    /// The highest priority among the subscribers.
    var priority: ImagePriority { state.withLock { $0.priority } }

    /// Registers who follows the job's priority (the loader's context, or the subscription to
    /// the job upstream), and is told the current one at once.
    func onPriorityChange(_ handler: @escaping @Sendable (ImagePriority) -> Void) {
        let priority = state.withLock { state in
            state.priorityHandler = handler
            return state.priority
        }
        handler(priority)
    }

    /// Registers work to undo when the job is cancelled (removing it from its table).
    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.cancellationHandler = handler }
    }

    /// Starts the job's body in its own task.
    func start(_ body: @escaping @Sendable (SharedJob<Value>) async -> Void) {
        let task = Task { await body(self) }
        let cancelled = state.withLock { state in
            state.task = task
            return state.isCancelled
        }
        if cancelled { task.cancel() }
    }

    /// Tells every subscriber `event`; a final event is kept for late subscribers and for the
    /// job's own after-work. Events after the final one are dropped.
    ///
    /// - Returns: how many subscribers were told.
    @discardableResult
    func send(_ event: Event) -> Int {
        let handlers: [Handler] = state.withLock { state in
            guard state.outcome == nil else { return [] }
            let handlers = state.subscribers.map(\.handler)
            if event.isFinal {
                // Nothing follows the outcome: let go of the subscribers and handlers, which
                // capture the tasks and waiters downstream, so no reference cycle outlives it.
                state.outcome = event
                state.subscribers = []
                state.priorityHandler = nil
                state.cancellationHandler = nil
                state.task = nil
            }
            return handlers
        }
        for handler in handlers { handler(event) }
        return handlers.count
    }

    /// Whether anyone is still subscribed.
    var hasSubscribers: Bool { state.withLock { !$0.subscribers.isEmpty } }

    private static func updatePriority(_ state: inout State) -> (@Sendable (ImagePriority) -> Void, ImagePriority)? {
        let highest = state.subscribers.lazy.map(\.priority).max() ?? state.priority
        guard highest != state.priority else { return nil }
        state.priority = highest
        return state.priorityHandler.map { ($0, highest) }
    }
}

/// The jobs of one stage by key, so that identical work is found and shared.
final class JobTable<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let jobs = Mutex<[Key: SharedJob<Value>]>([:])
    private let activity: ActivityTracker
    private let joinsFinished: @Sendable (Key) -> Bool
    private let replayed: @Sendable (Value) -> Value

    /// - Parameters:
    ///   - joinsFinished: whether a job that has delivered its outcome, but is still in the
    ///     table doing its after-work (a disk write), answers a new subscriber for `key` with
    ///     that outcome. Work that must reflect the world as it is when asked (a revalidation)
    ///     says no, and gets a job of its own.
    ///   - replayed: the value as a subscriber that came after it was made gets it: nothing was
    ///     loaded for that subscriber, and the value says so (its counts must not claim the
    ///     download).
    init(
        activity: ActivityTracker,
        joinsFinished: @escaping @Sendable (Key) -> Bool = { _ in true },
        replayed: @escaping @Sendable (Value) -> Value = { $0 }
    ) {
        self.activity = activity
        self.joinsFinished = joinsFinished
        self.replayed = replayed
    }

    /// Subscribes to the job for `key`, starting one with `body` when there is none (or the one
    /// there was cancelled). Returns the job, the subscription id (`nil` when the outcome was
    /// delivered at once), and whether this call joined work already under way.
    func subscribe(
        key: Key,
        priority: ImagePriority,
        handler: @escaping SharedJob<Value>.Handler,
        body: @escaping @Sendable (SharedJob<Value>) async -> Void
    ) -> (job: SharedJob<Value>, id: Int?, joined: Bool) {
        var replay: SharedJob<Value>.Event?
        let (job, id, joined, isNew) = jobs.withLock { jobs -> (SharedJob<Value>, Int?, Bool, Bool) in
            if let existing = jobs[key] {
                switch existing.subscribe(priority: priority, handler: handler) {
                case .subscribed(let id): return (existing, id, true, false)
                // A value is shared with whoever comes while the job finishes its after-work; a
                // failure is not: a request made after one was reported tries again (and a
                // permanent failure is remembered by the failed-URL list, not by the table).
                case .finished(.value(let value)) where joinsFinished(key):
                    replay = .value(replayed(value))
                    return (existing, nil, true, false)
                case .finished, .cancelled: break
                }
            }
            let job = SharedJob<Value>()
            jobs[key] = job
            guard case .subscribed(let id) = job.subscribe(priority: priority, handler: handler) else {
                preconditionFailure("a new job accepts its first subscriber")
            }
            return (job, id, false, true)
        }
        if let replay { handler(replay) }
        if isNew {
            job.onCancel { [weak self, weak job] in
                guard let self, let job else { return }
                self.remove(job, forKey: key)
            }
            // Counted from here, not from inside the task, so that a wait for idleness that
            // starts right after this call cannot miss the job.
            activity.begin()
            job.start { [activity] job in
                await body(job)
                activity.end()
            }
        }
        return (job, id, joined)
    }

    /// Forgets `job` once its work (and after-work) is done, unless another took its place.
    func remove(_ job: SharedJob<Value>, forKey key: Key) {
        jobs.withLock { jobs in
            if jobs[key] === job { jobs[key] = nil }
        }
    }

    /// The jobs whose key satisfies `predicate` (for tests).
    func jobs(where predicate: (Key) -> Bool) -> [SharedJob<Value>] {
        jobs.withLock { jobs in jobs.filter { predicate($0.key) }.map(\.value) }
    }

    /// Jobs in the table (for tests and statistics).
    var count: Int { jobs.withLock { $0.count } }
}
