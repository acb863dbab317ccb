import Synchronization

/// A budget for an image's CPU work, checked where that work runs long: between the frames of an
/// animation's decode, processing and encode, between an encoder's attempts, and along an
/// expensive filter. Past it, the check throws ``ImageError/timeout(_:)``, so the work stops at
/// the next check instead of running to the end.
///
/// The budget is spent only while the work runs on a ``BlockingExecutor``'s threads (decoding,
/// processing, encoding), never while it waits for a download or for a free thread: a slow
/// origin does not eat into it. A caller binds one around its work
/// (`WorkDeadline.$budget.withValue(WorkDeadline(.seconds(5))) { … }`); the binding follows the
/// work into child tasks and the pipeline's shared jobs, and each executor job runs under the
/// deadline of what remains. Work shared by several callers runs under the budget of the one that
/// started it. Without a binding, a check costs a task-local read and never throws.
///
/// The same checks stop work whose caller has left: an executor job whose awaiting task is
/// cancelled (the pipeline cancels a shared job when its last subscriber leaves) throws
/// ``ImageError/cancelled`` at its next check.
package final class WorkDeadline: Sendable {
    /// The budget of the work in progress (a task-local: it follows the work into child tasks).
    @TaskLocal package static var budget: WorkDeadline?
    /// The instant the job running on this thread must end by (bound by ``BlockingExecutor``).
    @TaskLocal static var current: ContinuousClock.Instant?
    /// Whether the task awaiting the job on this thread was cancelled (bound by
    /// ``BlockingExecutor``): its caller left, so the work can stop.
    @TaskLocal static var abandonment: Abandonment?

    /// Set when the task awaiting an executor job is cancelled.
    final class Abandonment: Sendable {
        private let flag = Atomic(false)
        var isSet: Bool { flag.load(ordering: .relaxed) }
        func set() { flag.store(true, ordering: .relaxed) }
    }

    private let remaining: Mutex<Duration>

    package init(_ total: Duration) {
        remaining = Mutex(total)
    }

    /// Whether the budget is spent.
    package var isSpent: Bool { remaining.withLock { $0 <= .zero } }

    /// Runs `body` (one executor job) under the deadline of what remains, and spends its time.
    func run<T>(_ body: () throws -> T) rethrows -> T {
        let started = ContinuousClock.now
        let deadline = started + remaining.withLock { $0 }
        defer {
            let spent = ContinuousClock.now - started
            remaining.withLock { $0 -= spent }
        }
        return try Self.$current.withValue(deadline, operation: body)
    }

    /// Throws ``ImageError/cancelled`` when the caller of the job on this thread has left, and
    /// ``ImageError/timeout(_:)`` when the job has passed its deadline; `doing` names the work
    /// in the message.
    package static func check(_ doing: @autoclosure () -> String) throws {
        if abandonment?.isSet == true { throw ImageError.cancelled }
        guard let deadline = current, ContinuousClock.now >= deadline else { return }
        throw ImageError.timeout("the work budget ran out \(doing())")
    }
}
