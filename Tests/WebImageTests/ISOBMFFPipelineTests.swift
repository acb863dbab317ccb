import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// AVIF and HEIC files go through the whole pipeline (file loader, sniffing, the system
/// registry's decoders, the caches) as every other format does.
@Suite("AVIF and HEIC through ImageManager")
struct ISOBMFFPipelineTests {
    @Test("an animated AVIF, a rotated AVIF, an alpha HEIC and a HEIC thumbnail load end to end")
    func loadEndToEnd() async throws {
        let manager = try ImageManager(diskCacheName: nil, memoryLimit: 8 << 20)
        let animated = try await manager.image(for: Fixture.url("avif-animated.avif"))
        #expect(animated.container.animation?.frames.count == 3)
        #expect(animated.container.format == .avif)
        // irot 1 turns the 48×32 source a quarter turn counter-clockwise.
        let rotated = try await manager.image(for: Fixture.url("avif-irot1.avif"))
        #expect(rotated.image.width == 32 && rotated.image.height == 48)
        let alpha = try await manager.image(for: Fixture.url("heic-alpha.heic"))
        #expect(alpha.container.format == .heic)
        #expect(alpha.image.pixelFormat.hasAlpha)
        let thumbnail = try await manager.image(for: ImageRequest(url: Fixture.url("heic-thumbnail.heic"), thumbnail: .maxPixelSize(96)))
        #expect(thumbnail.image.width == 96 && thumbnail.image.height == 64)
        await manager.shutdown()
    }
}
