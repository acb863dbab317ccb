import Foundation
import Synchronization

/// URLs that failed permanently, each until its entry expires.
///
/// SDWebImage keeps such URLs for the life of the process, so an image fixed at the origin
/// never loads again until the app restarts; here each entry expires (default 10 minutes).
final class FailedURLList: Sendable {
    private let entries = Mutex<[String: ContinuousClock.Instant]>([:])
    private let lifetime: Duration
    private let now: @Sendable () -> ContinuousClock.Instant

    init(lifetime: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.lifetime = lifetime
        self.now = now
    }

    /// Whether `url` failed permanently and its entry has not expired (an expired one is
    /// dropped).
    func contains(_ url: String) -> Bool {
        entries.withLock { entries in
            guard !entries.isEmpty, let expiry = entries[url] else { return false }
            if expiry > now() { return true }
            entries[url] = nil
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
        }
    }

    func remove(_ url: String) {
        _ = entries.withLock { $0.removeValue(forKey: url) }
    }

    func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    var count: Int { entries.withLock { $0.count } }
}
