import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// What `webimage-gtk` opens: `--list` prints the items it found (name, thumbnail URL, image
/// URL) and exits before GTK starts, so these need no display.
@Suite(
    "What the gallery opens: a folder, a URL list, a running proxy",
    .enabled(if: GalleryProgram.executable != nil, "webimage-gtk was not built beside the tests"),
    // Under a sanitizer the gallery (built with it) decodes hundreds of images for minutes on
    // both cores and starved the rest of the suite past its deadlines (CI, 2026-11-25); its
    // subject is the view layer's rules, which the normal suite checks.
    .disabled(if: Sanitizers.reservesShadowMemory, "too heavy under a sanitizer: runs in the normal suite"),
    .timeLimit(.minutes(2 * Deadlines.stretch))
)
struct GallerySourceTests {
    /// Runs `webimage-gtk ARGUMENTS --list`: launched and awaited on one thread (`CommandRun`).
    /// `ChildProcess.waitForExit()` can wait for ever on a short-lived process when many start
    /// at once (the exit is seen through the run loop of the thread that launched it).
    static func list(_ arguments: [String]) throws -> (status: Int32, items: [[String]], stderr: String) {
        let run = try CommandRun(try #require(GalleryProgram.executable), arguments + ["--list"], input: Data())
        let lines = run.stdout.split(separator: "\n").map { $0.components(separatedBy: "\t") }
        return (run.status, lines, run.stderr)
    }

    static func folder(_ files: [String: Data]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-gallery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    static func png(_ red: UInt8, _ green: UInt8, _ blue: UInt8) throws -> Data {
        try CoderRegistry.system().encode(ImageContainer(image: SolidColours.bitmap(.init(red: red, green: green, blue: blue), size: 40)), as: .png)
    }

    @Test("a folder: its images by content, sorted, hidden files and other files left out")
    func folder() async throws {
        let folder = try Self.folder([
            "b.png": try Self.png(0, 0, 255), "a-no-extension": try Self.png(255, 0, 0), ".hidden.png": try Self.png(0, 255, 0),
            "notes.txt": Data("not an image".utf8),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Self.list([folder.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.items.map { $0[0] } == ["a-no-extension", "b.png"])
        #expect(result.items.allSatisfy { $0.count == 3 && $0[1] == $0[2] && $0[1].hasPrefix("file:///") })
        #expect(result.items.first?[1] == folder.appendingPathComponent("a-no-extension").absoluteString)
    }

    @Test("a URL list: one URL or path a line, comments and blank lines skipped")
    func urlList() async throws {
        let folder = try Self.folder(["local.png": try Self.png(1, 2, 3)])
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("list.txt")
        try "# thumbnails\nhttps://example.com/a.jpg\n\n  local.png  \ndata:image/png;base64,AAAA\n".write(to: list, atomically: true, encoding: .utf8)
        let result = try Self.list([list.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.items.map { $0[1] } == [
            "https://example.com/a.jpg", folder.appendingPathComponent("local.png").absoluteString, "data:image/png;base64,AAAA",
        ])
    }

    @Test("nothing to show is an error, with a message")
    func emptyAndMissing() async throws {
        let folder = try Self.folder(["notes.txt": Data("text".utf8)])
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = try Self.list([folder.path])
        #expect(empty.status == 1 && empty.stderr.contains("holds no images"), "\(empty.stderr)")
        let missing = try Self.list([folder.appendingPathComponent("missing").path])
        #expect(missing.status == 1 && missing.stderr.contains("cannot read"), "\(missing.stderr)")
    }

    /// A running `webimage serve` with a signing key: the gallery takes the thumbnail URLs its
    /// gallery page offers (signed: the gallery could not sign them itself), the one of the
    /// width that covers the cell, and the proxy renders them.
    @Test("a running proxy: its gallery page's signed thumbnails, of the cell's width")
    func runningProxy() async throws {
        let webimage = try #require(GalleryProgram.executable?.deletingLastPathComponent().appendingPathComponent("webimage"))
        try #require(FileManager.default.isExecutableFile(atPath: webimage.path), "webimage was not built beside the tests")
        let folder = try Self.folder(["red.png": try Self.png(255, 0, 0), "blue.png": try Self.png(0, 0, 255)])
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ChildProcess(webimage, [
            "serve", "--origin-dir", folder.path, "--host", "127.0.0.1", "--port", "0",
            "--cache-dir", folder.appendingPathComponent(".cache").path,
        ], environment: ["WEBIMAGE_SIGNING_KEY": "gallery-test-key"]) { !$0.hasPrefix("WEBIMAGE_") }
        defer { server.kill() }
        let listening = try #require(await server.waitForLine { $0.hasPrefix("listening on http://") }, "\(server.stderr)")
        let base = String(listening.dropFirst("listening on ".count))

        let result = try Self.list([base + "/", "--cell", "300"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.items.map { $0[0] } == ["blue.png", "red.png"])
        let red = try #require(result.items.last)
        #expect(red[1].contains("w=320&h=320&fit=cover") && red[1].contains("&sig="), "\(red[1])")
        #expect(red[2].contains("fit=contain"), "\(red[2])")
        // The page gives each image's ThumbHash (the placeholder its cell shows while loading):
        // red's decodes to red.
        let hash = try #require(red.count == 4 ? red[3] : nil, "\(red)")
        let placeholder = try ImagePlaceholder.thumbHash(hash).bitmap()
        let centre = placeholder.height / 2 * placeholder.bytesPerRow + placeholder.width / 2 * 4
        let colour = placeholder.pixels[centre..<centre + 3].map(Int.init)
        #expect(abs(colour[0] - 255) <= 24 && colour[1] <= 24 && colour[2] <= 24, "\(hash) decodes to \(colour)")

        // The listed URLs are the proxy's own, signed: it renders them. The download's deadline
        // (15 s by default) stretched like the tests' others: the render, by a debug build on a
        // loaded two-core machine, is slow, not hung.
        var http = HTTPImageLoader.Configuration(acceptedFormats: CoderRegistry.system().decodableFormats)
        http.timeout = .seconds(60 * Deadlines.stretch)
        let manager = ImageManager(configuration: .standard(cache: ImageCache(disk: nil), http: http))
        let thumbnail = try await manager.image(for: try #require(URL(string: red[1])))
        let pixel = Array(thumbnail.image.pixels.prefix(3))
        // Within a lossy encoding's error (format=auto answers WebP to a client that takes it).
        #expect(SolidColours.RGB(red: pixel[0], green: pixel[1], blue: pixel[2]).isClose(to: .init(red: 255, green: 0, blue: 0)), "\(pixel)")
    }
}
