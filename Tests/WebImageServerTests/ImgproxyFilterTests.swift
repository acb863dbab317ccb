import Foundation
import Testing
import WebImage
@_spi(Testing) @testable import WebImageServer

/// imgproxy's `sharpen`/`sh` and `pixelate`/`pix`, served end to end and checked against what
/// imgproxy's documentation says they do: pixelate draws the image in blocks of `size` pixels of
/// one colour; sharpen (libvips' unsharp mask) raises the contrast at edges, and leaves a flat
/// image as it is.
@Suite struct ImgproxyFilterTests {
    static func start() async throws -> ProxyHarness {
        let harness = try await ImgproxyServingTests.start()
        harness.origin.register("/flat.png", data: try png(width: 64, height: 48, format: .rgb8) { _, _ in [90, 140, 200] })
        // A vertical edge: dark grey on the left, light grey on the right.
        harness.origin.register("/edge.png", data: try png(width: 64, height: 32, format: .rgb8) { x, _ in x < 32 ? [60, 60, 60] : [180, 180, 180] })
        harness.origin.register("/edge-grey.png", data: try png(width: 64, height: 32, format: .gray8) { x, _ in x < 32 ? [60] : [180] })
        harness.origin.register("/a.gif", data: try Fixture.animatedGIF)
        return harness
    }

