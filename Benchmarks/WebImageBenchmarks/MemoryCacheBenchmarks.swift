import Foundation
import Synchronization
import WebImageCore

/// `MemoryCache` beside its references: a bare `Dictionary` under a `Mutex` (the floor for a
/// hit: one hash lookup under one lock), Foundation's `NSCache`, and an exact-LRU simulation
/// for eviction quality.
func runMemoryCacheBenchmarks(_ report: Report) {
    hitBenchmarks(report)
    concurrentHitBenchmark(report)
    for entries in [1_000, 20_000, 100_000] {
        insertWithEvictionBenchmark(report, entries: entries)
    }
    hitRatioBenchmark(report)
}

// MARK: - Fixtures

/// Stands in for a decoded image: a reference, so that every hit pays the retain a real
/// cached value costs.
private final class CachedImage: Sendable {
    let cost: Int
    init(cost: Int) { self.cost = cost }
}

/// SplitMix64: seeded, so that every run measures the same keys, orders and traces.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A realistic cache key: an image URL of about 60 characters, e.g.
/// `https://cdn.example.com/photos/2024/3f9a0c21d4e5b677/000042.jpg`.
private func imageURL(_ index: Int, _ random: inout SplitMix64) -> String {
    let hex = String(random.next(), radix: 16)
    let number = String(index)
    return "https://cdn.example.com/photos/2024/\(String(repeating: "0", count: 16 - hex.count) + hex)/\(String(repeating: "0", count: max(0, 6 - number.count)) + number).jpg"
}

/// An equal string in storage of its own: an app builds its key from the URL on every lookup,
/// so a lookup never finds its key by pointer identity.
private func freshCopy(_ string: String) -> String {
    String(decoding: Array(string.utf8), as: UTF8.self)
}

/// The floor a hit is measured against: what any thread-safe cache must at least do.
private final class DictionaryUnderMutex<Key: Hashable & Sendable>: Sendable {
    let storage = Mutex<[Key: CachedImage]>([:])

    @inline(__always)
    func value(forKey key: Key) -> CachedImage? {
        storage.withLock { $0[key] }
    }
}

/// Like the harness's `nanosecondsPerOperation`, for two bodies measured in alternating
/// rounds: on a 2-core machine shared with other work, a neighbour's burst then slows both
/// sides alike instead of whichever happened to run during it. Medians of each side.
private func interleavedNanosecondsPerOperation(
    operations: Int, rounds: Int = 21, _ ours: () -> Void, _ reference: () -> Void
) -> (ours: Double, reference: Double) {
    ours()
    reference()
    var oursSamples: [Double] = []
    var referenceSamples: [Double] = []
    for round in 0..<rounds {
        // Alternate which side goes first, so neither always runs on a cache warmed by the other.
        for side in round % 2 == 0 ? [0, 1] : [1, 0] {
            let start = now()
            side == 0 ? ours() : reference()
            let sample = Double(now() - start) / Double(operations)
            if side == 0 { oursSamples.append(sample) } else { referenceSamples.append(sample) }
        }
    }
    oursSamples.sort()
    referenceSamples.sort()
    return (oursSamples[rounds / 2], referenceSamples[rounds / 2])
}

/// Runs `body(thread)` on `count` new threads at once and returns when all have finished.
private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}

// MARK: - Hits

/// 1,000 entries (a realistic population of decoded images), looked up in a random order.
private let hitEntries = 1_000
private let hitLookups = 100_000

private struct HitFixture<Key: Hashable & Sendable>: Sendable {
    var keys: [Key]
    var lookupKeys: [Key]
    var images: [CachedImage]
    var order: [Int32]
}

private func hitFixture<Key: Hashable & Sendable>(seed: UInt64, key: (Int, inout SplitMix64) -> Key, copy: (Key) -> Key) -> HitFixture<Key> {
    var random = SplitMix64(seed: seed)
    let keys = (0..<hitEntries).map { key($0, &random) }
    return HitFixture(
        keys: keys,
        lookupKeys: keys.map(copy),
        images: (0..<hitEntries).map { CachedImage(cost: $0) },
        order: (0..<hitLookups).map { _ in Int32.random(in: 0..<Int32(hitEntries), using: &random) }
    )
}

@inline(never)
private func lookUp<Key>(_ cache: MemoryCache<Key, CachedImage>, _ keys: [Key], _ order: [Int32]) {
    var sum = 0
    for index in order {
        if let image = cache.value(forKey: keys[Int(index)]) { sum &+= image.cost }
    }
    blackHole(sum)
}

