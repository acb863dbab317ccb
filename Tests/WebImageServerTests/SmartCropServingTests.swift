import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// thumbor's `smart` and imgproxy's `g:sm`: the `fill` window goes where the image draws the eye
/// (``ImageProcessors/SmartCrop``), not to the centre.
@Suite struct SmartCropServingTests {
    /// 400 × 100, flat grey, with a 60 × 60 red and green checkerboard at x 20–80: the subject
    /// is at the left, so a centred 100 × 100 window misses it.
    static func subjectOnTheLeft() throws -> Data {
        var pixels = [UInt8](repeating: 128, count: 400 * 100 * 4)
        for y in 0..<100 {
            for x in 0..<400 {
                let offset = (y * 400 + x) * 4
                pixels[offset + 3] = 255
                guard (20..<80).contains(x), (20..<80).contains(y) else { continue }
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
}
