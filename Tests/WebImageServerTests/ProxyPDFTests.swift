import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// PDF sources are refused unless `allowsPDF` (`--allow-pdf`); allowed, a page is rasterized at
/// the size asked for (a harness in this process draws with the system's `PDFDecoder`, in
/// process; `webimage serve` draws in a child, ServeCommandTests).
@Suite struct ProxyPDFTests {
    static func originFolder() throws -> TemporaryDirectory {
        let folder = TemporaryDirectory("pdf-origin")
        // Page 1 red, 200 × 100 pt; page 2 green, 100 × 200 pt.
        try PDFBuilder.pages([(200, 100), (100, 200)]).write(to: folder.url.appendingPathComponent("pages.pdf"))
        return folder
    }

    @Test func pdfSourcesAreRefusedByDefault() async throws {
        let folder = try Self.originFolder()
        defer { folder.remove() }
        let harness = try await ProxyHarness.start { $0.originDirectory = folder.url }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request("/image?url=local%3A%2F%2F%2Fpages.pdf&w=32&format=png")
        #expect(reply.status == 415)
    }

    @Test func allowedAPageIsDrawnAtTheSizeAskedFor() async throws {
        let folder = try Self.originFolder()
        defer { folder.remove() }
        let harness = try await ProxyHarness.start {
            $0.originDirectory = folder.url
            $0.allowsPDF = true
        }
        defer { Task { await harness.stop() } }
        let cases: [(query: String, width: Int, height: Int, colour: [UInt8])] = [("", 64, 32, [255, 0, 0]), ("&page=2", 32, 64, [0, 255, 0])]
        for (query, width, height, colour) in cases {
            let reply = try await harness.request("/image?url=local%3A%2F%2F%2Fpages.pdf&w=\(width)&format=png" + query)
            #expect(reply.status == 200, "\(query)")
            let image = try CoderRegistry.system().decode(reply.body).image
            #expect(image.width == width && image.height == height, "\(query)")
            let centre = height / 2 * image.bytesPerRow + width / 2 * image.pixelFormat.bytesPerPixel
            #expect(Array(image.pixels[centre..<centre + 3]) == colour, "\(query)")
        }
    }
}