@inline(never)
private func lookUp<Key>(_ cache: DictionaryUnderMutex<Key>, _ keys: [Key], _ order: [Int32]) {
    var sum = 0
    for index in order {
        if let image = cache.value(forKey: keys[Int(index)]) { sum &+= image.cost }
    }
    blackHole(sum)
}

@inline(never)
private func lookUp(_ cache: NSCache<NSString, CachedImage>, _ keys: [NSString], _ order: [Int32]) {
    var sum = 0
    for index in order {
        if let image = cache.object(forKey: keys[Int(index)]) { sum &+= image.cost }
    }
    blackHole(sum)
}

private func filled<Key>(_ fixture: HitFixture<Key>, _ configuration: MemoryCache<Key, CachedImage>.Configuration = .init()) -> MemoryCache<Key, CachedImage> {
    let cache = MemoryCache<Key, CachedImage>(configuration: configuration)
    for (key, image) in zip(fixture.keys, fixture.images) { cache.set(image, forKey: key, cost: 1) }
    return cache
}

private func filledDictionary<Key>(_ fixture: HitFixture<Key>) -> DictionaryUnderMutex<Key> {
    let dictionary = DictionaryUnderMutex<Key>()
    dictionary.storage.withLock { storage in
        for (key, image) in zip(fixture.keys, fixture.images) { storage[key] = image }
    }
    return dictionary
}

private func hitBenchmarks(_ report: Report) {
    let urls = hitFixture(seed: 1, key: imageURL, copy: freshCopy)
    let cache = filled(urls)
    let dictionary = filledDictionary(urls)
    let (ours, floor) = interleavedNanosecondsPerOperation(operations: hitLookups) {
        lookUp(cache, urls.lookupKeys, urls.order)
    } _: {
        lookUp(dictionary, urls.lookupKeys, urls.order)
    }
    report.add(BenchmarkRow(group: "memory", name: "hit, 1 thread, URL keys (1k entries)", ours: ours, reference: floor,
                            referenceName: "Dictionary + Mutex", unit: "ns", goal: .ratioAtMost(1.5)))

    let ints = hitFixture(seed: 2, key: { _, random in Int(truncatingIfNeeded: random.next()) }, copy: { $0 })
    let intCache = filled(ints)
    let intDictionary = filledDictionary(ints)
    let (oursInt, floorInt) = interleavedNanosecondsPerOperation(operations: hitLookups) {
        lookUp(intCache, ints.lookupKeys, ints.order)
    } _: {
        lookUp(intDictionary, ints.lookupKeys, ints.order)
    }
    report.add(BenchmarkRow(group: "memory", name: "hit, 1 thread, Int keys (1k entries)", ours: oursInt, reference: floorInt,
                            referenceName: "Dictionary + Mutex", unit: "ns", goal: .none))

    // NSCache is measured on its own cost: its keys are bridged to NSString beforehand,
    // which an app would otherwise pay on every lookup.
    let nsCache = NSCache<NSString, CachedImage>()
    for (key, image) in zip(urls.keys, urls.images) { nsCache.setObject(image, forKey: NSString(string: key), cost: 1) }
    let nsKeys = urls.lookupKeys.map { NSString(string: $0) }
    let nsCacheHit = nanosecondsPerOperation(operations: hitLookups) { lookUp(nsCache, nsKeys, urls.order) }
    report.add(BenchmarkRow(group: "memory", name: "hit, 1 thread, URL keys (1k entries)", ours: ours, reference: nsCacheHit,
                            referenceName: "NSCache", unit: "ns", goal: .none))

    // With an age limit, every hit also reads the coarse monotonic clock.
    let aged = filled(urls, .init(ageLimit: .seconds(3600)))
    let (oursAged, oursUnaged) = interleavedNanosecondsPerOperation(operations: hitLookups) {
        lookUp(aged, urls.lookupKeys, urls.order)
    } _: {
        lookUp(cache, urls.lookupKeys, urls.order)
    }
    report.add(BenchmarkRow(group: "memory", name: "hit, 1 thread, URL keys, with age limit", ours: oursAged, reference: oursUnaged,
                            referenceName: "MemoryCache, no age limit", unit: "ns", goal: .none))
}

