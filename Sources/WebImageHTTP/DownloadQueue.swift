import Synchronization
import WebImageCore

/// At most `limit` downloads run at once; the rest wait, ordered by priority, then by arrival
/// (first in first out, or last in first out).
///
/// A waiting download can change priority (it moves accordingly) and can be cancelled (it
/// leaves the queue at once and never starts). Every slot granted is returned exactly once,
/// by ``release(_:)``.
///
/// ```swift
/// let slot = try await queue.acquire(priority: { context.priority })   // throws ImageError.cancelled
/// defer { queue.release(slot) }
/// ```
final class DownloadQueue: Sendable {
    /// A granted slot; hand it back to ``release(_:)``.
    struct Slot: Sendable, Hashable {
        let id: UInt64
    }

    private struct Waiter {
        var priority: ImagePriority
        /// Arrival order within the queue; a priority change counts as a new arrival at the
        /// new priority.
        var sequence: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private enum Entry {
        case waiting(Waiter)
        case running
        /// Cancelled before its continuation was registered: the registration finds this
        /// and fails at once.
        case cancelledEarly
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var running = 0
        var nextID: UInt64 = 0
        var nextSequence: UInt64 = 0
    }

    let limit: Int
    let order: HTTPImageLoader.QueueOrder
    private let state = Mutex(State())

    init(limit: Int, order: HTTPImageLoader.QueueOrder) {
        self.limit = max(1, limit)
        self.order = order
    }

    /// Downloads running now.
    var runningCount: Int { state.withLock { $0.running } }

    /// Downloads waiting now.
    var waitingCount: Int {
        state.withLock { state in
            state.entries.values.count(where: { if case .waiting = $0 { true } else { false } })
        }
    }

    /// The priorities of the waiting downloads, highest first.
    var waitingPriorities: [ImagePriority] {
        state.withLock { state in
            state.entries.values.compactMap { entry -> ImagePriority? in
                if case .waiting(let waiter) = entry { waiter.priority } else { nil }
            }.sorted(by: >)
        }
    }

    /// Waits for a slot. `onQueued` receives the slot's id before it enters the queue, so the
    /// caller can route priority changes to ``setPriority(_:of:)`` while it waits; `priority`
    /// is read as it enters the queue, so a change between the two is not lost.
    ///
    /// - Throws: ``ImageError/cancelled`` when the task is cancelled before the slot is
    ///   granted; the download then never starts.
    func acquire(priority: () -> ImagePriority, onQueued: (Slot) -> Void = { _ in }) async throws -> Slot {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let slot = Slot(id: id)
        onQueued(slot)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Decision { case start, wait, cancelled }
                let decision: Decision = state.withLock { state in
                    if case .cancelledEarly = state.entries[id] {
                        state.entries[id] = nil
                        return .cancelled
                    }
                    if state.running < limit, !state.entries.values.contains(where: { if case .waiting = $0 { true } else { false } }) {
                        state.running += 1
                        state.entries[id] = .running
                        return .start
                    }
                    state.nextSequence += 1
                    state.entries[id] = .waiting(Waiter(priority: priority(), sequence: state.nextSequence, continuation: continuation))
                    return .wait
                }
                switch decision {
                case .start: continuation.resume()
                case .wait: break
                case .cancelled: continuation.resume(throwing: ImageError.cancelled)
                }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                switch state.entries[id] {
                case .waiting(let waiter):
                    state.entries[id] = nil
                    return waiter
                case nil:
                    state.entries[id] = .cancelledEarly
                    return nil
                case .running, .cancelledEarly:
                    return nil  // already started: the caller sees the cancellation and releases
                }
            }
            waiter?.continuation.resume(throwing: ImageError.cancelled)
        }
        return slot
    }

    /// Moves a waiting download to `priority`; a no-op once it runs or left.
    func setPriority(_ priority: ImagePriority, of slot: Slot) {
        state.withLock { state in
            guard case .waiting(var waiter) = state.entries[slot.id], waiter.priority != priority else { return }
            waiter.priority = priority
            state.nextSequence += 1
            waiter.sequence = state.nextSequence
            state.entries[slot.id] = .waiting(waiter)
        }
    }

    /// Returns a granted slot and starts the next waiting download, if any. Releasing a slot
    /// that is not running (twice, or never granted) does nothing.
    func release(_ slot: Slot) {
        let next: CheckedContinuation<Void, any Error>? = state.withLock { state in
            guard case .running = state.entries[slot.id] else { return nil }
            state.entries[slot.id] = nil
            state.running -= 1
            guard state.running < limit, let (id, waiter) = nextWaiter(in: state) else { return nil }
            state.entries[id] = .running
            state.running += 1
            return waiter.continuation
        }
        next?.resume()
    }

    /// The waiter to start next: the highest priority, then the oldest (FIFO) or newest (LIFO)
    /// arrival. A linear scan: queues hold tens to hundreds of entries, and this runs once
    /// per download.
    private func nextWaiter(in state: State) -> (UInt64, Waiter)? {
        var best: (UInt64, Waiter)?
        for (id, entry) in state.entries {
            guard case .waiting(let waiter) = entry else { continue }
            guard let current = best?.1 else {
                best = (id, waiter)
                continue
            }
            if waiter.priority != current.priority {
                if waiter.priority > current.priority { best = (id, waiter) }
            } else if order == .fifo ? waiter.sequence < current.sequence : waiter.sequence > current.sequence {
                best = (id, waiter)
            }
        }
        return best
    }
}
