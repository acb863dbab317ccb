import Foundation
import Testing
import WebImageTestSupport

/// The codec libraries few runs need (FFmpeg, poppler-glib, libjxl, libheif, libavif) are opened
/// by the first file that needs them, not at every start (Sources/C/CLazyLibraries): what the
/// dynamic loader reports opening (`LD_DEBUG=files`, glibc's own account) for a command that
/// meets none of those formats, and for one that meets each.
@Suite("webimage opens a codec library when a file needs it", .enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"))
struct LibraryLoadingTests {
    /// The sonames opened when first used, by their stem.
    static let openedWhenUsed = ["libjxl.so", "libheif.so", "libavif.so", "libpoppler-glib.so", "libavformat.so", "libavcodec.so"]

    /// Runs `arguments` and returns the file names of the shared libraries the loader opened.
    func opened(_ arguments: [String]) async throws -> Set<String> {
        let run = try await runWebImage(arguments, environment: ["LD_DEBUG": "files"])
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        // "  4711:	file=libpng16.so.16 [0];  needed by ./webimage [0]", or "dynamically loaded by".
        let names = run.stderr.matches(of: /file=(\S+) \[\d+\];/).map { String($0.output.1) }
        return Set(names.map { ($0 as NSString).lastPathComponent })
    }

    func contains(_ names: Set<String>, _ stem: String) -> Bool { names.contains { $0.hasPrefix(stem) } }

    @Test("a PNG made a JPEG opens libpng and none of the libraries opened when used")
    func stillFormatsOpenNone() async throws {
        let folder = TemporaryDirectory("lazy-none")
        defer { folder.remove() }
        let names = try await opened(["convert", Fixture.url("hopper.png").path, folder.url.appendingPathComponent("out.jpg").path])
        #expect(contains(names, "libpng16.so"), "the loader's report was read: \(names.sorted())")
        for stem in Self.openedWhenUsed {
            #expect(!contains(names, stem), "\(stem) opened by a command that met no file of its format")
        }
    }

    @Test("an AVIF, a HEIF and a JPEG XL each open their library", arguments: [
        ("avif-gradient.avif", "out.png", "libavif.so"),
        ("heic-gradient.heic", "out.png", "libheif.so"),
        ("hopper.png", "out.jxl", "libjxl.so"),
    ])
    func eachFormatOpensItsLibrary(input: String, output: String, stem: String) async throws {
        let folder = TemporaryDirectory("lazy-one")
        defer { folder.remove() }
        let names = try await opened(["convert", Fixture.url(input).path, folder.url.appendingPathComponent(output).path])
        #expect(contains(names, stem), "\(stem) not opened for \(input) → \(output): \(names.sorted())")
        for other in Self.openedWhenUsed where other != stem {
            #expect(!contains(names, other), "\(other) opened for \(input) → \(output)")
        }
    }
}