/// Two threads look up at the same time, each its own random order of the same keys; the
/// figure is wall-clock time over all lookups of both, so perfect scaling would halve it.
private func concurrentHitBenchmark(_ report: Report) {
    let urls = hitFixture(seed: 1, key: imageURL, copy: freshCopy)
    var random = SplitMix64(seed: 3)
    let orders = (0..<2).map { _ in (0..<hitLookups).map { _ in Int32.random(in: 0..<Int32(hitEntries), using: &random) } }
    let cache = filled(urls)
    let dictionary = filledDictionary(urls)
    let (ours, floor) = interleavedNanosecondsPerOperation(operations: 2 * hitLookups) {
        onThreads(2) { lookUp(cache, urls.lookupKeys, orders[$0]) }
    } _: {
        onThreads(2) { lookUp(dictionary, urls.lookupKeys, orders[$0]) }
    }
    report.add(BenchmarkRow(group: "memory", name: "hit, 2 threads, URL keys (1k entries)", ours: ours, reference: floor,
                            referenceName: "Dictionary + Mutex, 2 threads", unit: "ns", goal: .ratioAtMost(1.5)))
}

// MARK: - Insertion with eviction

/// The cache holds `entries` entries (its count limit) and every insertion brings a new key,
/// so every insertion evicts one. Keys cycle through twice the capacity, so the key being
/// inserted is always one evicted long ago. Costs vary like image sizes (10 KB to 4 MB).
private func insertWithEvictionBenchmark(_ report: Report, entries: Int) {
    var random = SplitMix64(seed: UInt64(entries))
    let cycle = 2 * entries
    let keys = (0..<cycle).map { imageURL($0, &random) }
    let costs = (0..<cycle).map { _ in Int.random(in: 10_000...4_000_000, using: &random) }
    let images = costs.map { CachedImage(cost: $0) }
    let label = entries >= 1_000 ? "\(entries / 1_000)k" : "\(entries)"
    let name = "insert + evict, \(label) entries"

    let operations = 50_000
    let cache = MemoryCache<String, CachedImage>(configuration: .init(costLimit: .max, countLimit: entries, entryCostLimitFraction: 1))
    for index in 0..<entries { cache.set(images[index], forKey: keys[index], cost: costs[index]) }
    // The floor: a dictionary that drops the key inserted `entries` insertions ago.
    let dictionary = DictionaryUnderMutex<String>()
    dictionary.storage.withLock { storage in
        for index in 0..<entries { storage[keys[index]] = images[index] }
    }
    var next = entries
    var nextInDictionary = entries
    let (ours, floor) = interleavedNanosecondsPerOperation(operations: operations, rounds: 11) {
        insert(into: cache, keys, images, costs, from: &next, count: operations)
    } _: {
        insert(into: dictionary, keys, images, entries: entries, from: &nextInDictionary, count: operations)
    }

    // NSCache keeps its entries in a list sorted by cost and walks it on every insertion,
    // so it gets few operations. It is filled in descending cost order, which its walk
    // handles in constant time; the measured insertions then have random costs like ours.
    let nsKeys = keys.map { NSString(string: $0) }
    let nsCache = NSCache<NSString, CachedImage>()
    nsCache.countLimit = entries
    for index in (0..<entries).sorted(by: { costs[$0] > costs[$1] }) {
        nsCache.setObject(images[index], forKey: nsKeys[index], cost: costs[index])
    }
    let nsOperations = max(50, 2_000_000 / entries)
    next = entries
    let nsCacheInsert = nanosecondsPerOperation(operations: nsOperations, rounds: 5) {
        insert(into: nsCache, nsKeys, images, costs, from: &next, count: nsOperations)
    }

    report.add(BenchmarkRow(group: "memory", name: name, ours: ours, reference: nsCacheInsert, referenceName: "NSCache",
                            unit: "ns", goal: entries == 20_000 ? .ratioAtMost(0.1) : .none))
    report.add(BenchmarkRow(group: "memory", name: name, ours: ours, reference: floor,
                            referenceName: "Dictionary + Mutex, insert + remove", unit: "ns", goal: .none))
}

@inline(never)
private func insert(into cache: MemoryCache<String, CachedImage>, _ keys: [String], _ images: [CachedImage], _ costs: [Int], from next: inout Int, count: Int) {
    for _ in 0..<count {
        let index = next % keys.count
        cache.set(images[index], forKey: keys[index], cost: costs[index])
        next += 1
    }
}

