import Foundation
import Synchronization
import Testing
import WebImageTestSupport
@testable import WebImageCore

/// A clock the test moves by hand, so that age limits are tested without waiting.
private final class ManualClock: Sendable {
    private let nanoseconds = Atomic<UInt64>(1_000_000_000)

    var now: UInt64 { nanoseconds.load(ordering: .relaxed) }

    func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        nanoseconds.add(UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000), ordering: .relaxed)
    }

    func set(_ value: UInt64) { nanoseconds.store(value, ordering: .relaxed) }
}

/// Every key hashes into one of 7 values: probe runs get long and removals have to shift
/// entries back across them, which a good hash would almost never exercise.
private struct CollidingKey: Hashable, Sendable {
    var id: Int
    func hash(into hasher: inout Hasher) { hasher.combine(id % 7) }
}

/// The obviously correct model the cache must agree with: entries in an array ordered from
/// least to most recently used, searched linearly.
private struct ReferenceLRU<Key: Hashable> {
    var entries: [(key: Key, value: Int, cost: Int)] = []
    let costLimit: Int
    let countLimit: Int
    let entryCostLimit: Int

    var totalCost: Int { entries.reduce(0) { $0 + $1.cost } }

    mutating func value(forKey key: Key) -> Int? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
        let entry = entries.remove(at: index)
        entries.append(entry)
        return entry.value
    }

    mutating func set(_ value: Int, forKey key: Key, cost: Int) -> Bool {
        entries.removeAll { $0.key == key }
        guard cost <= entryCostLimit, countLimit > 0 else { return false }
        entries.append((key, value, cost))
        while totalCost > costLimit || entries.count > countLimit { entries.removeFirst() }
        return true
    }

    mutating func removeValue(forKey key: Key) -> Int? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
        return entries.remove(at: index).value
    }

    func contains(_ key: Key) -> Bool { entries.contains { $0.key == key } }

    mutating func trim(toCost cost: Int) {
        while totalCost > cost { entries.removeFirst() }
    }
}

@Suite struct MemoryCacheTests {
    /// A cache with only the given limits (no per-entry limit unless asked for).
    private func makeCache<Key>(
        costLimit: Int = .max, countLimit: Int = .max, key: Key.Type
    ) -> MemoryCache<Key, Int> {
        MemoryCache(configuration: .init(costLimit: costLimit, countLimit: countLimit, entryCostLimitFraction: 1))
    }

    private func makeCache(costLimit: Int = .max, countLimit: Int = .max) -> MemoryCache<String, Int> {
        makeCache(costLimit: costLimit, countLimit: countLimit, key: String.self)
    }

    // MARK: LRU order

    @Test func lookupRefreshesRecency() {
        let cache = makeCache(countLimit: 3)
        cache.set(1, forKey: "a")
        cache.set(2, forKey: "b")
        cache.set(3, forKey: "c")
        #expect(cache.value(forKey: "a") == 1)   // "b" is now the least recently used
        cache.set(4, forKey: "d")
        #expect(!cache.contains("b"))
        #expect(cache.contains("a") && cache.contains("c") && cache.contains("d"))
        cache.set(5, forKey: "e")                // then "c"
        #expect(!cache.contains("c"))
        #expect(cache.count == 3)
    }

    @Test func containsDoesNotRefreshRecencyOrCount() {
        let cache = makeCache(countLimit: 2)
        cache.set(1, forKey: "a")
        cache.set(2, forKey: "b")
        #expect(cache.contains("a"))
        #expect(!cache.contains("z"))
        cache.set(3, forKey: "c")
        #expect(!cache.contains("a"))
        #expect(cache.statistics == .init(hits: 0, misses: 0, evictions: 1, totalCost: 0, count: 2))
    }

    @Test func settingAnExistingKeyRefreshesItAndUpdatesItsCost() {
        let cache = makeCache(costLimit: 100)
        cache.set(1, forKey: "a", cost: 10)
        cache.set(2, forKey: "b", cost: 10)
        cache.set(3, forKey: "c", cost: 10)
        cache.set(11, forKey: "a", cost: 30)     // order now b, c, a
        #expect(cache.totalCost == 50)
        #expect(cache.count == 3)
        cache.set(4, forKey: "d", cost: 60)      // needs 10 more: "b" goes, not "a"
        #expect(!cache.contains("b"))
        #expect(cache.value(forKey: "a") == 11)
        #expect(cache.totalCost == 100)
        cache.set(12, forKey: "a", cost: 5)      // cheaper: nothing needs to go
        #expect(cache.totalCost == 75)
        #expect(cache.count == 3)
    }

    // MARK: Limits

