import Foundation
import Testing
import WebImageTestSupport
@_spi(Testing) @testable import WebImageCore

/// Placeholders in the disk cache's index: kept in the journal beside the entries, so they
/// survive a restart, the bytes' eviction and the journal's compaction, and reach every cache
/// open on the same directory.
@Suite struct DiskCachePlaceholderTests {
    let directory = TemporaryDirectory("disk-placeholders")

    func makeCache(limit: Int = 1 << 30) throws -> DiskCache {
        var configuration = DiskCache.Configuration()
        configuration.sizeLimit = limit
        configuration.sweepsOnOpen = false
        return try DiskCache(directory: directory.url, configuration: configuration)
    }

    let hash: [UInt8] = [0x1b, 0x08, 0x0a, 0x0d, 0x82, 0x78, 0x77, 0x88, 0x87, 0x77, 0x87, 0x78, 0x80, 0x07, 0x58, 0x38, 0x7f, 0x07, 0x78, 0x88, 0x87, 0x77, 0x77, 0x7a, 0x7f]

    @Test func aPlaceholderRecordRoundTripsThroughItsEightyBytes() throws {
        let digest = DiskCacheDigest(key: "https://example.com/a.jpg")
        let record = DiskCacheJournalRecord(placeholder: hash, digest: digest)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: DiskCacheJournalRecord.size, alignment: 8)
        defer { buffer.deallocate() }
        record.write(to: buffer.baseAddress!)
        let read = try #require(DiskCacheJournalRecord(from: UnsafeRawBufferPointer(buffer), at: 0))
        #expect(read == record)
        #expect(read.payload == hash)

        // A length byte past the 32 the record holds is damage, even under a valid checksum.
        buffer[5] = 33
        let checksum = fnv1a64(UnsafeRawBufferPointer(rebasing: buffer[0..<72]))
        buffer.storeBytes(of: checksum.littleEndian, toByteOffset: 72, as: UInt64.self)
        #expect(DiskCacheJournalRecord(from: UnsafeRawBufferPointer(buffer), at: 0) == nil)
    }

    @Test func aPlaceholderOutlivesItsBytesAndTheProcess() throws {
        defer { directory.remove() }
        let key: ImageCacheKey = "https://example.com/a.jpg"
        do {
            let cache = try makeCache()
            try cache.blocking.store(Data(repeating: 7, count: 5000), forKey: key)
            cache.rememberPlaceholderBytes(hash, forKey: key)
            cache.blocking.trim(toSize: 0)
            #expect(cache.count == 0)
            #expect(cache.placeholderBytes(forKey: key) == hash)
        }
        let reopened = try makeCache()
        #expect(reopened.count == 0)
        #expect(reopened.placeholderBytes(forKey: key) == hash)
        // Any variant of the source answers with the source's placeholder.
        #expect(reopened.placeholderBytes(forKey: ImageCacheKey(source: key.source, variant: ["thumb(64)"])) == hash)
        #expect(reopened.placeholderBytes(forKey: "https://example.com/b.jpg") == nil)
    }

    @Test func anotherCacheOnTheDirectorySeesItAtOnce() throws {
        defer { directory.remove() }
        let first = try makeCache()
        let second = try makeCache()
        first.rememberPlaceholderBytes(hash, forKey: "a")
        #expect(second.placeholderBytes(forKey: "a") == hash)
    }

    @Test func compactionKeepsPlaceholders() throws {
        defer { directory.remove() }
        // 20 entries of 1 KB over a 10 KB limit: every few stores evict, and the journal grows
        // past what compaction waits for.
        let cache = try makeCache(limit: 10_000)
        cache.rememberPlaceholderBytes(hash, forKey: "kept")
        for round in 0..<3000 {
            try cache.blocking.store(Data(repeating: UInt8(round % 251), count: 1000 + round % 7), forKey: ImageCacheKey("\(round % 20)"))
        }
        let journal = try FileManager.default.attributesOfItem(atPath: directory.url.appendingPathComponent("v1/journal").path)[.size] as! Int
        #expect(journal < (2 * 21 + 4096 + 200) * DiskCacheJournalRecord.size, "the journal was compacted")
        #expect(try makeCache(limit: 10_000).placeholderBytes(forKey: "kept") == hash)
    }

    @Test func removingEverythingForgetsPlaceholders() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        cache.rememberPlaceholderBytes(hash, forKey: "a")
        try cache.blocking.removeAll()
        #expect(cache.placeholderBytes(forKey: "a") == nil)
        #expect(try makeCache().placeholderBytes(forKey: "a") == nil)
    }

    @Test func oversizedPayloadsAreNotRecorded() throws {
        defer { directory.remove() }
        let cache = try makeCache()
        cache.rememberPlaceholderBytes([UInt8](repeating: 1, count: 33), forKey: "a")
        cache.rememberPlaceholderBytes([], forKey: "b")
        #expect(cache.placeholderCount == 0)
    }
}
