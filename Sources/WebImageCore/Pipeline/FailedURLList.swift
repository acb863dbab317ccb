import Foundation
import Synchronization

/// URLs that failed permanently, each until its entry expires.
///
/// SDWebImage keeps such URLs for the life of the process, so an image fixed at the origin
/// never loads again until the app restarts; here each entry expires (default 10 minutes).
final class FailedURLList: Sendable {
    private let entries = Mutex<[String: ContinuousClock.Instant]>([:])
    /// Mirrors `entries.isEmpty` so the common case (nothing failed) costs one atomic load.
    private let emptiness = Atomic(true)

    private var isEmpty: Bool { emptiness.load(ordering: .relaxed) }
    private let lifetime: Duration
    private let now: @Sendable () -> ContinuousClock.Instant

    init(lifetime: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.lifetime = lifetime
        self.now = now
    }

    /// Whether `url` failed permanently and its entry has not expired (an expired one is
    /// dropped). An empty list answers without building the URL's string.
    func contains(_ url: URL) -> Bool {
        guard !isEmpty else { return false }
        return contains(url.absoluteString)
    }

    /// Whether `url` failed permanently and its entry has not expired (an expired one is
    /// dropped).
    func contains(_ url: String) -> Bool {
        entries.withLock { entries in
            guard let expiry = entries[url] else { return false }
            if expiry > now() { return true }
            entries[url] = nil
            emptiness.store(entries.isEmpty, ordering: .relaxed)
            return false
        }
    }

    func insert(_ url: String) {
        let expiry = now() + lifetime
        entries.withLock { entries in
            // Drop expired entries now and then, so the list stays as small as its live part.
            if entries.count >= 1024 {
                let current = now()
                entries = entries.filter { $0.value > current }
            }
            entries[url] = expiry
            emptiness.store(false, ordering: .relaxed)
        }
    }

    func remove(_ url: String) {
        entries.withLock { entries in
            entries[url] = nil
            emptiness.store(entries.isEmpty, ordering: .relaxed)
        }
    }

    func removeAll() {
        entries.withLock { entries in
            entries.removeAll()
            emptiness.store(true, ordering: .relaxed)
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