    @Test func costLimitEvictsLeastRecentlyUsedUntilTheNewEntryFits() {
        let cache = makeCache(costLimit: 100)
        for (index, key) in ["a", "b", "c", "d", "e"].enumerated() {
            cache.set(index, forKey: key, cost: 20)
        }
        #expect(cache.totalCost == 100)
        cache.set(9, forKey: "big", cost: 50)    // a, b and c must go (60 freed, 50 needed)
        #expect(!cache.contains("a") && !cache.contains("b") && !cache.contains("c"))
        #expect(cache.contains("d") && cache.contains("e") && cache.contains("big"))
        #expect(cache.totalCost == 90)
        #expect(cache.statistics.evictions == 3)
    }

    @Test func countLimitKeepsTheMostRecent() {
        let cache = makeCache(countLimit: 10)
        for index in 0..<25 { cache.set(index, forKey: "k\(index)") }
        #expect(cache.count == 10)
        #expect((0..<15).allSatisfy { !cache.contains("k\($0)") })
        #expect((15..<25).allSatisfy { cache.contains("k\($0)") })
        #expect(cache.statistics.evictions == 15)
    }

    @Test func oversizeEntriesAreRefusedAndDropTheOldValue() {
        let cache = MemoryCache<String, Int>(configuration: .init(costLimit: 1000, entryCostLimitFraction: 0.1))
        #expect(cache.set(1, forKey: "x", cost: 100))    // exactly a tenth: allowed
        #expect(cache.set(2, forKey: "y", cost: 5))
        #expect(!cache.set(3, forKey: "x", cost: 101))
        #expect(!cache.contains("x"))                    // the old value is stale: gone too
        #expect(cache.value(forKey: "x") == nil)
        #expect(!cache.set(4, forKey: "z", cost: 1001))
        #expect(cache.statistics == .init(hits: 0, misses: 1, evictions: 0, totalCost: 5, count: 1))
    }

    @Test func zeroCountLimitStoresNothingAndNegativeCostCountsAsZero() {
        let none = makeCache(countLimit: 0)
        #expect(!none.set(1, forKey: "a"))
        #expect(none.count == 0)
        let cache = makeCache(costLimit: 10)
        #expect(cache.set(1, forKey: "a", cost: -50))
        #expect(cache.totalCost == 0)
        cache.set(2, forKey: "b", cost: 10)
        #expect(cache.contains("a") && cache.totalCost == 10)
    }

    @Test func defaultCostLimitIsFifteenPercentOfMemoryCappedAtOneGiB() {
        let physical = ProcessInfo.processInfo.physicalMemory
        let expected = Int(min(physical / 100 * 15, 1 << 30))
        #expect(MemoryCache<String, Int>.Configuration().costLimit == expected)
        #expect(expected > 0)
        #expect(MemoryCache<String, Int>().configuration.entryCostLimitFraction == 0.1)
    }

    // MARK: Age

