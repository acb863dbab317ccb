import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// `webimage prefetch`, run as the built executable against a real origin on loopback.
@Suite("webimage prefetch", .enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"))
struct PrefetchCommandTests {
    func run(_ arguments: [String], input: String? = nil) async throws -> CommandRun {
        try await runWebImage(arguments, input: input)
    }

    @Test("prefetch reads a list from a file or stdin, reports progress lines and a summary; fetch then reads the disk")
    func prefetch() async throws {
        let origin = try await TestOrigin.start()
        let folder = TemporaryDirectory("prefetch")
        defer { folder.remove() }
        let names = ["hopper.jpg", "hopper.png", "hopper.webp", "hopper.gif"]
        for name in names { origin.register("/\(name)", data: try Fixture.data(name)) }
        let urls = names.map { origin.url("/\($0)").absoluteString }
        let bytes = try names.reduce(0) { $0 + (try Fixture.data($1)).count }
        let cacheDir = folder.url.appendingPathComponent("cache").path
        let list = folder.url.appendingPathComponent("urls.txt")
        try ("# photos\n\n" + urls[0...1].joined(separator: "\n") + "\n   \n" + urls[0] + "\n").write(to: list, atomically: true, encoding: .utf8)

        // From a file: two URLs (one listed twice), both downloaded once.
        let first = try await run(["prefetch", "--input", list.path, "--cache-dir", cacheDir])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("prefetched 3 URLs: 2 finished, 1 skipped, 0 failed"), "\(first.stdout)")
        let twoBytes = try (Fixture.data(names[0])).count + (Fixture.data(names[1])).count
        #expect(first.stdout.contains(" \(twoBytes) bytes"), "\(first.stdout)")
        // Not a terminal: plain progress lines, the last at 100%.
        let progress = first.stderr.split(separator: "\n").filter { $0.hasPrefix("prefetch: ") }
        #expect(!progress.isEmpty)
        #expect(progress.last?.hasPrefix("prefetch: 3/3 (100%)") == true, "\(first.stderr)")
        #expect(!first.stderr.contains("\r"))
        #expect(origin.requestCount(path: "/hopper.jpg") == 1)

        // From stdin: all four, with a 404 and a line that is not a URL.
        let input = (urls + [origin.url("/status/404").absoluteString, "not a url"]).joined(separator: "\n")
        let second = try await run(["prefetch", "--concurrency", "2", "--cache-dir", cacheDir], input: input)
        #expect(second.status == 1)
        #expect(second.stdout.contains("prefetched 6 URLs: 2 finished, 2 skipped, 2 failed"), "\(second.stdout)")
        // No scheme: a path on this machine, which does not exist; the line is echoed as given.
        #expect(second.stderr.contains("failed: not a url: "), "\(second.stderr)")
        #expect(second.stderr.contains("prefetch: 6/6 (100%)"), "\(second.stderr)")
        let dash = try await run(["prefetch", "--input", "-", "--cache-dir", cacheDir], input: urls.joined(separator: "\n"))
        #expect(dash.status == 0, "\(dash.stderr)")
        #expect(dash.stdout.contains("prefetched 4 URLs: 0 finished, 4 skipped, 0 failed, 0 bytes"), "\(dash.stdout)")
        for name in names { #expect(origin.requestCount(path: "/\(name)") == 1, "\(name)") }
        #expect(bytes > twoBytes)

        // Everything prefetched is now read from the disk cache.
        let fetch = try await run(["fetch"] + urls + ["--json", "--cache-dir", cacheDir])
        #expect(fetch.status == 0, "\(fetch.stderr)")
        let sources = fetch.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["source"] as? String
        }
        #expect(sources == ["disk", "disk", "disk", "disk"])
        for name in names { #expect(origin.requestCount(path: "/\(name)") == 1, "\(name)") }
        try await origin.shutdown()
    }

    @Test("prefetch --retries: the default rides out an origin that fails twice, --retries 0 does not")
    func prefetchRetries() async throws {
        let origin = try await TestOrigin.start()
        let folder = TemporaryDirectory("prefetch-retries")
        defer { folder.remove() }
        origin.register("/a.jpg", data: try Fixture.data("hopper.jpg"))
        let cacheDir = folder.url.appendingPathComponent("cache").path

        let byDefault = try await run(["prefetch", origin.url("/flaky/a.jpg?fail=2").absoluteString, "--cache-dir", cacheDir])
        #expect(byDefault.status == 0, "\(byDefault.stderr)")
        #expect(byDefault.stdout.contains("1 finished"), "\(byDefault.stdout)")
        #expect(origin.requestCount(path: "/flaky/a.jpg") == 3)

        let once = try await run(["prefetch", origin.url("/flaky/a.jpg?fail=2&key=b").absoluteString, "--retries", "0", "--cache-dir", cacheDir])
        #expect(once.status == 1)
        #expect(once.stdout.contains("1 failed"), "\(once.stdout)")
        #expect(origin.requestCount(path: "/flaky/a.jpg") == 4)
        try await origin.shutdown()
    }
}
