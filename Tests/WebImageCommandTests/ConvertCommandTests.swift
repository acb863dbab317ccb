import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

/// `webimage convert`, run as the built executable; the outputs are decoded and checked with the
/// library's own decoders.
@Suite(.enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"))
struct ConvertCommandTests {
    let directory = TemporaryDirectory("convert")
    let registry = CoderRegistry.system()
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func convert(_ arguments: [String]) throws -> CommandRun {
        try CommandRun(try #require(WebImageExecutable.url), ["convert"] + arguments, in: Self.repository)
    }

    func output(_ name: String) -> String { directory.url.appendingPathComponent(name).path }

    func decodeOutput(_ name: String) throws -> (ImageFormat?, ImageContainer) {
        let data = try Data(contentsOf: directory.url.appendingPathComponent(name))
        return (ImageFormat(sniffing: data), try registry.decode(data))
    }

    @Test(arguments: [("out.png", ImageFormat.png), ("out.jpg", .jpeg), ("out.jpeg", .jpeg), ("out.webp", .webp), ("out.avif", .avif), ("out.jxl", .jxl)])
    func writesTheFormatOfTheExtension(name: String, format: ImageFormat) throws {
        defer { directory.remove() }
        let run = try convert(["Demo/images/flower.webp", output(name)])
        #expect(run.status == 0, "\(run.stderr)")
        let (sniffed, image) = try decodeOutput(name)
        #expect(sniffed == format)
        #expect(image.image.width == 480 && image.image.height == 360)
    }

    /// HEIC, AVIF and JPEG XL sources are read as the library reads them: the PNG written has
    /// the size and the pixels of the library's own decode.
    @Test(arguments: ["heic-gradient.heic", "avif-gradient.avif", "jxl-lossy.jxl", "jxl-animated.jxl"])
    func readsTheNewFormats(fixture: String) throws {
        defer { directory.remove() }
        let source = "Tests/Fixtures/\(fixture)"
        let run = try convert([source, output("out.png"), "--frame", "0"])
        #expect(run.status == 0, "\(run.stderr)")
        let (sniffed, written) = try decodeOutput("out.png")
        let direct = try registry.decode(try Data(contentsOf: Self.repository.appendingPathComponent(source)))
        #expect(sniffed == .png)
        #expect(written.image.width == direct.image.width && written.image.height == direct.image.height)
        // The same picture whatever channel layout each side keeps (the PNG may add alpha).
        for (x, y) in [(0, 0), (direct.image.width / 2, direct.image.height / 2), (direct.image.width - 1, direct.image.height - 1)] {
            #expect(Self.rgb(written.image, x, y) == Self.rgb(direct.image, x, y), "\(fixture) at (\(x), \(y))")
        }
    }

    static func rgb(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [UInt8] {
        let at = y * bitmap.bytesPerRow + x * bitmap.pixelFormat.bytesPerPixel
        let channels = bitmap.pixelFormat.bytesPerPixel >= 3 ? [0, 1, 2] : [0, 0, 0]
        return channels.map { bitmap.pixels[at + $0] }
    }

    /// An SVG (64 × 48) is drawn at the size asked for, larger than its own too.
    @Test func readsSVG() throws {
        defer { directory.remove() }
        let run = try convert(["Tests/Fixtures/shapes.svg", output("s.png"), "--resize", "128x128"])
        #expect(run.status == 0, "\(run.stderr)")
        let (sniffed, image) = try decodeOutput("s.png")
        #expect(sniffed == .png && image.image.width == 128 && image.image.height == 96)
    }

    /// By default the output is sRGB with no profile; `--keep-color-profile` keeps the stored
    /// values and the profile (a green pixel tagged "red and green swapped" stays green and tagged).
    @Test(arguments: [[], ["--keep-color-profile"]])
    func colourIsConvertedUnlessKept(flags: [String]) throws {
        defer { directory.remove() }
        let run = try convert(["Tests/Fixtures/color/swapped-green.png", output("out.png")] + flags)
        #expect(run.status == 0, "\(run.stderr)")
        let data = try Data(contentsOf: directory.url.appendingPathComponent("out.png"))
        let stored = try registry.decode(data, options: .preservingColor)
        let kept = !flags.isEmpty
        #expect((stored.iccProfile != nil) == kept)
        // Red once converted, green as stored.
        #expect(stored.image.pixels[0] > 128 ? !kept : kept)
        #expect(stored.image.pixels[1] > 128 ? kept : !kept)
    }

    @Test(arguments: [("contain", 100, 75), ("cover", 100, 100), ("fill", 100, 100)])
    func resizesIntoTheBox(fit: String, width: Int, height: Int) throws {
        defer { directory.remove() }
        let run = try convert(["Demo/images/flower.webp", output("r.webp"), "--resize", "100x100", "--fit", fit])
        #expect(run.status == 0, "\(run.stderr)")
        let (_, image) = try decodeOutput("r.webp")
        #expect(image.image.width == width && image.image.height == height)
    }

    @Test func resizesByOneSideKeepingTheAspectRatio() throws {
        defer { directory.remove() }
        #expect(try convert(["Demo/images/flower.webp", output("w.webp"), "--resize", "240x"]).status == 0)
        #expect(try decodeOutput("w.webp").1.image.height == 180)
        #expect(try convert(["Demo/images/flower.webp", output("h.webp"), "--resize", "x90"]).status == 0)
        #expect(try decodeOutput("h.webp").1.image.width == 120)
    }

    @Test func animationsStayAnimatedAndFrameNPicksOneComposedFrame() throws {
        defer { directory.remove() }
        let source = try registry.decode(Data(contentsOf: Self.repository.appendingPathComponent("Demo/images/iss634-animated.webp")))
        let frames = try #require(source.animation?.frames)

        #expect(try convert(["Demo/images/iss634-animated.webp", output("all.webp"), "--quality", "100"]).status == 0)
        #expect(try decodeOutput("all.webp").1.isAnimated)

        let run = try convert(["Demo/images/iss634-animated.webp", output("frame.png"), "--frame", "5"])
        #expect(run.status == 0, "\(run.stderr)")
        let (_, still) = try decodeOutput("frame.png")
        #expect(still.animation == nil)
        #expect(still.image.pixels == frames[5].bitmap.pixels, "frame 5, composed, written losslessly")
    }

    @Test func failuresExitNonZeroWithOneLineOnStandardError() throws {
        defer { directory.remove() }
        let cases: [([String], String)] = [
            (["Demo/images/flower.webp", output("x.bmp")], ".bmp"),
            (["Demo/images/no-such.webp", output("x.png")], "no-such.webp"),
            (["Demo/images/flower.webp", output("x.png"), "--frame", "3"], "no frame 3"),
            (["Package.swift", output("x.png")], "Package.swift"),
        ]
        for (arguments, mention) in cases {
            let run = try convert(arguments)
            #expect(run.status != 0, "\(arguments)")
            let lines = run.stderr.split(separator: "\n")
            #expect(lines.count == 1 && run.stderr.contains(mention), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output("x.png")))
        }
        #expect(try convert(["Demo/images/flower.webp", output("x.png"), "--resize", "axb"]).status != 0)
        #expect(try convert(["Demo/images/flower.webp", output("x.png"), "--quality", "101"]).status != 0)
    }

    /// Upscaling an animation allocates every output frame: a 10,000-frame GIF of 2×2 pixels
    /// resized to 256 px would need 2.6 GB. The animation limit bounds the resize as it bounds
    /// the decode: a clean error, not an abort on a failed allocation.
    @Test(.timeLimit(.minutes(10 * Sanitizers.slowdown))) func upscalingALongAnimationIsBoundedByTheAnimationLimit() throws {
        defer { directory.remove() }
        let frame = GIFBuilder.image(.init(width: 2, height: 2, indices: [1, 0, 0, 1], control: (disposal: 0, delay: 4, transparent: nil)))
        let source = directory.url.appendingPathComponent("long.gif")
        try Data(GIFBuilder.gif(width: 2, height: 2, blocks: Array(repeating: frame, count: 10_000))).write(to: source)

        let run = try convert([source.path, output("big.gif"), "--resize", "256x256"])
        #expect(run.exited && run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("exceed the animation limit"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output("big.gif")))
        // The same file within the limit converts: 10,000 frames of 8×8 are 2.6 MB.
        #expect(try convert([source.path, output("small.gif"), "--resize", "8x8"]).status == 0)
        #expect(try decodeOutput("small.gif").1.animation?.frames.count == 10_000)
    }
}
