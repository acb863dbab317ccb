import Foundation
import Testing
@_spi(Testing) import WebImageCore
import WebImage
import WebImageTestSupport

/// Cache keys are structured values: no URL passes for a variant of another, and a variant's
/// processed bytes never replace the original's.
@Suite("Cache keys")
struct CacheKeyTests {
    @Test("a URL whose fragment spells a variant is not a thumbnail of the URL without it")
    func fragmentIsNotAVariant() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let url = Fixture.url("hopper.jpg")
        let thumbnail = try await fixture.manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(32)))
        #expect(thumbnail.image.width == 32)

        // The old key of that thumbnail was this very string.
        let lookalike = try #require(URL(string: url.absoluteString + "#thumb(32)"))
        #expect(fixture.manager.cachedResponse(for: ImageRequest(url: lookalike)) == nil)
        let full = try await fixture.manager.image(for: ImageRequest(url: lookalike))
        #expect(full.cacheType != .memory)
        #expect(full.image.width == 128)
    }

    @Test("processed bytes with no processors are stored beside the original, which keeps its bytes and ETag")
    func processedBytesNeverReplaceTheOriginal() async throws {
        let setup = try await ManagerHTTPTests.Setup()
        let jpeg = try Fixture.data("hopper.jpg")
        setup.origin.register("/photo.jpg", data: jpeg, etag: "\"v1\"")
        let url = setup.origin.url("/photo.jpg")
        var request = ImageRequest(url: url)
        request.processedDataFormat = .png
        let loaded = try await setup.manager.image(for: request)
        await setup.manager.waitUntilIdle()

        let disk = try #require(setup.fixture.cache.disk)
        let original = try #require(await disk.entry(forKey: ImageCacheKey(url.absoluteString)))
        #expect(original.data == jpeg)
        #expect(original.metadata.etag == "\"v1\"")
        let processed = try #require(await disk.entry(forKey: ImageCacheKey(source: url.absoluteString, encoding: .png)))
        #expect(ImageFormat(sniffing: processed.data) == .png)
        #expect(processed.key == ImageCacheKey(source: url.absoluteString, encoding: .png))
        #expect(setup.fixture.cache.diskCount == 2)

        // The next run decodes the PNG variant; revalidating the original still sends its ETag.
        let relaunched = try setup.fixture.relaunched(loaders: [setup.loader])
        let fromDisk = try await relaunched.image(for: request)
        #expect(fromDisk.cacheType == .disk)
        #expect(fromDisk.image.pixels == loaded.image.pixels)
        _ = try await setup.manager.image(for: ImageRequest(url: url, options: .refreshCached))
        #expect(setup.origin.requests(path: "/photo.jpg").last?.header("If-None-Match") == "\"v1\"")
        try await setup.tearDown()
    }

    @Test("keys: originals keep their plain source; parts and encoding make distinct keys and distinct disk entries")
    func keysAreStructured() async throws {
        let plain: ImageCacheKey = "https://example.com/a.jpg"
        #expect(plain.isOriginal && plain.description == "https://example.com/a.jpg")
        let variants = [
            ImageCacheKey(source: "https://example.com/a.jpg", variant: ["thumb(32)"]),
            ImageCacheKey(source: "https://example.com/a.jpg", variant: ["a|b"]),
            ImageCacheKey(source: "https://example.com/a.jpg", variant: ["a", "b"]),
            ImageCacheKey(source: "https://example.com/a.jpg", encoding: .png),
            ImageCacheKey(source: "https://example.com/a.jpg#thumb(32)"),
        ]
        let all = [plain] + variants
        #expect(Set(all).count == all.count)
        #expect(variants.allSatisfy { $0.original == plain || $0.source != plain.source })

        let directory = TemporaryDirectory("keys")
        defer { directory.remove() }
        let disk = try DiskCache(directory: directory.url)
        for (index, key) in all.enumerated() { try await disk.store(Data([UInt8(index)]), forKey: key) }
        #expect(disk.count == all.count)
        for (index, key) in all.enumerated() {
            let entry = await disk.entry(forKey: key)
            #expect(entry?.data == Data([UInt8(index)]))
            #expect(entry?.key == key)
        }
    }
}
