import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// thumbor's `smart` and imgproxy's `g:sm`: the `fill` window goes where the image draws the eye
/// (``ImageProcessors/SmartCrop``), not to the centre.
@Suite struct SmartCropServingTests {
    /// 400 × 100, flat grey, with a 60 × 60 red and green checkerboard at x 20–80: the subject
    /// is at the left, so a centred 100 × 100 window misses it. `grey` gives the background's
    /// level in each column.
    static func subjectOnTheLeft(grey: (Int) -> UInt8 = { _ in 128 }) throws -> Data {
        var pixels = [UInt8](repeating: 255, count: 400 * 100 * 4)
        for y in 0..<100 {
            for x in 0..<400 {
                let offset = (y * 400 + x) * 4
                guard (20..<80).contains(x), (20..<80).contains(y) else {
                    (pixels[offset], pixels[offset + 1], pixels[offset + 2]) = (grey(x), grey(x), grey(x))
                    continue
                }
                let red = (x / 6 + y / 6) % 2 == 0
                (pixels[offset], pixels[offset + 1], pixels[offset + 2]) = red ? (230, 20, 20) : (20, 200, 20)
            }
        }
        let bitmap = try Bitmap(width: 400, height: 100, pixelFormat: .rgba8, pixels: pixels)
        return try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .png)
    }

    /// How many pixels of `reply` are far from the grey background.
    static func subjectPixels(_ reply: Reply) throws -> Int {
        let image = try reply.decoded().image
        var count = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let offset = y * image.bytesPerRow + x * image.pixelFormat.bytesPerPixel
                if abs(Int(image.pixels[offset]) - 128) > 60 || abs(Int(image.pixels[offset + 1]) - 128) > 60 { count += 1 }
            }
        }
        return count
    }

    @Test func thumborSmartKeepsTheSubject() async throws {
        let harness = try await ThumborServingTests.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/subject.png", data: try Self.subjectOnTheLeft())
        let centred = try await harness.request(ThumborServingTests.unsafe(harness, "100x100", "/subject.png"))
        let smart = try await harness.request(ThumborServingTests.unsafe(harness, "100x100/smart", "/subject.png"))
        #expect(centred.status == 200 && smart.status == 200)
        #expect(try ThumborServingTests.size(smart) == "100x100")
        #expect(try Self.subjectPixels(centred) == 0)
        #expect(try Self.subjectPixels(smart) > 3000, "the 60 × 60 subject should be in the window")
    }

    @Test func imgproxyGravitySmartKeepsTheSubject() async throws {
        let harness = try await ImgproxyServingTests.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/subject.png", data: try Self.subjectOnTheLeft())
        let centred = try await harness.request(ImgproxyServingTests.insecure(harness, "rs:fill:100:100", "/subject.png"))
        let smart = try await harness.request(ImgproxyServingTests.insecure(harness, "rs:fill:100:100/g:sm", "/subject.png"))
        #expect(centred.status == 200 && smart.status == 200)
        #expect(try Self.subjectPixels(centred) == 0)
        #expect(try Self.subjectPixels(smart) > 3000)
        // Offsets are not for smart, and smart is for the main gravity only.
        #expect(try await harness.request(ImgproxyServingTests.insecure(harness, "g:sm:10:10", "/subject.png")).status == 400)
        #expect(try await harness.request(ImgproxyServingTests.insecure(harness, "c:50:50:sm", "/subject.png")).status == 400)
    }

    /// The source column under the middle of a 100 × 100 reply's top row (outside the subject),
    /// on the background `40 + x / 2`.
    static func sourceColumn(_ reply: Reply) throws -> Int {
        let image = try reply.decoded().image
        let offset = 5 * image.bytesPerRow + 50 * image.pixelFormat.bytesPerPixel
        return (Int(image.pixels[offset]) - 40) * 2
    }

    /// thumbor's `focal()` overrides `smart`: the window is centred on the focal region (at the
    /// right), not on the subject (at the left) that `smart` alone finds, nor on the centre.
    @Test func thumborFocalOverridesSmart() async throws {
        let harness = try await ThumborServingTests.start()
        defer { Task { await harness.stop() } }
        // The background brightens from left to right: a pixel of it tells the source column.
        harness.origin.register("/gradient.png", data: try Self.subjectOnTheLeft { UInt8(40 + $0 / 2) })
        func column(_ options: String) async throws -> Int {
            let reply = try await harness.request(ThumborServingTests.unsafe(harness, options, "/gradient.png"))
            #expect(try reply.status == 200 && ThumborServingTests.size(reply) == "100x100", "\(options): \(reply.text)")
            return try Self.sourceColumn(reply)
        }
        let centred = try await column("100x100/filters:format(png)")
        #expect(abs(centred - 200) <= 4, "centred: \(centred)")
        let smart = try await column("100x100/smart/filters:format(png)")
        #expect(smart < 100, "smart alone: \(smart)")
        let focal = try await column("100x100/smart/filters:focal(330x10:370x90):format(png)")
        #expect(abs(focal - 350) <= 4, "smart with focal(): \(focal)")
        #expect(try await column("100x100/filters:focal(330x10:370x90):format(png)") == focal)
    }
}
