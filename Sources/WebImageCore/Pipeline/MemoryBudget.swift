import DequeModule
import Synchronization

/// Admits work by the memory it is estimated to hold, so that costly decodes never run side by
/// side past a limit.
///
/// Decoding threads are few (one per core), but what one decode holds varies by a factor of a
/// thousand: a 256 px thumbnail of a baseline JPEG needs a few hundred kilobytes, the same
/// thumbnail of a 15-megapixel progressive JPEG keeps every DCT coefficient (~90 MB). Two of
/// the latter on two threads, plus what glibc keeps of freed buffers in per-thread arenas, is
/// how a thumbnail pipeline's peak memory ends far above its cache limit. The manager reserves
/// each decode's estimate here first.
///
/// Reservations are granted in order of arrival. One larger than the whole limit is granted
/// when nothing else is held, so it runs alone instead of never.
///
/// ```swift
/// let budget = MemoryBudget(limit: 128 << 20)
/// let image = try await budget.withReservation(estimate) {
///     try await executor.run { try registry.decode(data, options: options) }
/// }
/// ```
final class MemoryBudget: Sendable {
    private struct Waiter {
        var id: Int
        var amount: Int
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var held = 0
        var holders = 0
        var nextID = 0
        var waiters: Deque<Waiter> = []

        func admits(_ amount: Int, limit: Int) -> Bool {
            holders == 0 || held + amount <= limit
        }
    }

    /// The most bytes reservations may hold together.
    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Bytes held by granted reservations.
    var held: Int { state.withLock { $0.held } }

    /// Reservations waiting to be granted.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Runs `body` once `amount` bytes can be reserved, and releases them after.
    ///
    /// - Throws: ``ImageError/cancelled`` when the task is cancelled while waiting (nothing is
    ///   then held), or what `body` throws.
    func withReservation<T: Sendable>(_ amount: Int, _ body: () async throws -> T) async throws -> T {
        let amount = min(max(0, amount), limit)
        try await reserve(amount)
        defer { release(amount) }
        return try await body()
    }

    private func reserve(_ amount: Int) async throws {
        let id = state.withLock { state -> Int? in
            // Granted at once only when no one waits ahead: arrival order keeps a large
            // reservation from starving behind a stream of small ones.
            if state.waiters.isEmpty, state.admits(amount, limit: limit) {
                state.held += amount
                state.holders += 1
                return nil
            }
            defer { state.nextID += 1 }
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case cancelled, granted, waiting }
                let outcome = state.withLock { state -> Outcome in
                    if Task.isCancelled { return .cancelled }
                    // What was held may have been released since the first look.
                    if state.waiters.isEmpty, state.admits(amount, limit: limit) {
                        state.held += amount
                        state.holders += 1
                        return .granted
                    }
                    state.waiters.append(Waiter(id: id, amount: amount, continuation: continuation))
                    return .waiting
                }
                switch outcome {
                case .cancelled: continuation.resume(throwing: ImageError.cancelled)
                case .granted: continuation.resume()
                case .waiting: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: ImageError.cancelled)
            // The one that left may have been what held the others back.
            grantWaiting()
        }
    }

    private func release(_ amount: Int) {
        state.withLock { state in
            state.held -= amount
            state.holders -= 1
        }
        grantWaiting()
    }

    private func grantWaiting() {
        let granted = state.withLock { state -> [Waiter] in
            var granted: [Waiter] = []
            while let first = state.waiters.first, state.admits(first.amount, limit: limit) {
                state.waiters.removeFirst()
                state.held += first.amount
                state.holders += 1
                granted.append(first)
            }
            return granted
        }
        for waiter in granted { waiter.continuation.resume() }
    }
}
