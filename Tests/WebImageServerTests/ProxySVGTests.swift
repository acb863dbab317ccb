import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// SVG sources are refused unless `allowsSVG` (`--allow-svg`); allowed, they are rasterized
/// at the size asked for.
@Suite struct ProxySVGTests {
    static func originFolder() throws -> TemporaryDirectory {
        let folder = TemporaryDirectory("svg-origin")
        try Data(contentsOf: Fixture.repository.appendingPathComponent("Tests/Fixtures/shapes.svg"))
            .write(to: folder.url.appendingPathComponent("shapes.svg"))
        return folder
    }

    @Test func svgSourcesAreRefusedByDefault() async throws {
        let folder = try Self.originFolder()
        defer { folder.remove() }
        let harness = try await ProxyHarness.start { $0.originDirectory = folder.url }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request("/image?url=local%3A%2F%2F%2Fshapes.svg&w=32&format=png")
        #expect(reply.status == 415)
    }

    @Test func allowedTheyAreDrawnAtTheSizeAskedFor() async throws {
        let folder = try Self.originFolder()
        defer { folder.remove() }
        let harness = try await ProxyHarness.start {
            $0.originDirectory = folder.url
            $0.allowsSVG = true
        }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request("/image?url=local%3A%2F%2F%2Fshapes.svg&w=32&format=png")
        #expect(reply.status == 200)
        let image = try CoderRegistry.system().decode(reply.body).image
        #expect(image.width == 32 && image.height == 24)
        // The circle's colour at the centre, from the file's source (#fc3).
        let centre = 12 * image.bytesPerRow + 16 * image.pixelFormat.bytesPerPixel
        #expect(Array(image.pixels[centre..<centre + 3]) == [0xFF, 0xCC, 0x33])
    }
}
