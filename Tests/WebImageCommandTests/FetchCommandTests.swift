import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// `webimage fetch`, `cache`, and `info` / `convert` on URLs, run as the built executable
/// against a real origin on loopback. Skipped with a notice when the executable was not built
/// beside the tests.
@Suite("webimage fetch and cache", .enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"))
struct FetchCommandTests {
    func run(_ arguments: [String], input: String? = nil) async throws -> CommandRun {
        try await runWebImage(arguments, input: input)
    }

    func jsonLines(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("fetch loads each URL once however often it is listed, then serves it from disk; failures exit non-zero")
    func fetch() async throws {
        let origin = try await TestOrigin.start()
        let folder = TemporaryDirectory("fetch")
        defer { folder.remove() }
        origin.register("/a.jpg", data: try Fixture.data("hopper.jpg"))
        origin.register("/b.png", data: try Fixture.data("hopper.png"))
        let cacheDir = folder.url.appendingPathComponent("cache").path
        let a = origin.url("/a.jpg").absoluteString, b = origin.url("/b.png").absoluteString

        let first = try await run(["fetch", a, b, a, "--json", "--cache-dir", cacheDir])
        #expect(first.status == 0, "\(first.stderr)")
        let lines = try jsonLines(first.stdout)
        #expect(lines.map { $0["url"] as? String } == [a, b, a])
        #expect(lines.allSatisfy { $0["source"] as? String == "network" })
        #expect(lines.map { $0["width"] as? Int } == [128, 128, 128])
        #expect(lines[0]["bytes"] as? Int == (try Fixture.data("hopper.jpg")).count)
        #expect(lines.allSatisfy { $0["ms"] is Double || $0["ms"] is Int })
        #expect(origin.requestCount(path: "/a.jpg") == 1)

        let second = try await run(["fetch", a, "--json", "--resize", "32x32", "--output-dir", folder.url.appendingPathComponent("out").path, "--cache-dir", cacheDir])
        #expect(second.status == 0, "\(second.stderr)")
        let again = try jsonLines(second.stdout)
        #expect(again.first?["source"] as? String == "disk")
        #expect(again.first?["width"] as? Int == 32)
        #expect(origin.requestCount(path: "/a.jpg") == 1)
        let written = try Data(contentsOf: folder.url.appendingPathComponent("out/a.jpg"))
        #expect(ImageHeader(sniffing: written)?.pixelWidth == 32)

        let failing = try await run(["fetch", origin.url("/status/404").absoluteString, b, "--json", "--cache-dir", cacheDir])
        #expect(failing.status != 0)
        let results = try jsonLines(failing.stdout)
        #expect((results.first?["error"] as? String)?.contains("404") == true)
        #expect(results.last?["source"] as? String == "disk")

        let table = try await run(["fetch", b, "--cache-dir", cacheDir])
        #expect(table.status == 0)
        #expect(table.stdout.contains("disk"))
        #expect(table.stdout.contains("128×128"))

        let stats = try await run(["cache", "stats", "--json", "--cache-dir", cacheDir])
        let object = try #require(try jsonLines(stats.stdout).first)
        #expect(object["entries"] as? Int == 2)
        let clear = try await run(["cache", "clear", "--cache-dir", cacheDir])
        #expect(clear.status == 0)
        #expect(clear.stdout.contains("removed 2 entries"))
        let empty = try await run(["cache", "stats", "--json", "--cache-dir", cacheDir])
        #expect(try jsonLines(empty.stdout).first?["entries"] as? Int == 0)
        try await origin.shutdown()
    }

    @Test("fetch --retries 2 rides out an origin that fails twice; --retries 0 fails at its first 503; a negative count is refused")
    func fetchRetries() async throws {
        let origin = try await TestOrigin.start()
        let folder = TemporaryDirectory("fetch-retries")
        defer { folder.remove() }
        origin.register("/a.jpg", data: try Fixture.data("hopper.jpg"))
        let cacheDir = folder.url.appendingPathComponent("cache").path

        let recovered = origin.url("/flaky/a.jpg?fail=2").absoluteString
        let patient = try await run(["fetch", recovered, "--retries", "2", "--json", "--cache-dir", cacheDir])
        #expect(patient.status == 0, "\(patient.stderr)")
        #expect(try jsonLines(patient.stdout).first?["width"] as? Int == 128)
        #expect(origin.requestCount(path: "/flaky/a.jpg") == 3)

        // Another target: its own count of failures.
        let failing = origin.url("/flaky/a.jpg?fail=2&key=b").absoluteString
        let impatient = try await run(["fetch", failing, "--retries", "0", "--json", "--cache-dir", cacheDir])
        #expect(impatient.status != 0)
        #expect((try jsonLines(impatient.stdout).first?["error"] as? String)?.contains("503") == true)
        #expect(origin.requestCount(path: "/flaky/a.jpg") == 4)

        let negative = try await run(["fetch", failing, "--retries", "-1", "--cache-dir", cacheDir])
        #expect(negative.status != 0)
        #expect(negative.stderr.contains("--retries"), "\(negative.stderr)")
        #expect(origin.requestCount(path: "/flaky/a.jpg") == 4)
        try await origin.shutdown()
    }

    @Test("cache trim removes least recently used entries down to a size")
    func trim() async throws {
        let origin = try await TestOrigin.start()
        let folder = TemporaryDirectory("trim")
        defer { folder.remove() }
        let names = ["hopper.jpg", "hopper.png", "hopper.webp", "hopper.gif"]
        for name in names { origin.register("/\(name)", data: try Fixture.data(name)) }
        let cacheDir = folder.url.appendingPathComponent("cache").path
        let fetch = try await run(["fetch"] + names.map { origin.url("/\($0)").absoluteString } + ["--cache-dir", cacheDir])
        #expect(fetch.status == 0, "\(fetch.stderr)")
        let trim = try await run(["cache", "trim", "--size", "0", "--cache-dir", cacheDir])
        #expect(trim.status == 0, "\(trim.stderr)")
        #expect(trim.stdout.contains("removed 4 entries"))
        try await origin.shutdown()
    }

    @Test("info and convert read http URLs through the pipeline")
    func infoAndConvertURLs() async throws {
        let origin = try await TestOrigin.start()
        let folder = TemporaryDirectory("info-url")
        defer { folder.remove() }
        origin.register("/anim.gif", data: try Fixture.data("hopper.gif"))
        let url = origin.url("/anim.gif").absoluteString
        let cacheDir = folder.url.appendingPathComponent("cache").path
        let info = try await run(["info", url, "--json", "--cache-dir", cacheDir])
        #expect(info.status == 0, "\(info.stderr)")
        let object = try #require(try jsonLines(info.stdout).first)
        #expect(object["file"] as? String == url)
        #expect(object["format"] as? String == "gif")
        let output = folder.url.appendingPathComponent("out.png").path
        let convert = try await run(["convert", url, output, "--resize", "16x16", "--cache-dir", cacheDir])
        #expect(convert.status == 0, "\(convert.stderr)")
        #expect(ImageHeader(sniffing: try Data(contentsOf: URL(fileURLWithPath: output)))?.pixelWidth == 16)
        #expect(origin.requestCount(path: "/anim.gif") == 1)   // the second command read the disk cache
        try await origin.shutdown()
    }

    @Test("demo serves a folder on loopback, prefetches it from the network, then loads thumbnails from disk and from memory")
    func demo() async throws {
        let folder = TemporaryDirectory("demo")
        defer { folder.remove() }
        let images = folder.url.appendingPathComponent("images")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        let names = ["hopper.jpg", "hopper.png", "hopper.webp", "hopper.gif"]
        for name in names { try Fixture.data(name).write(to: images.appendingPathComponent(name)) }
        let output = folder.url.appendingPathComponent("thumbnails")
        let run = try await run(["demo", "--images", images.path, "--cache-dir", folder.url.appendingPathComponent("cache").path,
                                 "--output-dir", output.path, "--size", "64"])
        #expect(run.status == 0, "\(run.stderr)")
        let rows = run.stdout.split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasPrefix("prefetch (originals)") && $0.hasSuffix("network 4") }, "\(run.stdout)")
        #expect(rows.contains { $0.hasPrefix("64 px thumbnails, pass 1") && $0.hasSuffix("disk 4") }, "\(run.stdout)")
        #expect(rows.contains { $0.hasPrefix("64 px thumbnails, pass 2") && $0.hasSuffix("memory 4") }, "\(run.stdout)")
        for name in names {
            let thumbnail = try Data(contentsOf: output.appendingPathComponent(name.replacingOccurrences(of: #"\.\w+$"#, with: ".webp", options: .regularExpression)))
            #expect(ImageHeader(sniffing: thumbnail)?.format == .webp)
            #expect(ImageHeader(sniffing: thumbnail)?.pixelWidth == 64)
        }
    }
}