@inline(never)
private func insert(into cache: DictionaryUnderMutex<String>, _ keys: [String], _ images: [CachedImage], entries: Int, from next: inout Int, count: Int) {
    for _ in 0..<count {
        let index = next % keys.count
        let old = (next - entries) % keys.count
        cache.storage.withLock { storage in
            storage[keys[index]] = images[index]
            storage.removeValue(forKey: keys[old])
        }
        next += 1
    }
}

@inline(never)
private func insert(into cache: NSCache<NSString, CachedImage>, _ keys: [NSString], _ images: [CachedImage], _ costs: [Int], from next: inout Int, count: Int) {
    for _ in 0..<count {
        let index = next % keys.count
        cache.setObject(images[index], forKey: keys[index], cost: costs[index])
        next += 1
    }
}

// MARK: - Eviction quality

/// A user scrolling an image feed, as the requests an app makes of its memory cache.
///
/// The model:
/// - A feed of 5,000 posts. Each has a photo (decoded at display size: 320–720 px wide,
///   aspect 9:16 to 4:3, 4 bytes a pixel, so 0.2–2.8 MB) and its author's avatar (144×144,
///   81 KB). 400 authors post with Zipf-distributed frequency (exponent 1), so a few avatars
///   recur constantly and most rarely.
/// - The screen shows 12 posts. When a post comes into view, the app asks the cache for its
///   photo and avatar (`value(forKey:)`); on a miss it downloads and stores them (`set`).
///   After every move, the prefetcher looks at the 12 posts beyond the screen in the
///   direction of scrolling and stores those the cache does not hold (`contains`, then
///   `set`); it never counts as a hit or a miss.
/// - Each of 15,000 steps the user: scrolls forward 1–4 posts (68 %), flings forward
///   10–40 (8 %), scrolls back 1–15 (13 %), jumps back to the top (0.5 %), or pauses
///   (the rest). At the end of the feed the user goes back to the top.
/// - The cache holds 200 average photos' worth of cost.
///
/// The hit ratio is the share of `value(forKey:)` calls that hit.
private struct ScrollTrace {
    struct Image {
        var url: String
        var cost: Int
    }

    enum Event {
        /// Came into view: a lookup, then a store on a miss.
        case display(Int)
        /// Prefetched: a store if the cache does not hold it.
        case prefetch(Int)
    }

    var images: [Image] = []
    var events: [Event] = []
    var costLimit = 0

    static let posts = 5_000
    static let authors = 400
    static let visible = 12
    static let prefetchDistance = 12
    static let steps = 15_000

    init(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let aspects = [0.5625, 0.75, 1.0, 1.25, 1.333]
        for post in 0..<Self.posts {
            let width = Int.random(in: 320...720, using: &random)
            let height = Int(Double(width) * aspects[Int.random(in: 0..<aspects.count, using: &random)])
            images.append(Image(url: imageURL(post, &random), cost: width * height * 4))
        }
        let photoCost = images.reduce(0) { $0 + $1.cost } / Self.posts
        costLimit = 200 * photoCost
        for author in 0..<Self.authors {
            images.append(Image(url: imageURL(1_000_000 + author, &random), cost: 144 * 144 * 4))
        }
        var zipf: [Double] = []
        var total = 0.0
        for rank in 1...Self.authors {
            total += 1 / Double(rank)
            zipf.append(total)
        }
        let authorOfPost = (0..<Self.posts).map { _ in
            let draw = Double.random(in: 0..<total, using: &random)
            return Self.posts + (zipf.firstIndex { $0 > draw } ?? Self.authors - 1)
        }

        func show(_ post: Int) {
            events.append(.display(post))
            events.append(.display(authorOfPost[post]))
        }
        func prefetch(_ post: Int) {
            guard (0..<Self.posts).contains(post) else { return }
            events.append(.prefetch(post))
            events.append(.prefetch(authorOfPost[post]))
        }

        var top = 0
        for post in 0..<Self.visible { show(post) }
        for post in Self.visible..<(Self.visible + Self.prefetchDistance) { prefetch(post) }
        let lastTop = Self.posts - Self.visible
        for _ in 0..<Self.steps {
            let action = Int.random(in: 0..<1_000, using: &random)
            var newTop: Int
            switch action {
            case 0..<680: newTop = top + Int.random(in: 1...4, using: &random)
            case 680..<760: newTop = top + Int.random(in: 10...40, using: &random)
            case 760..<890: newTop = top - Int.random(in: 1...15, using: &random)
            case 890..<895: newTop = 0
            default: newTop = top
            }
            if top == lastTop && newTop > top { newTop = 0 }
            newTop = min(max(newTop, 0), lastTop)
            guard newTop != top else { continue }
            let old = top..<(top + Self.visible)
            let now = newTop..<(newTop + Self.visible)
            if newTop > top {
                for post in now where !old.contains(post) { show(post) }
                for post in now.upperBound..<(now.upperBound + Self.prefetchDistance) { prefetch(post) }
            } else {
                for post in now.reversed() where !old.contains(post) { show(post) }
                for post in stride(from: now.lowerBound - 1, through: now.lowerBound - Self.prefetchDistance, by: -1) {
                    prefetch(post)
                }
            }
            top = newTop
        }
    }
}

