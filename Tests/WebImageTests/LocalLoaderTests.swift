import Foundation
import Testing
import WebImage
@testable import WebImageCore
import WebImageTestSupport

@Suite("File and data URL loaders")
struct LocalLoaderTests {
    @Test("a base64 data URL loads its bytes and media type")
    func base64DataURL() async throws {
        let bytes = try Fixture.data("hopper.gif")
        let url = try #require(URL(string: "data:image/gif;base64," + bytes.base64EncodedString()))
        let response = try await DataURLImageLoader().load(ImageLoadRequest(url: url), context: ImageLoadContext())
        #expect(response.data == bytes)
        #expect(response.metadata.contentType == "image/gif")
    }

    @Test("a percent-encoded data URL decodes every escape, including bytes that are not UTF-8")
    func percentEncodedDataURL() async throws {
        let bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0x25, 0x41]
        let encoded = bytes.map { String(format: "%%%02X", $0) }.joined()
        let url = try #require(URL(string: "data:application/octet-stream," + encoded))
        let response = try await DataURLImageLoader().load(ImageLoadRequest(url: url), context: ImageLoadContext())
        #expect(Array(response.data) == bytes)
    }

    @Test("malformed data URLs fail with invalidURL", arguments: [
        "data:image/png;base64", "data:image/png;base64,abc", "data:,%G1", "data:,%4", "mailto:a@b",
    ])
    func malformedDataURL(_ string: String) throws {
        // Parsed from the string: `URL(string:)` would re-escape a stray `%` before the loader saw it.
        do {
            _ = try DataURLImageLoader.parse(string, limit: 1 << 20)
            Issue.record("\(string) parsed")
        } catch let error as ImageError {
            guard case .invalidURL = error else { Issue.record("expected invalidURL, got \(error)"); return }
        }
    }

    @Test("a data URL larger than the limit fails before decoding")
    func dataURLLimit() async throws {
        let url = try #require(URL(string: "data:;base64," + Data(count: 4000).base64EncodedString()))
        await #expect(throws: ImageError.tooLarge("data URL of up to 4002 bytes, over the limit of 1000")) {
            _ = try await DataURLImageLoader(maximumSize: 1000).load(ImageLoadRequest(url: url), context: ImageLoadContext())
        }
    }

    @Test("the file loader reads inside its root and refuses .. and symbolic links out of it")
    func fileLoaderRoot() async throws {
        let folder = TemporaryDirectory("file-loader")
        defer { folder.remove() }
        let root = folder.url.appendingPathComponent("root")
        let outside = folder.url.appendingPathComponent("secret.png")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let image = try Fixture.data("hopper.png")
        try image.write(to: root.appendingPathComponent("sub/a.png"))
        try image.write(to: outside)
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("escape.png"), withDestinationURL: outside)
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("inside.png"), withDestinationURL: root.appendingPathComponent("sub/a.png"))
        let loader = FileImageLoader(root: root)

        let inside = try await loader.load(ImageLoadRequest(url: root.appendingPathComponent("sub/a.png")), context: ImageLoadContext())
        #expect(inside.data == image)
        let linkedInside = try await loader.load(ImageLoadRequest(url: root.appendingPathComponent("inside.png")), context: ImageLoadContext())
        #expect(linkedInside.data == image)

        let escapes = [
            try #require(URL(string: root.absoluteString + "sub/../../secret.png")),
            root.appendingPathComponent("escape.png"),
            try #require(URL(string: root.absoluteString + "../missing.png")),
        ]
        for url in escapes {
            do {
                _ = try await loader.load(ImageLoadRequest(url: url), context: ImageLoadContext())
                Issue.record("\(url) was read")
            } catch let error as ImageError {
                guard case .invalidURL = error else { Issue.record("\(url): expected invalidURL, got \(error)"); continue }
            }
        }
        // Without a root, the same file outside loads.
        #expect(try await FileImageLoader().load(ImageLoadRequest(url: outside), context: ImageLoadContext()).data == image)
    }

    @Test("a missing file is a storage error, a folder an invalid URL, a file past the limit too large")
    func fileLoaderErrors() async throws {
        let folder = TemporaryDirectory("file-loader-errors")
        defer { folder.remove() }
        try Data(count: 2000).write(to: folder.url.appendingPathComponent("big.bin"))
        let loader = FileImageLoader(root: folder.url, maximumFileSize: 1000)
        do {
            _ = try await loader.load(ImageLoadRequest(url: folder.url.appendingPathComponent("nope.png")), context: ImageLoadContext())
            Issue.record("a missing file loaded")
        } catch ImageError.storage(let failure) {
            #expect(failure.code == ENOENT)
        }
        await #expect(throws: ImageError.invalidURL("\(folder.url.resolvingSymlinksInPath().path) is not a regular file")) {
            _ = try await FileImageLoader().load(ImageLoadRequest(url: folder.url.resolvingSymlinksInPath()), context: ImageLoadContext())
        }
        do {
            _ = try await loader.load(ImageLoadRequest(url: folder.url.appendingPathComponent("big.bin")), context: ImageLoadContext())
            Issue.record("a file over the limit loaded")
        } catch ImageError.tooLarge {}
    }

    /// Nothing ever writes to the FIFO: an open that waited for a writer would wait for good.
    @Test("a FIFO is refused at once, not waited on", .timeLimit(.minutes(1 * Deadlines.stretch)))
    func fileLoaderRefusesAFIFO() async throws {
        let folder = TemporaryDirectory("file-loader-fifo")
        defer { folder.remove() }
        let fifo = folder.url.resolvingSymlinksInPath().appendingPathComponent("pipe.png")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        await #expect(throws: ImageError.invalidURL("\(fifo.path) is not a regular file")) {
            // The loader's timeout counts the wait for a thread of the shared I/O executor too:
            // stretched, so that only an open that waits for a writer reaches it.
            _ = try await FileImageLoader(root: folder.url, timeout: .seconds(30 * Deadlines.stretch)).load(ImageLoadRequest(url: fifo), context: ImageLoadContext())
        }
    }
}
