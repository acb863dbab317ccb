import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Hostile-input findings 3 and 4: an SVG render had no time limit and could not be cancelled
/// (a 198-byte `<feTurbulence numOctaves="100000">` rendered for more than ten minutes), and an
/// SVG's embedded `data:` image escaped the pixel limit (a 20,000 × 20,000 PNG in a 200 × 200
/// canvas: 2.7 GB). Documents from anyone are now drawn in a child process that is killed past its
/// time limit or when the caller leaves, and embedded images are checked from their headers.
// Serialized: the cancellation test tells its renderer child from others by /proc alone.
@Suite(.serialized, .timeLimit(.minutes(2 * Sanitizers.slowdown))) struct SVGRenderLimitTests {
    /// The finding's document: one filter whose work grows with `numOctaves`.
    static let turbulence = SVGDecoderTests.svg(
        #"<filter id="t"><feTurbulence baseFrequency="0.05" numOctaves="100000"/></filter><rect width="64" height="48" filter="url(#t)"/>"#)

    static func childRenderer(timeLimit: Duration) throws -> SVGDecoder {
        var process = RenderProcess(executable: try #require(WebImageExecutable.url), arguments: ["render-svg"])
        process.timeLimit = timeLimit
        return SVGDecoder(renderer: .childProcess(process))
    }

    /// The child draws what this process draws, pixel for pixel.
    @Test func theChildDrawsAsThisProcessDoes() throws {
        let data = try Data(contentsOf: SVGDecoderTests.repository.appendingPathComponent("Tests/Fixtures/shapes.svg"))
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(200)
        let inProcess = try SVGDecoder().decode(data, options: options).image
        let child = try Self.childRenderer(timeLimit: .seconds(60 * Sanitizers.slowdown)).decode(data, options: options).image
        #expect(child.width == 200 && child.height == 150)
        #expect(child == inProcess)
    }

    /// Under limits set before it started (`prlimit --as`, as the hostile-input table runs
    /// `webimage convert`), the child keeps the lower hard limit instead of failing to raise it:
    /// the document is drawn.
    @Test(.disabled(if: Sanitizers.reservesShadowMemory, "an ASan or TSan process reserves terabytes of address space for its shadow memory: the 3 GiB limit stops it at start"))
    func theChildKeepsALowerInheritedLimit() throws {
        let executable = try #require(WebImageExecutable.url)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("svg-prlimit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("shapes.svg"), output = folder.appendingPathComponent("shapes.png")
        try Data(contentsOf: SVGDecoderTests.repository.appendingPathComponent("Tests/Fixtures/shapes.svg")).write(to: source)
        let run = try CommandRun(URL(fileURLWithPath: "/usr/bin/prlimit"), ["--as=\(3 << 30)", "--", executable.path, "convert", source.path, output.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try CoderRegistry.system().decode(Data(contentsOf: output)).image.width == 64)
    }

    /// Past its time limit the child is killed: a typed error, not ten minutes of a core.
    @Test func aRenderPastItsTimeLimitIsStopped() throws {
        let decoder = try Self.childRenderer(timeLimit: .seconds(2))
        #expect(throws: ImageError.timeout("SVG: the renderer took longer than its time limit")) {
            try decoder.decode(Self.turbulence, options: .init())
        }
    }

    /// A caller that leaves stops the render: the executor job's check sees its task cancelled
    /// and kills the child (its time limit, ten minutes, is not what ends it).
    @Test func aRenderWhoseCallerLeftIsStopped() async throws {
        let decoder = try Self.childRenderer(timeLimit: .seconds(600))
        let executor = BlockingExecutor(name: "svg-test", width: 1)
        defer { executor.shutdown() }
        let render = Task { try await executor.run { try decoder.decode(Self.turbulence, options: .init()) } }
        // Cancelled once the child is drawing: it is seen in /proc.
        var children: [Int32] = []
        while children.isEmpty {
            await Task.yield()
            children = Self.rendererChildren()
        }
        render.cancel()
        await #expect(throws: ImageError.cancelled) { _ = try await render.value }
        #expect(Set(Self.rendererChildren()).isDisjoint(with: children), "the child was killed and reaped")
    }

    /// The process ids of this process's `command` children (`render-svg`, `render-pdf`), from /proc.
    static func rendererChildren(_ command: String = "render-svg") -> [Int32] {
        let me = getpid()
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, Int32(fields[1]) == me,
                  let arguments = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { return false }
            return String(decoding: arguments, as: UTF8.self).contains(command)
        }
    }

    /// A PNG header of `width` × `height` (an `IHDR` and no image data): what the check reads.
    static func pngHeader(width: UInt32, height: UInt32) -> Data {
        var ihdr = Data("IHDR".utf8)
        for value in [width, height] { ihdr += withUnsafeBytes(of: value.bigEndian) { Data($0) } }
        ihdr += Data([8, 6, 0, 0, 0])
        let crc = ihdr.reduce(UInt32(0xFFFF_FFFF)) { crc, byte in
            var crc = crc ^ UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            return crc
        } ^ 0xFFFF_FFFF
        return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]) + ihdr + withUnsafeBytes(of: crc.bigEndian) { Data($0) }
    }

    /// An embedded image over the pixel limit is refused from its header, before anything is
    /// drawn, however the URL is written; one within the limit is drawn.
    @Test func embeddedImagesObeyThePixelLimit() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 50_000_000
        let huge = Self.pngHeader(width: 20_000, height: 20_000).base64EncodedString()
        for href in [#"href="data:image/png;base64,\#(huge)""#, #"xlink:href='DATA:image/png;base64,\#(huge)'"#] {
            let document = SVGDecoderTests.svg(#"<image width="200" height="200" \#(href)/>"#, width: "200", height: "200")
            #expect { try SVGDecoder().decode(document, options: options) } throws: { error in
                guard case ImageError.tooLarge(let message) = error else { return false }
                return message.contains("embedded png image of 20000×20000")
            }
        }
        // A real image within the limit: drawn.
        let small = try Data(contentsOf: SVGDecoderTests.repository.appendingPathComponent("Tests/Fixtures/hopper-rgba-32.png"))
        let document = SVGDecoderTests.svg(#"<image width="32" height="32" href="data:image/png;base64,\#(small.base64EncodedString())"/>"#, width: "32", height: "32")
        let image = try SVGDecoder().decode(document, options: options).image
        #expect(image.width == 32)
        #expect(stride(from: 3, to: image.pixels.count, by: 4).contains { image.pixels[$0] > 0 }, "the embedded image is drawn")
    }
}
