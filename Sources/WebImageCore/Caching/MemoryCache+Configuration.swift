import Foundation

/// 15 % of physical memory, at most 1 GiB: computed once per process.
@usableFromInline
let memoryCacheDefaultCostLimit: Int = {
    let physical = ProcessInfo.processInfo.physicalMemory
    let share = physical / 100 * 15
    return Int(min(share, 1 << 30))
}()

extension MemoryCache {
    /// The limits of a ``MemoryCache``, fixed when the cache is created.
    ///
    /// ```swift
    /// var configuration = MemoryCache<ImageCacheKey, ImageContainer>.Configuration()
    /// configuration.costLimit = 256 << 20      // 256 MiB of decoded pixels
    /// configuration.ageLimit = .seconds(600)   // nothing older than ten minutes
    /// let cache = MemoryCache<ImageCacheKey, ImageContainer>(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The most the costs of all entries may add up to; storing beyond it evicts least
        /// recently used entries.
        ///
        /// By default 15 % of the machine's physical memory
        /// (`ProcessInfo.processInfo.physicalMemory`), capped at 1 GiB: a cache of decoded
        /// images charged by ``Bitmap/cost`` then holds a generous screenful or two of history
        /// without crowding out the rest of the process. In a container, `physicalMemory` may
        /// report the host's memory rather than the container's limit; set the limit explicitly
        /// there. Negative values count as 0.
        public var costLimit: Int

        /// The most entries the cache holds; storing beyond it evicts the least recently used.
        /// `Int.max` (no limit) by default. A limit of 0 refuses everything.
        public var countLimit: Int

        /// How long after it was stored an entry stays usable, or `nil` (the default) for no
        /// limit. An older entry is never returned: ``MemoryCache/value(forKey:)`` drops it and
        /// reports a miss, storing drops it when it reaches the least recently used end, and
        /// ``MemoryCache/removeExpired()`` drops all of them. Ages are measured on a coarse
        /// monotonic clock whose resolution is one scheduler tick (a few milliseconds).
        public var ageLimit: Duration?

        /// The largest share of ``costLimit`` one entry may cost (0.1 by default, clamped to
        /// 0...1). A bigger entry is refused rather than allowed to flush a tenth or more of the
        /// cache at once: a single huge image is better decoded again than kept at the
        /// expense of many small ones.
        public var entryCostLimitFraction: Double

        /// Creates a configuration; every argument has the default documented on its property.
        public init(
            costLimit: Int = memoryCacheDefaultCostLimit,
            countLimit: Int = .max,
            ageLimit: Duration? = nil,
            entryCostLimitFraction: Double = 0.1
        ) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.ageLimit = ageLimit
            self.entryCostLimitFraction = entryCostLimitFraction
        }

        /// The cost above which ``MemoryCache/set(_:forKey:cost:)`` refuses an entry.
        var entryCostLimit: Int {
            let costLimit = max(costLimit, 0)
            let fraction = entryCostLimitFraction.isNaN ? 1 : min(max(entryCostLimitFraction, 0), 1)
            let limit = Double(costLimit) * fraction
            // Double(Int.max) rounds up past Int.max, so convert only what is strictly below.
            return limit < Double(costLimit) ? Int(limit) : costLimit
        }

        /// ``ageLimit`` in nanoseconds, saturating; `nil` without a limit.
        var ageLimitNanoseconds: UInt64? {
            guard let ageLimit else { return nil }
            let (seconds, attoseconds) = ageLimit.components
            guard seconds >= 0, attoseconds >= 0 else { return 0 }
            let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
            let (total, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
            return overflow || carry ? .max : total
        }
    }

    /// Counters of a ``MemoryCache``'s use since it was created or since
    /// ``MemoryCache/resetStatistics()``, with its current size.
    ///
    /// ```swift
    /// let stats = cache.statistics
    /// print("hit ratio \(stats.hitRatio), \(stats.evictions) evicted, \(stats.totalCost) bytes")
    /// ```
    public struct Statistics: Sendable, Equatable {
        /// Lookups (``MemoryCache/value(forKey:)``) that returned a value.
        public var hits: Int
        /// Lookups that returned `nil`, including those that found an expired entry.
        public var misses: Int
        /// Entries removed to honour a limit (cost, count or age) or by a trim; not those
        /// removed explicitly, replaced, or dropped by ``MemoryCache/removeAll()``.
        public var evictions: Int
        /// The sum of the costs of the entries held now.
        public var totalCost: Int
        /// The number of entries held now.
        public var count: Int

        package init(hits: Int = 0, misses: Int = 0, evictions: Int = 0, totalCost: Int = 0, count: Int = 0) {
            self.hits = hits
            self.misses = misses
            self.evictions = evictions
            self.totalCost = totalCost
            self.count = count
        }

        /// `hits / (hits + misses)`, or 0 before the first lookup.
        public var hitRatio: Double {
            let lookups = hits + misses
            return lookups == 0 ? 0 : Double(hits) / Double(lookups)
        }
    }
}
