import Synchronization

/// A thread-safe, in-memory, least-recently-used cache with limits on total cost, entry count
/// and entry age: where decoded images wait for their next display.
///
/// ```swift
/// let cache = MemoryCache<String, ImageContainer>()
/// cache.set(container, forKey: url.absoluteString, cost: container.cost)
/// if let hit = cache.value(forKey: url.absoluteString) { show(hit.image) }
/// ```
///
/// Lookups, insertions and removals take constant time and one uncontended mutex: a hit costs
/// about as much as a `Dictionary` lookup under a lock, and the key is hashed before the lock
/// is taken. Eviction is exact LRU: when a limit is exceeded, the entry whose last
/// ``value(forKey:)`` or ``set(_:forKey:cost:)`` is oldest goes first. An entry costing more
/// than ``Configuration/entryCostLimitFraction`` of the cost limit is refused.
///
/// The cache is a class shared by reference and safe to use from any thread or task; it
/// never suspends, so the synchronous memory-cache step of a load needs no thread hop.
/// Evicted values are released after the lock is let go, so dropping a large bitmap never
/// holds up another thread's lookup.
///
/// ## Shedding memory on Linux
///
/// Linux has no memory-pressure notification like Apple's `didReceiveMemoryWarning`, so
/// the cache cannot shrink by itself when the system runs short. (A GTK application has GIO's
/// `GMemoryMonitor`, which `WebImageGTK`'s `MemoryPressure` follows for the caches its views
/// load through.) An application that needs it asks explicitly, from whatever signal it has:
/// ``trim(toCost:)`` to keep the most recently used part, ``removeAll()`` to drop everything. Common sources are a periodic check of
/// `MemAvailable` in `/proc/meminfo`, a cgroup v2 pressure trigger (write a threshold such as
/// `some 150000 1000000` to the cgroup's `memory.pressure` and `poll` it for `POLLPRI`), or a
/// signal an operator sends:
///
/// ```swift
/// // MemAvailable from /proc/meminfo, in bytes.
/// func availableMemory() -> UInt64? {
///     let meminfo = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)
///     let line = meminfo?.split(separator: "\n").first { $0.hasPrefix("MemAvailable:") }
///     return line?.split(separator: " ").dropFirst().first.flatMap { UInt64($0) }.map { $0 * 1024 }
/// }
///
/// // Halve the cache whenever less than a tenth of memory is available.
/// Task.detached {
///     while !Task.isCancelled {
///         try await Task.sleep(for: .seconds(5))
///         if let available = availableMemory(), available < ProcessInfo.processInfo.physicalMemory / 10 {
///             cache.trim(toCost: cache.totalCost / 2)
///         }
///     }
/// }
///
/// // Empty the cache on `kill -USR1 <pid>`.
/// signal(SIGUSR1, SIG_IGN)
/// let source = DispatchSource.makeSignalSource(signal: SIGUSR1)
/// source.setEventHandler { cache.removeAll() }
/// source.resume()
/// ```
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The limits the cache was created with.
    public let configuration: Configuration

    @usableFromInline let storage: Mutex<MemoryCacheStorage<Key, Value>>

    /// Read only when there is an age limit, so a cache without one never pays for the clock.
    @usableFromInline let clock: @Sendable () -> UInt64
    @usableFromInline let hasAgeLimit: Bool

    /// Creates an empty cache with the given limits.
    ///
    /// ```swift
    /// let thumbnails = MemoryCache<String, ImageContainer>(configuration: .init(costLimit: 64 << 20))
    /// ```
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, clock: { MonotonicClock.coarseNanoseconds() })
    }

    /// Creates a cache that reads time from `clock` (nanoseconds, never decreasing): tests use
    /// it to age entries without waiting.
    init(configuration: Configuration, clock: @escaping @Sendable () -> UInt64) {
        self.configuration = configuration
        self.clock = clock
        self.hasAgeLimit = configuration.ageLimit != nil
        self.storage = Mutex(MemoryCacheStorage(
            costLimit: max(configuration.costLimit, 0),
            countLimit: max(configuration.countLimit, 0),
            entryCostLimit: configuration.entryCostLimit,
            ageLimit: configuration.ageLimitNanoseconds
        ))
    }

    @inlinable
    var now: UInt64 { hasAgeLimit ? clock() : 0 }

    /// Only 32 bits of the hash are kept: the index never has more than 2³² buckets.
    @inlinable
    static func hash(_ key: Key) -> UInt32 {
        UInt32(truncatingIfNeeded: key.hashValue)
    }

    /// The value stored for `key`, or `nil` if there is none or it is older than the age limit.
    /// A hit makes the entry the most recently used.
    ///
    /// ```swift
    /// if let container = cache.value(forKey: key) { show(container) }
    /// ```
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let hash = Self.hash(key)
        let now = self.now
        let (value, _) = storage.withLock { $0.value(forKey: key, hash: hash, now: now) }
        return value
    }

    /// Stores `value` for `key` as the most recently used entry, replacing any previous value,
    /// then evicts least recently used entries until the cache is within its limits.
    ///
    /// A value costing more than ``Configuration/entryCostLimitFraction`` of the cost limit
    /// is refused: nothing is stored, any previous value for `key` is removed too (it is
    /// stale now), and the result is `false`. Negative costs count as 0.
    ///
    /// ```swift
    /// cache.set(container, forKey: key, cost: container.cost)
    /// ```
    ///
    /// - Returns: whether the value was stored.
    @inlinable
    @discardableResult
    public func set(_ value: Value, forKey key: Key, cost: Int = 0) -> Bool {
        let hash = Self.hash(key)
        let now = self.now
        // What was evicted or replaced comes back out of the lock and is released here.
        let (stored, _) = storage.withLock { $0.set(value, forKey: key, hash: hash, cost: cost, now: now) }
        return stored
    }

    /// Removes the value for `key` and returns it, or `nil` if there was none. Not counted as
    /// an eviction.
    ///
    /// ```swift
    /// cache.removeValue(forKey: key)   // the image changed on the server
    /// ```
    @inlinable
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        let hash = Self.hash(key)
        return storage.withLock { $0.removeValue(forKey: key, hash: hash) }
    }

    /// Whether a usable (not expired) value is stored for `key`. Unlike ``value(forKey:)``,
    /// this neither refreshes the entry's recency nor counts as a hit or miss: a prefetcher can
    /// ask without distorting what the cache keeps.
    ///
    /// ```swift
    /// let missing = urls.filter { !cache.contains($0.absoluteString) }
    /// ```
    @inlinable
    public func contains(_ key: Key) -> Bool {
        let hash = Self.hash(key)
        let now = self.now
        return storage.withLock { $0.contains(key, hash: hash, now: now) }
    }

    /// Removes every entry and returns the cache's bookkeeping memory to its initial size.
    /// Not counted as evictions; the statistics counters are kept.
    ///
    /// ```swift
    /// cache.removeAll()   // the user logged out
    /// ```
    public func removeAll() {
        // The old entries come back out of the lock and are released here, not under it.
        _ = storage.withLock { $0.releaseStorage() }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    ///
    /// ```swift
    /// cache.trim(toCost: cache.totalCost / 2)   // memory is short: keep the newer half
    /// ```
    public func trim(toCost cost: Int) {
        _ = storage.withLock { $0.trim(toCost: max(cost, 0)) }
    }

    /// Evicts least recently used entries until at most `count` remain.
    ///
    /// ```swift
    /// cache.trim(toCount: 100)
    /// ```
    public func trim(toCount count: Int) {
        _ = storage.withLock { $0.trim(toCount: max(count, 0)) }
    }

    /// Evicts every entry older than the age limit. Expired entries are never returned in any
    /// case; this gives back their memory before they would reach the least recently used end.
    /// Takes time proportional to the number of entries.
    ///
    /// ```swift
    /// // Once a minute, in a long-running server:
    /// cache.removeExpired()
    /// ```
    public func removeExpired() {
        guard hasAgeLimit else { return }
        let now = clock()
        _ = storage.withLock { $0.removeExpired(now: now) }
    }

    /// The sum of the costs of the entries held now (expired entries included until dropped).
    public var totalCost: Int {
        storage.withLock { $0.totalCost }
    }

    /// The number of entries held now (expired entries included until dropped).
    public var count: Int {
        storage.withLock { $0.count }
    }

    /// Hits, misses and evictions since creation or the last ``resetStatistics()``, with the
    /// current total cost and count, read together in one consistent snapshot.
    ///
    /// ```swift
    /// logger.info("memory cache hit ratio \(cache.statistics.hitRatio)")
    /// ```
    public var statistics: Statistics {
        storage.withLock {
            Statistics(hits: $0.hits, misses: $0.misses, evictions: $0.evictions, totalCost: $0.totalCost, count: $0.count)
        }
    }

    /// Sets hits, misses and evictions back to 0. The entries stay.
    public func resetStatistics() {
        storage.withLock {
            $0.hits = 0
            $0.misses = 0
            $0.evictions = 0
        }
    }

    /// Slots allocated for entries, live or free: the bound on the cache's bookkeeping memory.
    var slotCapacity: Int {
        storage.withLock { $0.nodes.count }
    }
}
