import Foundation
import Synchronization
import Testing
import WebImageTestSupport
@testable import WebImageCore

@Suite struct ImageCacheTests {
    let directory = TemporaryDirectory("image-cache")

    func makeCache() throws -> ImageCache {
        var configuration = DiskCache.Configuration()
        configuration.sweepsOnOpen = false
        return ImageCache(memory: MemoryCache(configuration: .init(costLimit: 1 << 20)),
                          disk: try DiskCache(directory: directory.url, configuration: configuration))
    }

    /// A tiny "codec" for these tests: one grey pixel whose value is the first byte. The real
    /// decoders arrive with the codecs issue; what is tested here is the cache's routing.
    static func decode(_ data: Data) throws -> ImageContainer {
        guard let value = data.first, data.count == 3, data.starts(with: [value, value, value]) else {
            throw ImageError.corruptData("not a test pixel")
        }
        return ImageContainer(image: try Bitmap(width: 1, height: 1, pixelFormat: .gray8, pixels: [value]), data: nil)
    }

    static func pixel(_ value: UInt8) throws -> (ImageContainer, Data) {
        (try decode(Data([value, value, value])), Data([value, value, value]))
    }

    @Test func looksInMemoryThenOnDisk() async throws {
        defer { directory.remove() }
        let cache = try makeCache()
        let (image, bytes) = try Self.pixel(9)
        #expect(await cache.image(forKey: "k", decode: Self.decode) == nil)

        try await cache.store(image, data: bytes, forKey: "k")
        #expect(cache.memoryImage(forKey: "k")?.image == image.image)
        let (fromMemory, first) = try #require(await cache.image(forKey: "k", decode: Self.decode))
        #expect(first == .memory && fromMemory.image == image.image)

        cache.clearMemory()
        #expect(cache.memoryImage(forKey: "k") == nil)
        guard case .disk(let entry) = await cache.lookup(forKey: "k") else {
            Issue.record("expected a disk hit")
            return
        }
        #expect(entry.data == bytes)
        let (fromDisk, second) = try #require(await cache.image(forKey: "k", decode: Self.decode))
        #expect(second == .disk && fromDisk.image == image.image)
        // The disk hit was decoded once and is now served from memory.
        #expect(cache.memoryImage(forKey: "k")?.image == image.image)
    }

    @Test func memoryOnlyStoresNeverReachTheDisk() async throws {
        defer { directory.remove() }
        let cache = try makeCache()
        let (image, bytes) = try Self.pixel(3)
        try await cache.store(image, data: bytes, forKey: "m", toDisk: false)
        #expect(cache.memoryCount == 1)
        #expect(!cache.existsOnDisk(forKey: "m"))
        #expect(cache.diskCount == 0)
    }

    @Test func undecodableBytesOnDiskAreRemoved() async throws {
        defer { directory.remove() }
        let cache = try makeCache()
        try await cache.store(nil, data: Data("not an image".utf8), forKey: "bad")
        #expect(cache.existsOnDisk(forKey: "bad"))
        #expect(await cache.image(forKey: "bad", decode: Self.decode) == nil)
        #expect(!cache.existsOnDisk(forKey: "bad"))
    }

    @Test func removeClearTrimAndTotals() async throws {
        defer { directory.remove() }
        let cache = try makeCache()
        for value in UInt8(1)...5 {
            let (image, bytes) = try Self.pixel(value)
            try await cache.store(image, data: bytes, forKey: "\(value)")
        }
        #expect(cache.memoryCount == 5 && cache.memoryCost == 5)
        #expect(cache.diskCount == 5 && cache.diskSize == cache.disk!.totalSize && cache.diskSize > 15)

        await cache.removeImage(forKey: "1")
        #expect(cache.memoryImage(forKey: "1") == nil && !cache.existsOnDisk(forKey: "1"))
        await cache.removeImage(forKey: "2", fromDisk: false)
        #expect(cache.memoryImage(forKey: "2") == nil && cache.existsOnDisk(forKey: "2"))

        await cache.trim(memoryToCost: 1, diskToSize: 0)
        #expect(cache.memoryCount == 1 && cache.diskCount == 0)
        #expect(cache.memoryImage(forKey: "5") != nil)  // the most recently used survives

        try await cache.clearDisk()
        cache.clearMemory()
        #expect(cache.memoryCount == 0 && cache.diskCount == 0)
    }
}

extension ImageContainer: Equatable {
    public static func == (lhs: ImageContainer, rhs: ImageContainer) -> Bool {
        lhs.image == rhs.image && lhs.animation == rhs.animation && lhs.format == rhs.format && lhs.data == rhs.data
    }
}
