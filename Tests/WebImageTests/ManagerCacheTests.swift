import Foundation
import Synchronization
import Testing
@_spi(Testing) import WebImageCore
import WebImage
import WebImageTestSupport

@Suite("ImageManager: caches, local sources, failed URLs", .timeLimit(.minutes(2 * Deadlines.stretch)))
struct ManagerCacheTests {
    @Test("a file loads from the source, then from memory; a relaunch finds it on disk")
    func sourceMemoryDisk() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let request = ImageRequest(url: Fixture.url("hopper.jpg"))

        let first = try await fixture.manager.image(for: request)
        #expect(first.cacheType == .none)
        #expect(first.image.width == 128)
        #expect(first.data == (try Fixture.data("hopper.jpg")))
        let second = try await fixture.manager.image(for: request)
        #expect(second.cacheType == .memory)
        #expect(second.image.pixels == first.image.pixels)
        #expect(fixture.decodeCount == 1)

        let relaunched = try fixture.relaunched()
        let third = try await relaunched.image(for: request)
        #expect(third.cacheType == .disk)
        #expect(third.image.pixels == first.image.pixels)
    }

    @Test("a memory hit completes before loadImage returns")
    func memoryHitIsSynchronous() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let request = ImageRequest(url: Fixture.url("hopper.png"))
        _ = try await fixture.manager.image(for: request)

        let completed = Mutex<CacheType?>(nil)
        let task = fixture.manager.loadImage(with: request) { result in
            completed.withLock { $0 = try? result.get().cacheType }
        }
        #expect(completed.withLock { $0 } == .memory)
        #expect(task.result != nil)
        #expect(fixture.manager.cachedResponse(for: request)?.cacheType == .memory)
    }

    @Test("decodes whose memory estimates exceed the budget together run one at a time; within it, side by side")
    func decodeMemoryBudget() async throws {
        for limit in [1, 1 << 30] {
            // data: URLs and no disk cache: nothing waits for the process-wide I/O threads,
            // which the other suites running beside this one keep busy.
            let fixture = try PipelineFixture(diskCache: false) { configuration in
                configuration.decodeMemoryLimit = limit
                // Two decoding threads whatever the machine, so only the budget can serialise.
                configuration.executor = BlockingExecutor(name: "test.decode", width: 2)
            }
            defer { fixture.directory.remove() }
            let jpeg = try #require(fixture.decoders.first { $0.formats.contains(.jpeg) })
            let png = try #require(fixture.decoders.first { $0.formats.contains(.png) })
            jpeg.closeGate()
            png.closeGate()
            let running = { jpeg.concurrency.now + png.concurrency.now }
            let tasks = try [("hopper.jpg", "image/jpeg"), ("hopper.png", "image/png")].map { name, type in
                let url = "data:\(type);base64," + (try Fixture.data(name)).base64EncodedString()
                return fixture.manager.loadImage(with: ImageRequest(url: URL(string: url)))
            }
            #expect(await yieldUntil { running() >= 1 })
            if limit == 1 {
                // The second decode waits for memory, not for a thread.
                #expect(await yieldUntil { fixture.manager.decodeMemory.waiting == 1 })
                #expect(running() == 1)
            } else {
                #expect(await yieldUntil { running() == 2 })
            }
            jpeg.openGate()
            png.openGate()
            for task in tasks { #expect(try await task.response.image.width == 128) }
            #expect(fixture.manager.decodeMemory.held == 0)
        }
    }

    @Test("a data URL loads through the manager and decodes")
    func dataURL() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let bytes = try Fixture.data("hopper.webp")
        let response = try await fixture.manager.image(for: ImageRequest(url: URL(string: "data:image/webp;base64," + bytes.base64EncodedString())))
        #expect(response.container.format == .webp)
        #expect(response.image.width == 128)
    }

    @Test("fromCacheOnly fails with cacheMiss when no cache has the image, and never loads")
    func fromCacheOnly() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let url = Fixture.url("hopper.gif")
        await #expect(throws: ImageError.cacheMiss(url.absoluteString)) {
            _ = try await fixture.manager.image(for: ImageRequest(url: url, options: .fromCacheOnly))
        }
        #expect(fixture.cache.diskCount == 0)
        _ = try await fixture.manager.image(for: ImageRequest(url: url))
        await fixture.manager.waitUntilIdle()   // the disk write follows the answer
        fixture.cache.clearMemory()
        let cached = try await fixture.manager.image(for: ImageRequest(url: url, options: .fromCacheOnly))
        #expect(cached.cacheType == .disk)
    }

    @Test("cacheMemoryOnly writes nothing to disk; data(for:) delivers bytes without decoding, then from disk")
    func storeOptions() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let url = Fixture.url("hopper.png")
        let png = try Fixture.data("hopper.png")
        let bytesOnly = try await fixture.manager.data(for: ImageRequest(url: url, options: [.cacheMemoryOnly]))
        #expect(bytesOnly.data == png)
        #expect(bytesOnly.cacheType == .none)
        #expect(fixture.decodeCount == 0)
        #expect(fixture.cache.diskCount == 0)
        #expect(fixture.cache.memoryCount == 0)

        // Stored this time; a thumbnail in the request changes nothing (the bytes are the original's).
        _ = try await fixture.manager.data(for: ImageRequest(url: url, thumbnail: .maxPixelSize(8)))
        await fixture.manager.waitUntilIdle()
        let again = try await fixture.manager.data(for: ImageRequest(url: url))
        #expect(again.data == png)
        #expect(again.cacheType == .disk)
        #expect(again.contentType == "image/png")
        #expect(fixture.decodeCount == 0)
        #expect(fixture.cache.memoryCount == 0)
    }

    @Test("thumbnails and processors are separate variants in memory, derived from one original on disk")
    func variants() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let url = Fixture.url("hopper.jpg")
        let thumbnail = try await fixture.manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(32)))
        #expect(thumbnail.image.width == 32)
        await fixture.manager.waitUntilIdle()   // the original's disk write follows the first decode
        let circle = try await fixture.manager.image(for: ImageRequest(url: url, processors: [ImageProcessors.Circle()]))
        #expect(circle.image.width == 128)
        #expect(circle.cacheType == .disk)   // the original was stored by the first load
        #expect(fixture.cache.memoryCount == 2)
        #expect(fixture.cache.diskCount == 1)
        #expect(fixture.manager.cachedResponse(for: ImageRequest(url: url, thumbnail: .maxPixelSize(32)))?.image.width == 32)
        #expect(fixture.manager.cachedResponse(for: ImageRequest(url: url)) == nil)
    }

    @Test("processed bytes go to disk on request and serve the variant after a relaunch without the original decode")
    func processedDataOnDisk() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        var request = ImageRequest(url: Fixture.url("hopper.jpg"), thumbnail: .maxPixelSize(40))
        request.processedDataFormat = .png
        let first = try await fixture.manager.image(for: request)
        await fixture.manager.waitUntilIdle()
        #expect(fixture.cache.diskCount == 2)
        let relaunched = try fixture.relaunched()
        let second = try await relaunched.image(for: request)
        #expect(second.cacheType == .disk)
        #expect(second.container.format == .png)
        #expect(second.image.pixels == first.image.pixels)   // PNG is lossless
    }

    @Test("a cache key filter makes URLs that differ in signing parameters one cache entry")
    func cacheKeyFilter() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let filter: @Sendable (URL) -> String = { url in
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
            components.queryItems = components.queryItems?.filter { $0.name != "sig" }
            if components.queryItems?.isEmpty == true { components.queryItems = nil }
            return components.string!
        }
        var first = ImageRequest(url: URL(string: Fixture.url("hopper.png").absoluteString + "?sig=1"))
        first.cacheKeyFilter = filter
        var second = ImageRequest(url: URL(string: Fixture.url("hopper.png").absoluteString + "?sig=2"))
        second.cacheKeyFilter = filter
        #expect(first.dataKey == ImageCacheKey(Fixture.url("hopper.png").absoluteString))
        _ = try await fixture.manager.image(for: first)
        #expect(try await fixture.manager.image(for: second).cacheType == .memory)
    }

    @Test("@2x and @3x in the file name set the scale; an explicit scale wins")
    func scale() throws {
        #expect(ImageRequest(url: URL(string: "https://example.com/a@2x.png")).resolvedScale == 2)
        #expect(ImageRequest(url: URL(string: "https://example.com/a@3x.jpg?x=1")).resolvedScale == 3)
        #expect(ImageRequest(url: URL(string: "https://example.com/a.png")).resolvedScale == 1)
        var explicit = ImageRequest(url: URL(string: "https://example.com/a@2x.png"))
        explicit.scale = 3
        #expect(explicit.resolvedScale == 3)
    }

    @Test("undecodable bytes are refused until the failure expires, unless retryFailed; removeFailedURL forgets")
    func failedURLs() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let folder = TemporaryDirectory("failed")
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("not-an-image.png")
        try Data("this is not an image".utf8).write(to: file)
        let request = ImageRequest(url: file)

        await #expect(throws: ImageError.unsupportedFormat("the bytes are not an image format the library knows")) {
            _ = try await fixture.manager.image(for: request)
        }
        #expect(fixture.manager.isFailedURL(file))
        await #expect(throws: ImageError.recentlyFailed(file.absoluteString)) {
            _ = try await fixture.manager.image(for: request)
        }
        // The file is fixed; retryFailed loads it at once.
        try Fixture.data("hopper.png").write(to: file)
        var retry = request
        retry.options = .retryFailed
        #expect(try await fixture.manager.image(for: retry).image.width == 128)

        // Fails again, then the entry expires after its lifetime (10 minutes by default).
        let broken = folder.url.appendingPathComponent("broken.png")
        try Fixture.data("broken.png").write(to: broken)
        _ = try? await fixture.manager.image(for: ImageRequest(url: broken))
        #expect(fixture.manager.isFailedURL(broken))
        fixture.clock.advance(by: .seconds(599))
        #expect(fixture.manager.isFailedURL(broken))
        fixture.clock.advance(by: .seconds(2))
        #expect(!fixture.manager.isFailedURL(broken))

        _ = try? await fixture.manager.image(for: ImageRequest(url: broken))
        #expect(fixture.manager.isFailedURL(broken))
        fixture.manager.removeFailedURL(broken)
        #expect(!fixture.manager.isFailedURL(broken))
        _ = try? await fixture.manager.image(for: ImageRequest(url: broken))
        fixture.manager.removeAllFailedURLs()
        #expect(!fixture.manager.isFailedURL(broken))
    }

    @Test("a transient failure (a missing file) never enters the failed-URL list")
    func transientFailure() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let missing = fixture.directory.url.appendingPathComponent("later.png")
        do {
            _ = try await fixture.manager.image(for: ImageRequest(url: missing))
            Issue.record("a missing file loaded")
        } catch ImageError.storage {}
        #expect(!fixture.manager.isFailedURL(missing))
        try Fixture.data("hopper.png").write(to: missing)
        #expect(try await fixture.manager.image(for: ImageRequest(url: missing)).cacheType == .none)
    }

    @Test("no URL and an unknown scheme fail with invalidURL")
    func invalidURLs() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        await #expect(throws: ImageError.invalidURL("the request has no URL")) {
            _ = try await fixture.manager.image(for: ImageRequest(url: nil))
        }
        await #expect(throws: ImageError.invalidURL("no loader handles gopher: URLs")) {
            _ = try await fixture.manager.image(for: ImageRequest(url: URL(string: "gopher://example.invalid/a.png")))
        }
    }

    @Test("a damaged disk entry is dropped and the image fetched again")
    func damagedDiskEntry() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let url = Fixture.url("hopper.png")
        try await fixture.cache.disk?.store(Data("garbage".utf8), forKey: ImageCacheKey(url.absoluteString))
        do {
            _ = try await fixture.manager.image(for: ImageRequest(url: url))
            Issue.record("garbage decoded")
        } catch ImageError.unsupportedFormat {}
        #expect(!fixture.manager.isFailedURL(url))
        #expect(fixture.cache.diskCount == 0)
        #expect(try await fixture.manager.image(for: ImageRequest(url: url)).cacheType == .none)
    }

    @Test("a byte flipped inside a disk entry's payload is caught by its checksum: the image is fetched again, never decoded from the damage")
    func flippedPayloadByte() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let url = Fixture.url("hopper.jpg")
        let original = try await fixture.manager.image(for: ImageRequest(url: url))
        #expect(original.cacheType == .none)
        await fixture.manager.waitUntilIdle()   // the disk write follows the answer

        // The entry's one file: flip one bit in the middle of the JPEG's scan data, where a
        // decoder would read it as a slightly different image, without complaint.
        let data = fixture.directory.url.appendingPathComponent("cache")
        let files = try #require(FileManager.default.enumerator(atPath: data.path)?.allObjects as? [String])
            .filter { !$0.hasSuffix("journal") }
            .map { data.appendingPathComponent($0) }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .filter { (try? Data(contentsOf: $0).starts(with: [0xFF, 0xD8])) == true }
        let file = try #require(files.count == 1 ? files[0] : nil, "\(files)")
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0x04
        try bytes.write(to: file)

        let relaunched = try fixture.relaunched()
        let again = try await relaunched.image(for: ImageRequest(url: url))
        #expect(again.cacheType == .none)
        #expect(again.image.pixels == original.image.pixels)
        // Stored anew: the next relaunch reads it from disk.
        await relaunched.waitUntilIdle()
        #expect(try await fixture.relaunched().image(for: ImageRequest(url: url)).cacheType == .disk)
    }

    @Test("cache queries and removal by request: memory for the variant, disk for the bytes, both levels removed")
    func cacheQueriesByRequest() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let url = Fixture.url("hopper.png")
        let original = ImageRequest(url: url)
        let thumbnail = ImageRequest(url: url, thumbnail: .maxPixelSize(16))
        #expect(fixture.manager.cachedType(for: original) == .none)
        #expect(fixture.manager.cachedType(for: thumbnail) == .none)

        _ = try await fixture.manager.image(for: thumbnail)
        await fixture.manager.waitUntilIdle()
        #expect(fixture.manager.cachedType(for: thumbnail) == .memory)
        // The original was never decoded, but its bytes are on disk.
        #expect(fixture.manager.cachedType(for: original) == .disk)
        #expect(try fixture.relaunched().cachedType(for: thumbnail) == .disk)

        await fixture.manager.removeCachedImage(for: thumbnail)
        #expect(fixture.manager.cachedType(for: thumbnail) == .none)
        #expect(fixture.manager.cachedType(for: original) == .none)
        #expect(fixture.cache.diskCount == 0)

        _ = try await fixture.manager.image(for: original)
        await fixture.manager.waitUntilIdle()
        #expect(fixture.manager.cachedType(for: original) != .none)
        try await fixture.manager.removeAllCachedImages()
        #expect(fixture.manager.cachedType(for: original) == .none)
        #expect(fixture.cache.memoryCount == 0 && fixture.cache.diskCount == 0)
    }

    @Test("fromLoaderOnly skips both caches; queryMemoryData adds the bytes to a memory hit, queryDiskSync reads them on the spot")
    func cacheQueryOptions() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let url = Fixture.url("hopper.png")
        _ = try await fixture.manager.image(for: ImageRequest(url: url))
        await fixture.manager.waitUntilIdle()
        let reloaded = try await fixture.manager.image(for: ImageRequest(url: url, options: .fromLoaderOnly))
        #expect(reloaded.cacheType == .none)
        #expect(fixture.decodeCount == 2)

        let plain = try await fixture.manager.image(for: ImageRequest(url: url))
        #expect(plain.cacheType == .memory)
        #expect(plain.data == nil)
        let withData = try await fixture.manager.image(for: ImageRequest(url: url, options: .queryMemoryData))
        #expect(withData.cacheType == .memory)
        #expect(withData.data == (try Fixture.data("hopper.png")))
        let bytes = Recorder<Data?>()
        let task = fixture.manager.loadImage(with: ImageRequest(url: url, options: [.queryMemoryData, .readsDiskOnCallingThread])) { result in
            bytes.append(try? result.get().data)
        }
        #expect(task.result != nil)   // read from disk on the calling thread, before loadImage returned
        #expect(bytes.all == [try Fixture.data("hopper.png")])
    }

    @Test("decodeFirstFrameOnly and scaleDownLargeImages change the decode and the cache key")
    func decodeOptions() async throws {
        let fixture = try PipelineFixture { $0.scaleDownLimit = 64 * 64 }
        defer { fixture.directory.remove() }
        let animated = Fixture.url("hopper.gif")
        let full = try await fixture.manager.image(for: ImageRequest(url: animated))
        let first = try await fixture.manager.image(for: ImageRequest(url: animated, options: .decodeFirstFrameOnly))
        #expect((full.container.animation?.frames.count ?? 1) > 1 || full.container.animation == nil)
        #expect(first.container.animation == nil)
        #expect(first.cacheType != .memory)
        let scaled = try await fixture.manager.image(for: ImageRequest(url: Fixture.url("hopper.jpg"), options: .scaleDownLargeImages))
        let image = scaled.image
        #expect(image.width * image.height <= 64 * 64)
        #expect(image.width == 64)
    }

    @Test("a request's own cache and loader are used instead of the manager's")
    func perRequestCacheAndLoader() async throws {
        let fixture = try PipelineFixture(loaders: [])
        defer { fixture.directory.remove() }
        let own = ImageCache(disk: nil)
        var request = ImageRequest(url: Fixture.url("hopper.webp"))
        request.cache = own
        request.loader = FileImageLoader()
        let response = try await fixture.manager.image(for: request)
        #expect(response.cacheType == .none)
        #expect(response.timings.load != nil)
        #expect(response.timings.decode != nil)
        #expect(response.timings.total >= (response.timings.decode ?? .zero))
        #expect(own.memoryCount == 1)
        #expect(fixture.cache.memoryCount == 0)
        // The manager has no loader of its own for file URLs.
        await #expect(throws: ImageError.invalidURL("no loader handles file: URLs")) {
            _ = try await fixture.manager.image(for: ImageRequest(url: Fixture.url("hopper.webp")))
        }
    }
}