    @Test func entriesPastTheAgeLimitAreNeverReturned() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(
            configuration: .init(costLimit: 1000, ageLimit: .seconds(10), entryCostLimitFraction: 1),
            clock: { clock.now })
        cache.set(1, forKey: "a", cost: 7)
        clock.advance(by: .seconds(5))
        cache.set(2, forKey: "b", cost: 3)
        clock.advance(by: .seconds(5))           // "a" is exactly 10 s old: still good
        #expect(cache.value(forKey: "a") == 1)   // a hit refreshes recency, not age
        clock.advance(by: .nanoseconds(1))
        #expect(!cache.contains("a"))
        #expect(cache.count == 2)                // contains changes nothing
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.statistics == .init(hits: 1, misses: 1, evictions: 1, totalCost: 3, count: 1))
        #expect(cache.value(forKey: "b") == 2)
    }

    @Test func storingDropsExpiredEntriesAtTheLeastRecentlyUsedEnd() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(configuration: .init(ageLimit: .seconds(1)), clock: { clock.now })
        cache.set(1, forKey: "old1")
        cache.set(2, forKey: "old2")
        clock.advance(by: .seconds(2))
        cache.set(3, forKey: "new")
        #expect(cache.count == 1)
        #expect(cache.statistics.evictions == 2)
    }

    @Test func removeExpiredDropsOnlyExpiredEntriesWhereverTheyAre() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(configuration: .init(ageLimit: .seconds(100)), clock: { clock.now })
        cache.set(1, forKey: "a", cost: 1)
        clock.advance(by: .seconds(50))
        cache.set(2, forKey: "b", cost: 2)
        _ = cache.value(forKey: "a")             // "a" is the most recently used, yet the oldest
        clock.advance(by: .seconds(60))
        cache.removeExpired()
        #expect(!cache.contains("a"))
        #expect(cache.contains("b"))
        #expect(cache.statistics == .init(hits: 1, misses: 0, evictions: 1, totalCost: 2, count: 1))
    }

    @Test func anEntryStoredAfterTheReaderLookedAtTheClockIsNotExpired() {
        // A reader reads the clock before taking the lock; a writer may store in between.
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(configuration: .init(ageLimit: .seconds(1)), clock: { clock.now })
        clock.set(5_000_000_000)
        cache.set(1, forKey: "a")
        clock.set(4_000_000_000)
        #expect(cache.value(forKey: "a") == 1)
    }

    @Test func ageLimitOnTheRealClock() {
        // Fresh: under an age limit that no pause between the store and the read reaches (with
        // a millisecond's limit, the read expects the thread not to be preempted in between).
        let lasting = MemoryCache<String, Int>(configuration: .init(ageLimit: .seconds(3600)))
        lasting.set(1, forKey: "a")
        #expect(lasting.contains("a"))
        // Expired: once the clock has passed a millisecond's limit.
        let cache = MemoryCache<String, Int>(configuration: .init(ageLimit: .milliseconds(1)))
        cache.set(1, forKey: "a")
        let stored = MonotonicClock.coarseNanoseconds()   // not earlier than the entry's stamp
        // Spin, not sleep: the condition is the cache's own clock passing the limit.
        while MonotonicClock.coarseNanoseconds() - stored <= 1_000_000 {}
        #expect(!cache.contains("a"))
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.count == 0)
    }

    // MARK: Trim and removal

    @Test func trimToCostKeepsTheMostRecentlyUsed() {
        let cache = makeCache()
        for index in 0..<10 { cache.set(index, forKey: "k\(index)", cost: 10) }
        _ = cache.value(forKey: "k0")
        cache.trim(toCost: 35)
        #expect(cache.totalCost == 30)
        #expect(cache.contains("k0") && cache.contains("k9") && cache.contains("k8"))
        #expect(!cache.contains("k7") && !cache.contains("k1"))
        #expect(cache.statistics.evictions == 7)
        cache.trim(toCost: 0)
        #expect(cache.count == 0 && cache.totalCost == 0)
        #expect(cache.slotCapacity == 0)         // emptied by a trim: bookkeeping released
    }

    @Test func trimToCountKeepsTheMostRecentlyUsed() {
        let cache = makeCache()
        for index in 0..<10 { cache.set(index, forKey: "k\(index)", cost: index) }
        _ = cache.value(forKey: "k2")
        cache.trim(toCount: 3)
        #expect(cache.count == 3)
        #expect(cache.contains("k2") && cache.contains("k9") && cache.contains("k8"))
        #expect(cache.totalCost == 2 + 9 + 8)
        cache.trim(toCount: 5)                   // already within: nothing happens
        #expect(cache.count == 3)
        #expect(cache.statistics.evictions == 7)
    }

    @Test func removeValueAndRemoveAllAreNotEvictions() {
        let cache = makeCache()
        for index in 0..<5 { cache.set(index, forKey: "k\(index)", cost: 1) }
        #expect(cache.removeValue(forKey: "k3") == 3)
        #expect(cache.removeValue(forKey: "k3") == nil)
        #expect(cache.count == 4 && cache.totalCost == 4)
        _ = cache.value(forKey: "k1")
        cache.removeAll()
        #expect(cache.statistics == .init(hits: 1, misses: 0, evictions: 0, totalCost: 0, count: 0))
        #expect(cache.slotCapacity == 0)
        #expect(!cache.contains("k1"))
        cache.set(7, forKey: "k1")               // usable again afterwards
        #expect(cache.value(forKey: "k1") == 7)
    }

    // MARK: Statistics

    @Test func statisticsAreExactForADeterministicSequence() {
        let cache = makeCache(costLimit: 100, countLimit: 4)
        cache.set(1, forKey: "a", cost: 40)
        cache.set(2, forKey: "b", cost: 40)
        #expect(cache.value(forKey: "a") == 1)   // hit
        #expect(cache.value(forKey: "x") == nil) // miss
        cache.set(3, forKey: "c", cost: 40)      // evicts "b" (cost)
        #expect(cache.value(forKey: "b") == nil) // miss
        cache.set(4, forKey: "d", cost: 1)
        cache.set(5, forKey: "e", cost: 1)
        cache.set(6, forKey: "f", cost: 1)       // evicts "a" (count)
        cache.removeValue(forKey: "d")           // not an eviction
        #expect(cache.value(forKey: "c") == 3)   // hit
        cache.trim(toCount: 1)                   // evicts "e", "f"
        #expect(cache.statistics == .init(hits: 2, misses: 2, evictions: 4, totalCost: 40, count: 1))
        #expect(cache.statistics.hitRatio == 0.5)
        cache.resetStatistics()
        #expect(cache.statistics == .init(hits: 0, misses: 0, evictions: 0, totalCost: 40, count: 1))
    }

    // MARK: Agreement with a reference LRU

    @Test func agreesWithAReferenceLRUOnRandomOperations() {
        checkAgainstReference(keys: (0..<300).map { "https://images.example.com/\($0).jpg" })
    }

    @Test func agreesWithAReferenceLRUWhenHashesCollide() {
        checkAgainstReference(keys: (0..<300).map { CollidingKey(id: $0) })
    }

    private func checkAgainstReference<Key: Hashable & Sendable>(keys: [Key]) {
        var random = SeededGenerator(seed: 42)
        let cache = MemoryCache<Key, Int>(configuration: .init(costLimit: 2_000, countLimit: 120, entryCostLimitFraction: 0.1))
        var model = ReferenceLRU<Key>(costLimit: 2_000, countLimit: 120, entryCostLimit: 200)
        for step in 0..<30_000 {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                let got = cache.value(forKey: key)
                let expected = model.value(forKey: key)
                if got != expected { Issue.record("step \(step): value \(String(describing: got)) ≠ \(String(describing: expected))"); return }
            case 45..<85:
                let cost = Int.random(in: 0...220, using: &random)
                if cache.set(step, forKey: key, cost: cost) != model.set(step, forKey: key, cost: cost) {
                    Issue.record("step \(step): set disagrees"); return
                }
            case 85..<93:
                if cache.removeValue(forKey: key) != model.removeValue(forKey: key) {
                    Issue.record("step \(step): remove disagrees"); return
                }
            case 93..<99:
                if cache.contains(key) != model.contains(key) { Issue.record("step \(step): contains disagrees"); return }
            default:
                let target = Int.random(in: 0...2_000, using: &random)
                cache.trim(toCost: target)
                model.trim(toCost: target)
            }
            if cache.count != model.entries.count || cache.totalCost != model.totalCost {
                Issue.record("step \(step): count \(cache.count)/\(model.entries.count), cost \(cache.totalCost)/\(model.totalCost)")
                return
            }
        }
        // Every entry the model holds is findable, in particular after long probe runs were
        // shifted by removals.
        #expect(model.entries.allSatisfy { cache.contains($0.key) })
        #expect(keys.filter { cache.contains($0) }.count == model.entries.count)
    }

    // MARK: Concurrency and memory

    @Test func manyTasksHammeringOneCacheLeaveItConsistent() async {
        let costLimit = 20_000
        let cache = MemoryCache<String, Int>(configuration: .init(costLimit: costLimit, countLimit: 400, entryCostLimitFraction: 0.05))
        let keys = (0..<1_000).map { "https://cdn.example.com/feed/\($0).webp" }
        let lookups = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(task + 1))
                    var lookups = 0
                    for _ in 0..<20_000 {
                        let key = keys[Int.random(in: 0..<keys.count, using: &random)]
                        switch Int.random(in: 0..<10, using: &random) {
                        case 0..<5:
                            lookups += 1
                            // Each value is its own cost, so a wrong pairing would show below.
                            if let value = cache.value(forKey: key), value < 0 { Issue.record("bad value") }
                        case 5..<9:
                            let cost = Int.random(in: 1...1_000, using: &random)
                            cache.set(cost, forKey: key, cost: cost)
                        default:
                            cache.removeValue(forKey: key)
                        }
                    }
                    return lookups
                }
            }
            return await group.reduce(0, +)
        }
        let statistics = cache.statistics
        #expect(statistics.hits + statistics.misses == lookups)
        #expect(statistics.totalCost <= costLimit)
        #expect(statistics.count <= 400)
        let present = keys.filter { cache.contains($0) }
        #expect(present.count == statistics.count)
        let costs = present.compactMap { cache.value(forKey: $0) }
        #expect(costs.count == present.count)
        #expect(costs.reduce(0, +) == statistics.totalCost)
    }

    @Test func slotsAreReusedSoMemoryStaysBounded() {
        let cache = makeCache(key: Int.self)
        for round in 0..<20_000 {
            for offset in 0..<8 { cache.set(offset, forKey: round * 8 + offset) }
            for offset in 0..<8 { cache.removeValue(forKey: round * 8 + offset) }
        }
        #expect(cache.count == 0)
        #expect(cache.slotCapacity == 8)

        let evicting = makeCache(countLimit: 64, key: Int.self)
        for key in 0..<100_000 { evicting.set(key, forKey: key) }
        #expect(evicting.count == 64)
        #expect(evicting.slotCapacity == 64)
        #expect((100_000 - 64 ..< 100_000).allSatisfy { evicting.value(forKey: $0) == $0 })
    }
}
