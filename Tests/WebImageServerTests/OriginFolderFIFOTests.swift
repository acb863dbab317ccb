import Foundation
import Testing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// A FIFO in the origin folder: opening one for reading waits for a writer, which used to keep
/// the proxy from starting (the gallery reads every file) and to hold a file thread for ever
/// when requested. Nothing ever writes to the FIFO here: any open that waits, waits for good,
/// and the suite's time limit fails the test.
@Suite(.timeLimit(.minutes(1 * Deadlines.stretch))) struct OriginFolderFIFOTests {
    @Test func aFIFOIsNeitherListedNorReadAndTheImagesAreStillServed() async throws {
        let folder = TemporaryDirectory("fifo-origin")
        defer { folder.remove() }
        try FileManager.default.copyItem(
            at: Fixture.demoImages.appendingPathComponent("flower.webp"), to: folder.url.appendingPathComponent("flower.webp"))
        #expect(mkfifo(folder.url.appendingPathComponent("pipe.jpg").path, 0o644) == 0)

        let harness = try await ProxyHarness.start { $0.originDirectory = folder.url }
        defer { Task { await harness.stop() } }
        #expect(Gallery(directory: folder.url).names == ["flower.webp"])
        let page = try await harness.request("/")
        #expect(page.status == 200)
        #expect(page.text.contains("flower.webp") && !page.text.contains("pipe.jpg"))

        let fifo = try await harness.request(ProxyHarness.imagePath(url: "local:///pipe.jpg", "w=10"))
        #expect(fifo.status == 404)
        let image = try await harness.request(ProxyHarness.imagePath(url: "local:///flower.webp", "w=10"))
        #expect(image.status == 200 && image.format != nil)
    }

    @Test func theStaticOriginLeavesAFIFOOut() async throws {
        let folder = TemporaryDirectory("fifo-static")
        defer { folder.remove() }
        try FileManager.default.copyItem(
            at: Fixture.demoImages.appendingPathComponent("flower.webp"), to: folder.url.appendingPathComponent("flower.webp"))
        #expect(mkfifo(folder.url.appendingPathComponent("pipe.jpg").path, 0o644) == 0)
        let origin = try await StaticOrigin.start(serving: folder.url)
        defer { Task { try await origin.shutdown() } }
        #expect(origin.names == ["flower.webp"])
    }
}
