import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The command line as a newcomer meets it: the same argument forms across commands, units and
/// plurals people write and read, errors in one sentence with the details behind `--verbose`.
@Suite("webimage speaks plainly", .enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"))
struct CommandPlainnessTests {
    func run(_ arguments: [String], input: String? = nil) async throws -> CommandRun {
        try await runWebImage(arguments, input: input)
    }

    @Test("--version names the version and the codec libraries")
    func version() async throws {
        let run = try await run(["--version"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.first?.wholeMatch(of: /webimage \d+\.\d+\.\d+(-[a-z0-9.]+)?/) != nil, "\(run.stdout)")
        for library in ["libjpeg-turbo", "libpng", "libwebp", "giflib", "lcms2", "libavif", "libheif"] {
            #expect(run.stdout.contains(library), "\(library) missing from \(run.stdout)")
        }
    }

    @Test("prefetch takes URLs and paths as arguments, echoes a bad line, and counts in words")
    func prefetchArguments() async throws {
        let origin = try await TestOrigin.start()
        let folder = TemporaryDirectory("plain-prefetch")
        defer { folder.remove() }
        origin.register("/a.png", data: try Fixture.data("hopper.png"))
        let cacheDir = folder.url.appendingPathComponent("cache").path
        let local = Fixture.directory.appendingPathComponent("hopper.jpg").path

        let one = try await run(["prefetch", origin.url("/a.png").absoluteString, "--cache-dir", cacheDir], input: "")
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.contains("prefetched 1 URL: 1 finished"), "\(one.stdout)")
        #expect(origin.requestCount(path: "/a.png") == 1)

        // A path on this machine is loaded like a file: URL; a line that is neither is echoed.
        let mixed = try await run(["prefetch", local, "http://[::1", "--cache-dir", cacheDir])
        #expect(mixed.status == 1)
        #expect(mixed.stdout.contains("prefetched 2 URLs: 1 finished, 0 skipped, 1 failed"), "\(mixed.stdout)")
        #expect(mixed.stderr.contains("failed: http://[::1: neither a URL nor a path"), "\(mixed.stderr)")
        try await origin.shutdown()
    }

    @Test("fetch reads a local path, takes a bare width, and says a refused connection in one sentence")
    func fetchPlainly() async throws {
        let folder = TemporaryDirectory("plain-fetch")
        defer { folder.remove() }
        let cacheDir = folder.url.appendingPathComponent("cache").path
        let local = Fixture.directory.appendingPathComponent("hopper.png").path   // 128 × 128

        let fetched = try await run(["fetch", local, "--resize", "32", "--json", "--cache-dir", cacheDir])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout.contains("\"width\":32"), "\(fetched.stdout)")
        #expect(fetched.stdout.contains("\"height\":32"), "\(fetched.stdout)")

        let port = try await TestOrigin.closedPort()
        let refused = try await run(["fetch", "http://127.0.0.1:\(port)/x.jpg", "--cache-dir", cacheDir])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains(": the server refused the connection\n"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("errno"), "\(refused.stderr)")
        let verbose = try await run(["fetch", "http://127.0.0.1:\(port)/x.jpg", "--verbose", "--cache-dir", cacheDir])
        #expect(verbose.stderr.contains("the server refused the connection (network failure: connectionRefused"), "\(verbose.stderr)")
    }

    @Test("cache trim takes sizes with units; one entry is an entry")
    func trimUnits() async throws {
        let folder = TemporaryDirectory("plain-trim")
        defer { folder.remove() }
        let cacheDir = folder.url.appendingPathComponent("cache").path
        let local = Fixture.directory.appendingPathComponent("hopper.png").path
        let fetched = try await run(["fetch", local, "--cache-dir", cacheDir])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let kept = try await run(["cache", "trim", "--size", "1MiB", "--cache-dir", cacheDir])
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.stdout.contains("removed 0 entries (0 bytes), 0 of them expired; 1 entry ("), "\(kept.stdout)")
        #expect(kept.stdout.contains(") remains"), "\(kept.stdout)")
        let decimal = try await run(["cache", "trim", "--size", "1MB", "--cache-dir", cacheDir])
        #expect(decimal.status == 0, "\(decimal.stderr)")
        let cleared = try await run(["cache", "trim", "--size", "0K", "--cache-dir", cacheDir])
        #expect(cleared.stdout.contains("removed 1 entry ("), "\(cleared.stdout)")
        let wrong = try await run(["cache", "trim", "--size", "1 parsec", "--cache-dir", cacheDir])
        #expect(wrong.status != 0)
    }

    /// dav1d writes every stream error to standard error, and libavif gives no way to stop it;
    /// CCodecShims' wi_dav1d.c removes its logger. avifdec (libavif's own tool, linked the usual
    /// way) shows that the input makes dav1d log; webimage reports the failure once, its own way.
    @Test("a corrupt AVIF fails with one line of ours, no dav1d log")
    func corruptAVIFIsQuiet() async throws {
        let folder = TemporaryDirectory("plain-avif")
        defer { folder.remove() }
        var bytes = [UInt8](try Data(contentsOf: Fixture.directory.appendingPathComponent("avif-gradient.avif")))
        let mdat = try #require(bytes.indices.dropLast(4).first { bytes[$0..<$0 + 4].elementsEqual("mdat".utf8) })
        for index in (mdat + 12)..<bytes.count { bytes[index] = 0xFF }   // the AV1 payload, after its first bytes
        let bad = folder.url.appendingPathComponent("bad.avif")
        try Data(bytes).write(to: bad)

        let reference = try CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["avifdec", bad.path, folder.url.appendingPathComponent("ref.png").path])
        #expect(reference.stdout.contains("Error parsing OBU data") || reference.stderr.contains("Error parsing OBU data"),
                "avifdec no longer shows dav1d's log for this input: \(reference.stdout) \(reference.stderr)")

        let ours = try await run(["convert", bad.path, folder.url.appendingPathComponent("out.png").path])
        #expect(ours.status == 1)
        #expect(ours.stderr.hasPrefix("webimage convert: \(bad.path): corrupt image data"), "\(ours.stderr)")
        #expect(!ours.stderr.contains("OBU"), "\(ours.stderr)")
        #expect(ours.stderr.split(separator: "\n").count == 1, "\(ours.stderr)")
    }
}
