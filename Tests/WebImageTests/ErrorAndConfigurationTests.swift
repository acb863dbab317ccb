import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// One error story: every failure reaches async callers and callbacks as an ``ImageError``, and
/// an error of the application's own code says whose it was. And the one-line configuration.
@Suite("Errors and the one-line configuration")
struct ErrorAndConfigurationTests {
    struct Refusal: Error, CustomStringConvertible {
        var description: String { "refused by policy" }
    }

    /// A loader of the application's own that refuses every URL with its own error.
    struct RefusingLoader: ImageLoader {
        func canLoad(_ url: URL) -> Bool { url.scheme == "refused" }
        func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse {
            throw Refusal()
        }
    }

    @Test("a processor's own error is custom and names the processor, in the async API and the callback alike")
    func processorError() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let failing = ImageProcessors.Anonymous(id: "watermark") { _ in throw Refusal() }
        let request = ImageRequest(url: Fixture.url("hopper.png"), processors: [failing])
        let expected = ImageError.custom(.init(origin: .processor("watermark"), error: Refusal()))
        do {
            _ = try await fixture.manager.image(for: request)
            Issue.record("the processor's failure was not reported")
        } catch let error as ImageError {
            #expect(error == expected)
            #expect(!error.isPermanent)
            #expect(error.description == "processor watermark: refused by policy")
        }
        let viaCallback = await withCheckedContinuation { continuation in
            fixture.manager.loadImage(with: request) { continuation.resume(returning: $0) }
        }
        #expect(viaCallback.map(\.cacheType) == .failure(expected))
        #expect(!fixture.manager.isFailedURL(Fixture.url("hopper.png")))
    }

    @Test("a loader's own error is custom and names the loader, never a network failure")
    func loaderError() async throws {
        let fixture = try PipelineFixture(loaders: [RefusingLoader()])
        defer { fixture.directory.remove() }
        let url = try #require(URL(string: "refused://host/a.png"))
        await #expect(throws: ImageError.custom(.init(origin: .loader, error: Refusal()))) {
            _ = try await fixture.manager.image(for: url)
        }
        await #expect(throws: ImageError.custom(.init(origin: .loader, error: Refusal()))) {
            _ = try await fixture.manager.data(for: ImageRequest(url: url))
        }
    }

    @Test("ImageManager(diskCacheDirectory:memoryLimit:diskLimit:) sets both caches' limits and loads through the standard loaders")
    func oneLineConfiguration() async throws {
        let directory = TemporaryDirectory("one-line")
        defer { directory.remove() }
        let manager = try ImageManager(diskCacheDirectory: directory.url, memoryLimit: 3 << 20, diskLimit: 5 << 20)
        let cache = manager.configuration.cache
        #expect(cache.memory.configuration.costLimit == 3 << 20)
        #expect(cache.disk?.configuration.sizeLimit == 5 << 20)
        let response = try await manager.image(for: Fixture.url("hopper.webp"))
        #expect(response.image.width == 128)
        await manager.shutdown()
        #expect(cache.diskCount == 1)

        let memoryOnly = try ImageManager(diskCacheName: nil, memoryLimit: 1 << 20)
        #expect(memoryOnly.configuration.cache.disk == nil)
        #expect(memoryOnly.configuration.cache.memory.configuration.costLimit == 1 << 20)
        await memoryOnly.shutdown()
    }
}