/// Exact LRU by definition, for reference: each entry carries the time of its last use, and
/// eviction scans for the oldest. Slow and obviously right.
private struct SimulatedLRU {
    var entries: [Int: (lastUse: Int, cost: Int)] = [:]
    var time = 0
    var totalCost = 0
    let costLimit: Int

    mutating func value(forKey key: Int) -> Bool {
        time += 1
        guard entries[key] != nil else { return false }
        entries[key]!.lastUse = time
        return true
    }

    func contains(_ key: Int) -> Bool { entries[key] != nil }

    mutating func set(_ key: Int, cost: Int) {
        time += 1
        if let old = entries.removeValue(forKey: key) { totalCost -= old.cost }
        while totalCost + cost > costLimit, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            totalCost -= oldest.value.cost
            entries.removeValue(forKey: oldest.key)
        }
        entries[key] = (time, cost)
        totalCost += cost
    }
}

private func hitRatioBenchmark(_ report: Report) {
    let trace = ScrollTrace(seed: 2024)

    let cache = MemoryCache<String, CachedImage>(configuration: .init(costLimit: trace.costLimit))
    let values = trace.images.map { CachedImage(cost: $0.cost) }
    var displays = 0
    for event in trace.events {
        switch event {
        case .display(let index):
            displays += 1
            if cache.value(forKey: trace.images[index].url) == nil {
                cache.set(values[index], forKey: trace.images[index].url, cost: trace.images[index].cost)
            }
        case .prefetch(let index):
            if !cache.contains(trace.images[index].url) {
                cache.set(values[index], forKey: trace.images[index].url, cost: trace.images[index].cost)
            }
        }
    }
    let statistics = cache.statistics
    precondition(statistics.hits + statistics.misses == displays)
    let ours = 100 * statistics.hitRatio

    var lru = SimulatedLRU(costLimit: trace.costLimit)
    var lruHits = 0
    for event in trace.events {
        switch event {
        case .display(let index):
            if lru.value(forKey: index) { lruHits += 1 } else { lru.set(index, cost: trace.images[index].cost) }
        case .prefetch(let index):
            if !lru.contains(index) { lru.set(index, cost: trace.images[index].cost) }
        }
    }
    let reference = 100 * Double(lruHits) / Double(displays)
    report.add(BenchmarkRow(group: "memory", name: "hit ratio, scroll trace (\(displays / 1_000)k lookups)", ours: ours, reference: reference,
                            referenceName: "exact LRU (simulated)", unit: "%", goal: .differenceAtLeast(-1.0)))

    let nsCache = NSCache<NSString, CachedImage>()
    nsCache.totalCostLimit = trace.costLimit
    let nsKeys = trace.images.map { NSString(string: $0.url) }
    var nsHits = 0
    for event in trace.events {
        switch event {
        case .display(let index):
            if nsCache.object(forKey: nsKeys[index]) != nil {
                nsHits += 1
            } else {
                nsCache.setObject(values[index], forKey: nsKeys[index], cost: trace.images[index].cost)
            }
        case .prefetch(let index):
            if nsCache.object(forKey: nsKeys[index]) == nil {
                nsCache.setObject(values[index], forKey: nsKeys[index], cost: trace.images[index].cost)
            }
        }
    }
    report.add(BenchmarkRow(group: "memory", name: "hit ratio, scroll trace (\(displays / 1_000)k lookups)", ours: ours,
                            reference: 100 * Double(nsHits) / Double(displays), referenceName: "NSCache", unit: "%", goal: .none))
}