    /// A PNG whose pixel at (x, y) is `pixel(x, y)`'s bytes.
    static func png(width: Int, height: Int, format: PixelFormat, _ pixel: (Int, Int) -> [UInt8]) throws -> Data {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width { pixels += pixel(x, y) }
        }
        let bitmap = try Bitmap(width: width, height: height, pixelFormat: format, pixels: pixels)
        return try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .png, options: ImageEncodingOptions())
    }

    /// The R, G, B (grey replicated) and A of (x, y).
    static func pixel(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [Int] {
        let step = bitmap.pixelFormat.bytesPerPixel, offset = y * bitmap.bytesPerRow + x * step
        let grey = bitmap.pixelFormat.channels == .gray || bitmap.pixelFormat.channels == .grayAlpha
        let rgb = (0..<3).map { Int(bitmap.pixels[offset + (grey ? 0 : $0)]) }
        return rgb + [bitmap.pixelFormat.hasAlpha ? Int(bitmap.pixels[offset + step - 1]) : 255]
    }

    /// Whether every `size` × `size` block from the top-left corner (cut at the edges) is one colour.
    static func isBlocky(_ bitmap: Bitmap, size: Int) -> Bool {
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width where pixel(bitmap, x, y) != pixel(bitmap, x / size * size, y / size * size) {
                return false
            }
        }
        return true
    }

    /// How many distinct colours the blocks' corners hold: more than a few, or the image is gone.
    static func blockColours(_ bitmap: Bitmap, size: Int) -> Int {
        var colours = Set<[Int]>()
        for y in stride(from: 0, to: bitmap.height, by: size) {
            for x in stride(from: 0, to: bitmap.width, by: size) { colours.insert(pixel(bitmap, x, y)) }
        }
        return colours.count
    }

    @Test func pixelateMakesBlocksOfOneColour() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let plainReply = try await harness.request(ImgproxyServingTests.insecure(harness, "w:300/f:png", "/e.jpg"))
        let plain = try plainReply.decoded().image
        // 13 does not divide 300 or 169: the last column and row of blocks are cut.
        for (option, size) in [("pix:13", 13), ("pixelate:8", 8)] {
            let reply = try await harness.request(ImgproxyServingTests.insecure(harness, "w:300/f:png/" + option, "/e.jpg"))
            #expect(reply.status == 200, "\(option)")
            let image = try reply.decoded().image
            #expect(image.width == plain.width && image.height == plain.height, "\(option)")
            #expect(Self.isBlocky(image, size: size), "\(option)")
            #expect(!Self.isBlocky(plain, size: size))
            #expect(Self.blockColours(image, size: size) > 100, "\(option)")
            // Each block stands for the pixels under it: its colour is close to their mean (those
            // cut by the edges as imgproxy extends the image first, by repeating its edge pixels).
            var worst = 0
            for top in stride(from: 0, to: plain.height, by: size) {
                for left in stride(from: 0, to: plain.width, by: size) {
                    var sums = [0, 0, 0], count = 0
                    for y in top..<(top + size) {
                        for x in left..<(left + size) {
                            let p = Self.pixel(plain, min(x, plain.width - 1), min(y, plain.height - 1))
                            for c in 0..<3 { sums[c] += p[c] }
                            count += 1
                        }
                    }
                    let block = Self.pixel(image, left, top)
                    for c in 0..<3 { worst = max(worst, abs(block[c] - sums[c] / count)) }
                }
            }
            #expect(worst <= 2, "\(option): a block is \(worst) from its pixels' mean")
        }
        // pix:0 and pix:1 change nothing.
        for option in ["pix:0", "pix:1"] {
            #expect(try await harness.request(ImgproxyServingTests.insecure(harness, "w:300/f:png/" + option, "/e.jpg")).body == plainReply.body, "\(option)")
        }
        // Transparency: the blocks of a PNG with alpha keep an alpha channel, one value a block.
        let spring = try await harness.request(ImgproxyServingTests.insecure(harness, "w:200/f:png/pix:10", "/s.png")).decoded().image
        #expect(spring.pixelFormat.hasAlpha && Self.isBlocky(spring, size: 10))
        // Every frame of an animation.
        let animated = try await harness.request(ImgproxyServingTests.insecure(harness, "f:gif/pix:8", "/a.gif")).decoded()
        let frames = try #require(animated.animation?.frames)
        #expect(frames.count > 1)
        for frame in frames { #expect(Self.isBlocky(frame.bitmap, size: 8)) }
    }

    @Test func sharpenRaisesEdgeContrastAndLeavesFlatAreas() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        // A flat image is unchanged.
        let flat = try await harness.request(ImgproxyServingTests.insecure(harness, "f:png/sh:2", "/flat.png")).decoded().image
        for (x, y) in [(0, 0), (31, 20), (63, 47)] { #expect(Self.pixel(flat, x, y) == [90, 140, 200, 255]) }
        // An edge: the dark side gets darker and the light side lighter next to it (the unsharp
        // mask's overshoot); far from it, nothing changes. In colour and in grey.
        for path in ["/edge.png", "/edge-grey.png"] {
            let plain = try await harness.request(ImgproxyServingTests.insecure(harness, "f:png", path)).decoded().image
            let sharp = try await harness.request(ImgproxyServingTests.insecure(harness, "f:png/sh:1.5", path)).decoded().image
            #expect(Self.pixel(plain, 31, 16)[0] == 60 && Self.pixel(plain, 32, 16)[0] == 180)
            #expect(Self.pixel(sharp, 31, 16)[0] < 60 - 5, "\(path)")
            #expect(Self.pixel(sharp, 32, 16)[0] > 180 + 5, "\(path)")
            #expect(Self.pixel(sharp, 2, 16)[0] == 60 && Self.pixel(sharp, 61, 16)[0] == 180, "\(path)")
            #expect(sharp.pixelFormat.channels == plain.pixelFormat.channels, "\(path)")
        }
        // A photo's edges gain contrast: the mean difference between neighbours grows.
        func roughness(_ bitmap: Bitmap) -> Double {
            var total = 0
            for y in 0..<bitmap.height {
                for x in 1..<bitmap.width { total += abs(Self.pixel(bitmap, x, y)[1] - Self.pixel(bitmap, x - 1, y)[1]) }
            }
            return Double(total) / Double(bitmap.height * (bitmap.width - 1))
        }
        let photo = try await harness.request(ImgproxyServingTests.insecure(harness, "w:300/f:png", "/e.jpg")).decoded().image
        let sharpPhoto = try await harness.request(ImgproxyServingTests.insecure(harness, "w:300/f:png/sharpen:1", "/e.jpg")).decoded().image
        #expect(roughness(sharpPhoto) > roughness(photo) * 1.15, "\(roughness(sharpPhoto)) against \(roughness(photo))")
        // Alpha is left as it is.
        let spring = try await harness.request(ImgproxyServingTests.insecure(harness, "w:200/f:png", "/s.png")).decoded().image
        let sharpSpring = try await harness.request(ImgproxyServingTests.insecure(harness, "w:200/f:png/sh:1", "/s.png")).decoded().image
        var alphaChanged = 0
        for y in 0..<spring.height {
            for x in 0..<spring.width where Self.pixel(spring, x, y)[3] != Self.pixel(sharpSpring, x, y)[3] { alphaChanged += 1 }
        }
        #expect(alphaChanged == 0)
        // Every frame of an animation is sharpened.
        let animated = try await harness.request(ImgproxyServingTests.insecure(harness, "f:gif/sh:1", "/a.gif")).decoded()
        let plainAnimated = try await harness.request(ImgproxyServingTests.insecure(harness, "f:gif", "/a.gif")).decoded()
        #expect((animated.animation?.frames.count ?? 0) > 1 && animated.animation?.frames.count == plainAnimated.animation?.frames.count)
    }
}
