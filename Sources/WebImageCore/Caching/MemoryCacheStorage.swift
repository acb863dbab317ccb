/// The state a ``MemoryCache`` keeps behind its mutex: an open-addressing hash index over a
/// contiguous array of entries, which a parallel array of `Int32` links threads into a doubly
/// linked LRU list.
///
/// Why not `[Key: Entry]` plus a linked list of class nodes: a hit would then pay for
/// a hash inside the lock, a retain and release per link it touches, and a pointer chase into a
/// separately allocated node. Here, entries live side by side in `nodes`, links are `Int32`
/// slot numbers in `links` (no reference counting), freed slots are recycled through a free list (memory
/// stays bounded by the peak entry count), and the index stores 32 bits of each key's hash next
/// to its slot number, so
/// - the caller hashes the key *before* taking the lock (the expensive part for URL keys),
/// - a probe rejects almost every non-matching bucket without touching the entry,
/// - evicting an entry never hashes its key again, and growing the index never rehashes.
///
/// The index uses linear probing with backward-shift deletion, so it never holds tombstones
/// and probe lengths stay short however many insertions and removals it has seen.
///
/// Every member is `@inlinable` so that a client module (the image manager, the benchmarks)
/// gets code specialized for its concrete `Key` and `Value`, not generic code that goes through
/// witness tables for every hash, comparison and copy.
@usableFromInline
struct MemoryCacheStorage<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// One cached entry, or a free slot (with `key` and `value` both `nil`).
    @usableFromInline
    struct Node: Sendable {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        /// When the entry was stored, in ``MonotonicClock`` nanoseconds; 0 without an age limit.
        @usableFromInline var insertedAt: UInt64
        /// The low 32 bits of the key's hash: enough to find the entry's bucket again.
        @usableFromInline var hash: UInt32

        @inlinable
        init(key: Key?, value: Value?, cost: Int, insertedAt: UInt64, hash: UInt32) {
            self.key = key
            self.value = value
            self.cost = cost
            self.insertedAt = insertedAt
            self.hash = hash
        }
    }

    /// A slot's place in the LRU list, kept apart from its ``Node``: a hit rewrites the links
    /// of up to four entries, and keeping those writes off the lines that hold keys and values
    /// means another core's next lookup still finds those lines in its own cache. Eight links
    /// share a cache line, so relinking also touches fewer lines.
    @usableFromInline
    struct Link: Sendable {
        /// Towards the most recently used end; in a free slot, unused.
        @usableFromInline var prev: Int32
        /// Towards the least recently used end; in a free slot, the next free slot.
        @usableFromInline var next: Int32

        @inlinable init(prev: Int32, next: Int32) {
            self.prev = prev
            self.next = next
        }
    }

    /// Values taken out under the lock, handed back so that they are released after it: freeing
    /// a multi-megabyte bitmap inside the critical section would stall every other thread's hit.
    /// Holding the first one inline keeps the common case (one eviction) free of allocation.
    @usableFromInline
    struct Discarded: Sendable {
        @usableFromInline var first: Value?
        @usableFromInline var rest: [Value] = []
        /// A whole slot array, when the cache was emptied.
        @usableFromInline var storage: [Node] = []

        @inlinable init() {}

        @inlinable
        mutating func append(_ value: consuming Value?) {
            guard let value else { return }
            if first == nil {
                first = value
            } else {
                rest.append(value)
            }
        }
    }

    /// Marks the end of a list (LRU or free) and an absent slot.
    @usableFromInline static var none: Int32 { -1 }

    /// The smallest index: 16 buckets. It grows by doubling and only shrinks when emptied.
    @usableFromInline static var minimumBucketCount: Int { 16 }

    /// Entries and free slots. Slot numbers are stable while an entry lives.
    @usableFromInline var nodes: [Node] = []
    /// The LRU list (and the free list), indexed like `nodes`.
    @usableFromInline var links: [Link] = []
    /// The hash index: 0 for an empty bucket, else `(slot + 1) << 32 | hash32`.
    /// At most half full, so an unsuccessful probe inspects about 2.5 buckets on average.
    @usableFromInline var buckets: [UInt64]
    @usableFromInline var bucketMask: Int
    /// Most recently used entry.
    @usableFromInline var head: Int32 = Self.none
    /// Least recently used entry: the next to be evicted.
    @usableFromInline var tail: Int32 = Self.none
    /// First free slot, linked through `links[slot].next`.
    @usableFromInline var freeHead: Int32 = Self.none

    @usableFromInline var count = 0
    @usableFromInline var totalCost = 0
    @usableFromInline var hits = 0
    @usableFromInline var misses = 0
    @usableFromInline var evictions = 0

    @usableFromInline let costLimit: Int
    @usableFromInline let countLimit: Int
    /// Entries costing more than this are refused.
    @usableFromInline let entryCostLimit: Int
    /// In nanoseconds; `nil` when entries never expire.
    @usableFromInline let ageLimit: UInt64?

    @inlinable
    init(costLimit: Int, countLimit: Int, entryCostLimit: Int, ageLimit: UInt64?) {
        self.costLimit = costLimit
        self.countLimit = countLimit
        self.entryCostLimit = entryCostLimit
        self.ageLimit = ageLimit
        self.buckets = Array(repeating: 0, count: Self.minimumBucketCount)
        self.bucketMask = Self.minimumBucketCount - 1
    }

    // MARK: Index

    /// The result of a probe: the entry's bucket and slot when the key is present, otherwise
    /// the empty bucket where it would go (with `slot == none`).
    @usableFromInline
    struct Probe {
        @usableFromInline var bucket: Int
        @usableFromInline var slot: Int32

        @inlinable init(bucket: Int, slot: Int32) {
            self.bucket = bucket
            self.slot = slot
        }

        @inlinable var isFound: Bool { slot >= 0 }
    }

    @inlinable
    static func bucketEntry(slot: Int32, hash: UInt32) -> UInt64 {
        UInt64(UInt32(truncatingIfNeeded: slot &+ 1)) << 32 | UInt64(hash)
    }

    @inlinable
    static func slot(of bucketEntry: UInt64) -> Int32 {
        Int32(truncatingIfNeeded: bucketEntry >> 32) &- 1
    }

    @inlinable
    func probe(_ key: Key, hash: UInt32) -> Probe {
        buckets.withUnsafeBufferPointer { buckets in
            nodes.withUnsafeBufferPointer { nodes in
                var bucket = Int(hash) & bucketMask
                while true {
                    let entry = buckets[bucket]
                    if entry == 0 {
                        return Probe(bucket: bucket, slot: Self.none)
                    }
                    if UInt32(truncatingIfNeeded: entry) == hash {
                        let slot = Self.slot(of: entry)
                        if nodes[Int(slot)].key.unsafelyUnwrapped == key {
                            return Probe(bucket: bucket, slot: slot)
                        }
                    }
                    bucket = (bucket &+ 1) & bucketMask
                }
            }
        }
    }

    /// The bucket holding `slot`, which must be in the index.
    @inlinable
    func bucket(ofSlot slot: Int32) -> Int {
        let wanted = Self.bucketEntry(slot: slot, hash: nodes[Int(slot)].hash)
        return buckets.withUnsafeBufferPointer { buckets in
            var bucket = Int(UInt32(truncatingIfNeeded: wanted)) & bucketMask
            while buckets[bucket] != wanted {
                bucket = (bucket &+ 1) & bucketMask
            }
            return bucket
        }
    }

    /// Empties `bucket` and shifts later members of its probe run back, so that every entry
    /// stays reachable from its ideal bucket without tombstones.
    @inlinable
    mutating func removeBucket(at bucket: Int) {
        let mask = bucketMask
        buckets.withUnsafeMutableBufferPointer { buckets in
            var hole = bucket
            var next = (bucket &+ 1) & mask
            while true {
                let entry = buckets[next]
                if entry == 0 { break }
                let ideal = Int(UInt32(truncatingIfNeeded: entry)) & mask
                // The entry may fill the hole unless its ideal bucket lies after the hole
                // (cyclically, within the run up to `next`).
                if (next &- ideal) & mask >= (next &- hole) & mask {
                    buckets[hole] = entry
                    hole = next
                }
                next = (next &+ 1) & mask
            }
            buckets[hole] = 0
        }
    }

    /// Doubles the index when one more entry would fill it past half. Entries are re-placed from
    /// their stored hash bits; no key is hashed again.
    @inlinable
    mutating func growIndexIfNeeded() -> Bool {
        guard (count &+ 1) &* 2 > buckets.count else { return false }
        let newCount = buckets.count &* 2
        let newMask = newCount &- 1
        var newBuckets = [UInt64](repeating: 0, count: newCount)
        newBuckets.withUnsafeMutableBufferPointer { newBuckets in
            for entry in buckets where entry != 0 {
                var bucket = Int(UInt32(truncatingIfNeeded: entry)) & newMask
                while newBuckets[bucket] != 0 {
                    bucket = (bucket &+ 1) & newMask
                }
                newBuckets[bucket] = entry
            }
        }
        buckets = newBuckets
        bucketMask = newMask
        return true
    }

    /// The first empty bucket on `hash`'s probe path.
    @inlinable
    func emptyBucket(for hash: UInt32) -> Int {
        var bucket = Int(hash) & bucketMask
        while buckets[bucket] != 0 {
            bucket = (bucket &+ 1) & bucketMask
        }
        return bucket
    }

    // MARK: LRU list

    @inlinable
    mutating func unlink(_ slot: Int32) {
        let link = links[Int(slot)]
        if link.prev == Self.none { head = link.next } else { links[Int(link.prev)].next = link.next }
        if link.next == Self.none { tail = link.prev } else { links[Int(link.next)].prev = link.prev }
    }

    @inlinable
    mutating func linkAtHead(_ slot: Int32) {
        links[Int(slot)] = Link(prev: Self.none, next: head)
        if head == Self.none { tail = slot } else { links[Int(head)].prev = slot }
        head = slot
    }

    /// The work of every hit, so written against the raw buffer: one uniqueness and no
    /// bounds check instead of one of each per link.
    @inlinable
    mutating func moveToHead(_ slot: Int32) {
        guard slot != head else { return }
        let head = self.head
        let newTail = links.withUnsafeMutableBufferPointer { links -> Int32? in
            // `slot` is not the head, so it has a predecessor.
            let link = links[Int(slot)]
            links[Int(link.prev)].next = link.next
            links[Int(slot)] = Link(prev: Self.none, next: head)
            links[Int(head)].prev = slot
            if link.next == Self.none { return link.prev }
            links[Int(link.next)].prev = link.prev
            return nil
        }
        if let newTail { tail = newTail }
        self.head = slot
    }

    // MARK: Entries

    @inlinable
    func isExpired(_ slot: Int32, now: UInt64) -> Bool {
        guard let ageLimit else { return false }
        // `now` was read before the lock, so another thread may have stored this entry after
        // it: such an entry is brand new, not 2⁶⁴ nanoseconds old.
        let insertedAt = nodes[Int(slot)].insertedAt
        return now > insertedAt && now - insertedAt > ageLimit
    }

    /// Takes the entry in `slot` (whose bucket is `bucket`) out of the index and the list, frees
    /// the slot, and returns its value.
    @inlinable
    mutating func removeEntry(slot: Int32, bucket: Int) -> Value? {
        removeBucket(at: bucket)
        unlink(slot)
        count -= 1
        totalCost -= nodes[Int(slot)].cost
        nodes[Int(slot)].key = nil
        let value = nodes[Int(slot)].value.take()
        links[Int(slot)].next = freeHead
        freeHead = slot
        return value
    }

    @inlinable
    mutating func evict(_ slot: Int32) -> Value? {
        evictions += 1
        return removeEntry(slot: slot, bucket: bucket(ofSlot: slot))
    }

    /// A slot for a new entry: a recycled one if any, else a new one at the end.
    @inlinable
    mutating func allocateSlot(_ node: consuming Node) -> Int32 {
        if freeHead != Self.none {
            let slot = freeHead
            freeHead = links[Int(slot)].next
            nodes[Int(slot)] = node
            return slot
        }
        precondition(nodes.count < Int(Int32.max), "MemoryCache holds at most Int32.max entries")
        nodes.append(node)
        links.append(Link(prev: Self.none, next: Self.none))
        return Int32(truncatingIfNeeded: nodes.count &- 1)
    }

    /// Evicts least recently used entries until the cache is within its limits, dropping expired
    /// ones at the LRU end first since they could never be returned anyway.
    @inlinable
    mutating func enforceLimits(now: UInt64, into discarded: inout Discarded) {
        while totalCost > costLimit || count > countLimit {
            discarded.append(evict(tail))
        }
        if ageLimit != nil {
            while tail != Self.none, isExpired(tail, now: now) {
                discarded.append(evict(tail))
            }
        }
    }

    // MARK: Operations

    /// The value for `key` if present and fresh; an expired entry found on the way is dropped
    /// and handed back as `expired`, to be released after the lock.
    @inlinable
    mutating func value(forKey key: Key, hash: UInt32, now: UInt64) -> (value: Value?, expired: Value?) {
        let probe = probe(key, hash: hash)
        guard probe.isFound else {
            misses += 1
            return (nil, nil)
        }
        if ageLimit != nil, isExpired(probe.slot, now: now) {
            misses += 1
            evictions += 1
            return (nil, removeEntry(slot: probe.slot, bucket: probe.bucket))
        }
        hits += 1
        moveToHead(probe.slot)
        return (nodes[Int(probe.slot)].value, nil)
    }

    /// Stores `value`; returns whether it was stored, and what must be released after the lock.
    @inlinable
    mutating func set(_ value: consuming Value, forKey key: Key, hash: UInt32, cost: Int, now: UInt64) -> (stored: Bool, discarded: Discarded) {
        var discarded = Discarded()
        let cost = max(cost, 0)
        let accepted = cost <= entryCostLimit && countLimit > 0
        let probe = probe(key, hash: hash)
        if probe.isFound {
            let slot = probe.slot
            guard accepted else {
                discarded.append(removeEntry(slot: slot, bucket: probe.bucket))
                return (false, discarded)
            }
            discarded.append(nodes[Int(slot)].value.take())
            nodes[Int(slot)].value = value
            totalCost += cost - nodes[Int(slot)].cost
            nodes[Int(slot)].cost = cost
            nodes[Int(slot)].insertedAt = now
            moveToHead(slot)
            // The entry is at the head and fits the limits alone (its cost is at most
            // `entryCostLimit <= costLimit`), so eviction stops before reaching it.
            enforceLimits(now: now, into: &discarded)
            return (true, discarded)
        }
        guard accepted else { return (false, discarded) }
        // Make room first, so that the cache never exceeds its limits, even briefly, and never
        // needs more slots than its count limit.
        var bucket = probe.bucket
        var moved = false
        while totalCost > costLimit - cost || count >= countLimit {
            discarded.append(evict(tail))
            moved = true
        }
        if ageLimit != nil {
            while tail != Self.none, isExpired(tail, now: now) {
                discarded.append(evict(tail))
                moved = true
            }
        }
        if growIndexIfNeeded() { moved = true }
        // A removal shifts buckets back and may open an earlier gap on this key's probe path;
        // the new entry must go in the first one or lookups would stop short of it.
        if moved { bucket = emptyBucket(for: hash) }
        let slot = allocateSlot(Node(key: key, value: value, cost: cost, insertedAt: now, hash: hash))
        buckets[bucket] = Self.bucketEntry(slot: slot, hash: hash)
        linkAtHead(slot)
        count += 1
        totalCost += cost
        return (true, discarded)
    }

    @inlinable
    mutating func removeValue(forKey key: Key, hash: UInt32) -> Value? {
        let probe = probe(key, hash: hash)
        guard probe.isFound else { return nil }
        return removeEntry(slot: probe.slot, bucket: probe.bucket)
    }

    @inlinable
    func contains(_ key: Key, hash: UInt32, now: UInt64) -> Bool {
        let probe = probe(key, hash: hash)
        return probe.isFound && !isExpired(probe.slot, now: now)
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    @inlinable
    mutating func trim(toCost cost: Int) -> Discarded {
        var discarded = Discarded()
        while totalCost > cost, tail != Self.none {
            discarded.append(evict(tail))
        }
        if count == 0 { discarded.storage = releaseStorage() }
        return discarded
    }

    /// Evicts least recently used entries until at most `limit` remain.
    @inlinable
    mutating func trim(toCount limit: Int) -> Discarded {
        var discarded = Discarded()
        while count > limit, tail != Self.none {
            discarded.append(evict(tail))
        }
        if count == 0 { discarded.storage = releaseStorage() }
        return discarded
    }

    /// Evicts every expired entry, wherever it sits in the LRU order.
    @inlinable
    mutating func removeExpired(now: UInt64) -> Discarded {
        var discarded = Discarded()
        guard ageLimit != nil else { return discarded }
        var slot = tail
        while slot != Self.none {
            let towardsHead = links[Int(slot)].prev
            if isExpired(slot, now: now) {
                discarded.append(evict(slot))
            }
            slot = towardsHead
        }
        return discarded
    }

    /// Forgets every entry (not counted as evictions) and resets the slot and index arrays to
    /// their initial size. Returns the old slot array, entries and all, so that the caller
    /// releases it after the lock.
    @inlinable
    mutating func releaseStorage() -> [Node] {
        let old = nodes
        nodes = []
        links = []
        buckets = Array(repeating: 0, count: Self.minimumBucketCount)
        bucketMask = Self.minimumBucketCount - 1
        head = Self.none
        tail = Self.none
        freeHead = Self.none
        count = 0
        totalCost = 0
        return old
    }
}
