import Foundation
import Synchronization
import Testing
import WebImageTestSupport
@_spi(Testing) @testable import WebImageCore

/// Wall-clock milliseconds the tests move by hand, so age and expiry are checked without waiting. (Waiting for
/// real time would work too, but would make the tests slow; nothing else about time is faked.)
private final class WallClock: Sendable {
    private let milliseconds = Atomic<Int64>(1_700_000_000_000)
    func now() -> Int64 { milliseconds.load(ordering: .relaxed) }
    func advance(by duration: Duration) { milliseconds.add(duration.milliseconds, ordering: .relaxed) }
}

@Suite struct DiskCacheTests {
    let directory = TemporaryDirectory("disk")
    private let clock = WallClock()

    func makeCache(limit: Int = 1 << 30, ageLimit: Duration? = nil, lowWater: Double = 0.8) throws -> DiskCache {
        var configuration = DiskCache.Configuration()
        configuration.sizeLimit = limit
        configuration.ageLimit = ageLimit
        configuration.lowWaterFraction = lowWater
        configuration.sweepsOnOpen = false
        let clock = clock
        configuration.now = { clock.now() }
        return try DiskCache(directory: directory.url, configuration: configuration)
    }

    /// Every entry file in the cache directory, with its size.
    func entryFiles() -> [String: Int] {
        var files: [String: Int] = [:]
        let data = directory.url.appendingPathComponent("v1/data")
        for shard in (try? FileManager.default.contentsOfDirectory(atPath: data.path)) ?? [] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent(shard).path)) ?? [] {
                let path = data.appendingPathComponent(shard).appendingPathComponent(name).path
                files[name] = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
            }
        }
        return files
    }

    func filePath(forKey key: String) -> String {
        let name = DiskCacheDigest(key: ImageCacheKey(key)).fileName
        return directory.url.appendingPathComponent("v1/data/\(name.prefix(2))/\(name)").path
    }

    // MARK: Basics

    @Test func storesAndReadsBackBytesWithMetadata() async throws {
        defer { directory.remove() }
        let cache = try makeCache()
        let bytes = testPayload(forKey: "a", size: 5000)
        let expiry = Date(timeIntervalSince1970: 1_800_000_000)
        let metadata = DiskCache.Metadata(contentType: "image/png", url: "https://example.com/a.png", etag: "\"v1\"",
                                          lastModified: "Tue, 01 Jan 2030 00:00:00 GMT", expiresAt: expiry)
        try await cache.store(bytes, forKey: "a", metadata: metadata)

        let entry = try #require(await cache.entry(forKey: "a"))
        #expect(entry.data == bytes)
        #expect(entry.key == "a")
        #expect(entry.metadata == metadata)
        #expect(milliseconds(entry.storedAt) == clock.now())
        #expect(entry.size > bytes.count)
        #expect(await cache.data(forKey: "a") == bytes)
        #expect(cache.contains("a"))
        #expect(cache.count == 1)
        #expect(cache.totalSize == entry.size)
        #expect(entryFiles()[DiskCacheDigest(key: "a").fileName] == entry.size)
    }

    @Test func fileNamesAreShardedSHA256OfTheKey() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        try cache.blocking.store(Data([1, 2, 3]), forKey: "abc")
        // SHA-256("abc"), from FIPS 180-2's test vectors.
        let expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("v1/data/ba/\(expected)").path))
    }

    @Test func replacingAnEntryKeepsOneFileAndTheRightTotal() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        try cache.blocking.store(testPayload(forKey: "k", size: 3000), forKey: "k")
        try cache.blocking.store(testPayload(forKey: "k2", size: 100), forKey: "k")
        #expect(cache.blocking.data(forKey: "k") == testPayload(forKey: "k2", size: 100))
        #expect(cache.count == 1)
        #expect(cache.totalSize == entryFiles().values.reduce(0, +))
    }

    @Test func aMissIsAnsweredByTheIndexWithoutTouchingTheFileSystem() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        try cache.blocking.store(Data([1]), forKey: "present")
        let before = cache.statistics
        for index in 0..<100 { #expect(cache.blocking.data(forKey: "absent-\(index)") == nil) }
        #expect(!cache.contains("absent-0"))
        let after = cache.statistics
        #expect(after.misses == before.misses + 100)
        #expect(after.fileSystemReads == before.fileSystemReads)
        #expect(cache.blocking.data(forKey: "present") == Data([1]))
        #expect(cache.statistics.fileSystemReads == before.fileSystemReads + 1)
    }

    @Test func removeAndRemoveAll() async throws {
        defer { directory.remove() }
        let cache = try makeCache()
        for key in ["a", "b", "c"] { try await cache.store(Data(key.utf8), forKey: ImageCacheKey(key)) }
        await cache.removeEntry(forKey: "b")
        #expect(await cache.data(forKey: "b") == nil)
        #expect(cache.count == 2)
        try await cache.removeAll()
        #expect(cache.count == 0 && cache.totalSize == 0)
        #expect(entryFiles().isEmpty)
        #expect(await cache.data(forKey: "a") == nil)
        try await cache.store(Data([9]), forKey: "after")
        #expect(await cache.data(forKey: "after") == Data([9]))
    }

    @Test func anEntryLargerThanTheCacheIsRefused() throws {
        defer { directory.remove() }
        let cache = try makeCache(limit: 1000)
        #expect(throws: ImageError.self) { try cache.blocking.store(Data(count: 2000), forKey: "huge") }
        #expect(cache.count == 0 && entryFiles().isEmpty)
    }

    // MARK: Limits, enforced on write

    @Test func sizeLimitEvictsLeastRecentlyUsedDownToTheLowWaterMark() throws {
        defer { directory.remove() }
        let probeSize = try { () throws -> Int in
            let cache = try makeCache()
            // Same key length as the entries below: the key is part of an entry's size.
            try cache.blocking.store(testPayload(forKey: "zz", size: 1000), forKey: "zz")
            defer { try? cache.blocking.removeAll() }
            return cache.totalSize
        }()
        let limit = probeSize * 10
        let cache = try makeCache(limit: limit, lowWater: 0.5)
        for index in 0..<10 {
            let key = "k\(index)"
            try cache.blocking.store(testPayload(forKey: key, size: 1000), forKey: ImageCacheKey(key))
            clock.advance(by: .seconds(1))
        }
        #expect(cache.count == 10 && cache.totalSize == limit)
        // Use the oldest three, so the next oldest become the least recently used.
        for key in ["k0", "k1", "k2"] {
            #expect(cache.blocking.data(forKey: ImageCacheKey(key)) != nil)
            clock.advance(by: .seconds(1))
        }
        try cache.blocking.store(testPayload(forKey: "kn", size: 1000), forKey: "kn")  // over the limit
        #expect(cache.totalSize <= limit / 2)
        #expect(cache.count == 5)
        let survivors = Set((0..<10).map { "k\($0)" }.filter { cache.contains($0) })
        #expect(survivors == ["k0", "k1", "k2", "k9"])
        #expect(cache.contains("kn"))
        #expect(cache.statistics.evictions == 6)
        #expect(entryFiles().count == 5)
        #expect(cache.totalSize == entryFiles().values.reduce(0, +))
    }

    @Test func trimToSize() async throws {
        defer { directory.remove() }
        let cache = try makeCache()
        for index in 0..<8 {
            try await cache.store(testPayload(forKey: "\(index)", size: 500), forKey: "\(index)")
            clock.advance(by: .seconds(1))
        }
        let oneEntry = cache.totalSize / 8
        await cache.trim(toSize: oneEntry * 3)
        #expect(cache.count == 3)
        #expect((5..<8).allSatisfy { cache.contains("\($0)") })
        await cache.trim(toSize: 0)
        #expect(cache.count == 0 && entryFiles().isEmpty)
    }

    @Test func expiredEntriesAreNeverReturnedAndAreRemovedOnWrite() throws {
        defer { directory.remove() }
        let cache = try makeCache(ageLimit: .seconds(3600))
        try cache.blocking.store(Data([1]), forKey: "old")
        let soon = date(milliseconds: clock.now() + 10_000)
        try cache.blocking.store(Data([2]), forKey: "short", metadata: .init(expiresAt: soon))
        #expect(cache.blocking.data(forKey: "short") == Data([2]))

        clock.advance(by: .seconds(11))  // past "short"'s own expiry, within the age limit
        #expect(cache.blocking.data(forKey: "short") == nil)
        #expect(cache.blocking.data(forKey: "old") == Data([1]))

        clock.advance(by: .seconds(3600))  // past the age limit
        try cache.blocking.store(Data([3]), forKey: "fresh")  // a write sweeps expired entries
        #expect(!cache.contains("old"))
        #expect(cache.blocking.data(forKey: "old") == nil)
        #expect(cache.blocking.data(forKey: "fresh") == Data([3]))
        #expect(entryFiles().count == 1)
    }

    @Test func cacheControlGivesTheExpiry() {
        let now = Date(timeIntervalSince1970: 1000)
        #expect(DiskCache.Metadata.expiration(cacheControl: "public, max-age=60", now: now) == Date(timeIntervalSince1970: 1060))
        #expect(DiskCache.Metadata.expiration(cacheControl: "max-age=60, s-maxage=600", now: now) == Date(timeIntervalSince1970: 1600))
        #expect(DiskCache.Metadata.expiration(cacheControl: "no-store", now: now) == now)
        #expect(DiskCache.Metadata.expiration(cacheControl: "public", now: now) == nil)
        #expect(DiskCache.Metadata.expiration(cacheControl: "max-age=-5", now: now) == now)
    }

    // MARK: Surviving what happens to files

    @Test func persistsAcrossReopen() throws {
        defer { directory.remove() }
        do {
            let cache = try makeCache()
            for index in 0..<50 { try cache.blocking.store(testPayload(forKey: "\(index)", size: 100 + index), forKey: "\(index)") }
            cache.blocking.removeEntry(forKey: "7")
            #expect(cache.blocking.data(forKey: "3") != nil)
        }
        let reopened = try makeCache()
        #expect(reopened.count == 49)
        #expect(reopened.totalSize == entryFiles().values.reduce(0, +))
        for index in 0..<50 where index != 7 {
            #expect(reopened.blocking.data(forKey: "\(index)") == testPayload(forKey: "\(index)", size: 100 + index))
        }
        #expect(reopened.blocking.data(forKey: "7") == nil)
    }

    @Test func rebuildsTheIndexFromTheFilesWhenTheJournalIsLost() throws {
        defer { directory.remove() }
        do {
            let cache = try makeCache()
            for index in 0..<20 { try cache.blocking.store(testPayload(forKey: "\(index)", size: 300), forKey: "\(index)") }
        }
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent("v1/journal"))
        let reopened = try makeCache()
        #expect(reopened.count == 20)
        #expect(reopened.blocking.entry(forKey: "4")?.data == testPayload(forKey: "4", size: 300))
    }

    @Test func aFileThatVanishesIsForgotten() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        try cache.blocking.store(testPayload(forKey: "gone", size: 800), forKey: "gone")
        try cache.blocking.store(testPayload(forKey: "kept", size: 800), forKey: "kept")
        try FileManager.default.removeItem(atPath: filePath(forKey: "gone"))
        #expect(cache.blocking.data(forKey: "gone") == nil)
        #expect(!cache.contains("gone"))
        #expect(cache.count == 1)
        #expect(cache.totalSize == entryFiles().values.reduce(0, +))
        #expect(cache.statistics.dropped == 1)
    }

    @Test(arguments: ["truncate", "garbage", "zeroes", "swap", "flip first", "flip middle", "flip last"])
    func aDamagedFileIsDroppedNeverReturned(damage: String) throws {
        defer { directory.remove() }
        let cache = try makeCache()
        try cache.blocking.store(testPayload(forKey: "victim", size: 4000), forKey: "victim")
        try cache.blocking.store(testPayload(forKey: "other", size: 4000), forKey: "other")
        let path = filePath(forKey: "victim")
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        switch damage {
        case "truncate": try original.prefix(original.count - 10).write(to: URL(fileURLWithPath: path))
        case "garbage": try (original + Data("junk".utf8)).write(to: URL(fileURLWithPath: path))
        case "zeroes": try Data(count: original.count).write(to: URL(fileURLWithPath: path))
        case "flip first", "flip middle", "flip last":
            // One bit of the payload (its first 4000 bytes): lengths and footer stay valid.
            var flipped = original
            let index = damage == "flip first" ? 0 : damage == "flip middle" ? 2000 : 3999
            flipped[index] ^= 0x10
            try flipped.write(to: URL(fileURLWithPath: path))
        default: try FileManager.default.copyItem(atPath: filePath(forKey: "other"), toPath: path + ".x")
            _ = rename(path + ".x", path)  // another key's valid file under this name
        }
        #expect(cache.blocking.data(forKey: "victim") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(cache.blocking.data(forKey: "other") == testPayload(forKey: "other", size: 4000))
    }

    /// The payload is verified once per process and file version (verifying costs more than
    /// the read of a hot entry): damage after a verified read is caught by the next process.
    @Test func aFlipAfterAVerifiedReadIsCaughtByTheNextProcess() throws {
        defer { directory.remove() }
        let payload = testPayload(forKey: "victim", size: 4000)
        let cache = try makeCache()
        try cache.blocking.store(payload, forKey: "victim")
        #expect(cache.blocking.data(forKey: "victim") == payload)
        let path = filePath(forKey: "victim")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[1234] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))

        let next = try makeCache()
        #expect(next.blocking.data(forKey: "victim") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// The payload checksum catches every single-bit flip at every position of a small entry,
    /// and changes of a word at a time at every word of a larger one.
    @Test func thePayloadChecksumSeesEveryFlip() {
        let payload = [UInt8](testPayload(forKey: "sum", size: 203))
        let reference = payload.withUnsafeBytes(payloadChecksum)
        var seen: Set<UInt64> = [reference]
        for index in payload.indices {
            for bit in 0..<8 {
                var flipped = payload
                flipped[index] ^= UInt8(1 << bit)
                seen.insert(flipped.withUnsafeBytes(payloadChecksum))
            }
        }
        #expect(seen.count == 1 + payload.count * 8)
        // A payload one byte shorter or longer (zero-extended) differs too.
        #expect(payload.dropLast().withUnsafeBytes(payloadChecksum) != reference)
        #expect((payload + [0]).withUnsafeBytes(payloadChecksum) != reference)
    }

    @Test func survivesItsDirectoryBeingDeleted() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        try cache.blocking.store(Data([1, 2]), forKey: "before")
        try FileManager.default.removeItem(at: directory.url)
        #expect(cache.blocking.data(forKey: "before") == nil)
        try cache.blocking.store(Data([3, 4]), forKey: "after")
        #expect(cache.blocking.data(forKey: "after") == Data([3, 4]))
        #expect(cache.count == 1)
        let reopened = try makeCache()
        #expect(reopened.blocking.data(forKey: "after") == Data([3, 4]))
    }

    @Test func journalGarbageDoesNotStopTheCache() throws {
        defer { directory.remove() }
        do {
            let cache = try makeCache()
            try cache.blocking.store(Data([1]), forKey: "a")
        }
        let journal = try FileHandle(forWritingTo: directory.url.appendingPathComponent("v1/journal"))
        journal.seekToEndOfFile()
        journal.write(Data((0..<333).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        try journal.close()
        let cache = try makeCache()
        try cache.blocking.store(Data([2]), forKey: "b")
        let reopened = try makeCache()
        #expect(reopened.blocking.data(forKey: "a") == Data([1]))
        #expect(reopened.blocking.data(forKey: "b") == Data([2]))
    }

    @Test func theJournalIsCompactedAsItGrows() throws {
        defer { directory.remove() }
        let cache = try makeCache(limit: 60_000)
        for round in 0..<3000 {
            let key = "\(round % 20)"
            try cache.blocking.store(testPayload(forKey: key, size: 1000 + round % 7), forKey: ImageCacheKey(key))
            if round % 3 == 0 { _ = cache.blocking.data(forKey: "\(round % 11)") }
        }
        let journalSize = try FileManager.default.attributesOfItem(atPath: directory.url.appendingPathComponent("v1/journal").path)[.size] as! Int
        #expect(journalSize < (2 * 20 + 4096 + 200) * DiskCacheJournalRecord.size)
        let reopened = try makeCache(limit: 60_000)
        #expect(reopened.count == cache.count)
        #expect(reopened.totalSize == entryFiles().values.reduce(0, +))
    }

    // MARK: Concurrency within one process

    @Test func manyTasksKeepTheIndexConsistent() async throws {
        defer { directory.remove() }
        let cache = try makeCache(limit: 200_000)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var random = UInt64(task + 1)
                    for _ in 0..<300 {
                        random = random &* 6_364_136_223_846_793_005 &+ 1
                        let key = "k\((random >> 33) % 60)"
                        let size = 500 + Int((random >> 33) % 60) * 50
                        switch (random >> 40) % 4 {
                        case 0, 1: try await cache.store(testPayload(forKey: key, size: size), forKey: ImageCacheKey(key))
                        case 2: await cache.removeEntry(forKey: ImageCacheKey(key))
                        default:
                            if let data = await cache.data(forKey: ImageCacheKey(key)) {
                                #expect(data == testPayload(forKey: key, size: size))
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let files = entryFiles()
        #expect(cache.totalSize <= 200_000)
        #expect(cache.count == files.count)
        #expect(cache.totalSize == files.values.reduce(0, +))
    }

    // MARK: Other processes

    @Test func aWriterKilledMidWriteLeavesNothingThatReadsBack() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        try cache.blocking.store(testPayload(forKey: "safe", size: 2000), forKey: "safe")
        let probe = try Probe(["stall", directory.path, "torn", "200000"])
        #expect(probe.waitForLine { $0 == "stalled" } != nil)
        probe.kill()

        // Half an entry is on disk under a temporary name, and nowhere else.
        let temporary = entryFiles().keys.filter { $0.hasPrefix(".tmp.") }
        #expect(temporary.count == 1)
        #expect(cache.blocking.data(forKey: "torn") == nil)
        let reopened = try makeCache()
        #expect(reopened.blocking.data(forKey: "torn") == nil)
        #expect(reopened.blocking.data(forKey: "safe") == testPayload(forKey: "safe", size: 2000))
        let report = reopened.blocking.sweep()
        #expect(report.removedTemporaryFiles == 1)
        #expect(entryFiles().keys.allSatisfy { !$0.hasPrefix(".tmp.") })
        #expect(reopened.count == 1)
    }

    @Test func sweepRemovesWhatAnInterruptedClearOrCompactionLeftBehind() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        try cache.blocking.store(Data([1]), forKey: "kept")
        // A process that has exited: its PID names the leftovers, as a crashed one's would.
        let finished = try Probe(["remove", directory.path, "nothing"])
        #expect(finished.wait() == 0)
        let pid = finished.process.processIdentifier
        let root = directory.url.appendingPathComponent("v1")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("trash.\(pid).1/ab"), withIntermediateDirectories: true)
        try Data([0]).write(to: root.appendingPathComponent("trash.\(pid).1/ab/file"))
        try Data([0]).write(to: root.appendingPathComponent("journal.compact.\(pid)"))
        let report = cache.blocking.sweep()
        #expect(report.removedTemporaryFiles == 2)
        let left = try FileManager.default.contentsOfDirectory(atPath: root.path)
        #expect(!left.contains { $0.hasPrefix("trash.") || $0.hasPrefix("journal.compact.") })
        #expect(cache.blocking.data(forKey: "kept") == Data([1]))
    }

    @Test func aWriterKilledWhileWritingManyEntriesCorruptsNothing() throws {
        defer { directory.remove() }
        let probe = try Probe(["write", directory.path, "burst", "100000", "20000", "400000"])
        #expect(probe.waitForLine { $0 == "stored 60" } != nil)
        probe.kill()
        let cache = try makeCache(limit: 400_000)
        cache.blocking.sweep()
        #expect(cache.count > 0)
        #expect(cache.totalSize <= 400_000 + 20_100)
        var verified = 0
        for index in 0..<100_000 {
            let key = "burst-\(index)"
            guard cache.contains(ImageCacheKey(key)) else { continue }
            #expect(cache.blocking.data(forKey: ImageCacheKey(key)) == testPayload(forKey: key, size: 20000), "\(key)")
            verified += 1
        }
        #expect(verified == cache.count)
        #expect(entryFiles().count == cache.count)
    }

    @Test func anotherProcessesWritesAndRemovalsAreSeen() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        #expect(cache.blocking.data(forKey: "w-0") == nil)
        #expect(try Probe.run(["write", directory.path, "w", "3", "1500"]) == 0)
        #expect(cache.blocking.data(forKey: "w-0") == testPayload(forKey: "w-0", size: 1500))
        #expect(cache.count == 3)
        #expect(try Probe.run(["remove", directory.path, "w-1"]) == 0)
        #expect(cache.blocking.data(forKey: "w-1") == nil)
        #expect(cache.count == 2)
    }

    @Test func twoProcessesHammeringOneDirectoryCorruptNothing() throws {
        defer { directory.remove() }
        let limit = 150_000
        let probes = try (1...2).map { seed in
            try Probe(["hammer", directory.path, "\(seed)", "3000", "80", "\(limit)"])
        }
        let results = probes.map { probe -> (String?, Int32) in
            let line = probe.waitForLine { $0.hasPrefix("hits") || $0.hasPrefix("corrupt") }
            return (line, probe.wait())
        }
        for (line, status) in results {
            #expect(status == 0, "probe ended with \(status): \(line ?? "no output")")
            #expect(line?.hasPrefix("hits") == true)
        }
        let cache = try makeCache(limit: limit)
        cache.blocking.sweep()
        let files = entryFiles()
        #expect(files.keys.allSatisfy { !$0.hasPrefix(".tmp.") })
        #expect(cache.count == files.count)
        #expect(cache.totalSize == files.values.reduce(0, +))
        #expect(cache.totalSize <= limit)
        for index in 0..<80 {
            let key = "shared-\(index)"
            if let data = cache.blocking.data(forKey: ImageCacheKey(key)) {
                #expect(data == testPayload(forKey: key, size: 1000 + index * 37), "\(key)")
            }
        }
    }
}
