import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// The new filters' processors on their own: every pixel format they may be given, animations,
/// images smaller than the wavelet's holes, and the cases whose answers follow from thumbor's
/// formulas by hand.
@Suite struct ThumborEffectTests {
    static let formats: [PixelFormat] = [.gray8, .grayAlpha8, .rgb8, .rgba8, .rgba8Premultiplied]

    /// A `width` × `height` bitmap of `format` whose pixel (x, y) has colour levels `level(x, y)`
    /// and alpha 200 (premultiplied when the format is).
    static func bitmap(_ format: PixelFormat, width: Int = 24, height: Int = 18, _ level: (Int, Int) -> Int) throws -> Bitmap {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let value = level(x, y)
                let colour = format.alpha == .premultiplied ? value * 200 / 255 : value
                switch format.channels {
                case .gray: pixels += [UInt8(colour)]
                case .grayAlpha: pixels += [UInt8(colour), 200]
                case .rgb: pixels += [UInt8(colour), UInt8(255 - colour), UInt8(colour / 2)]
                case .rgba: pixels += [UInt8(colour), UInt8(colour * 200 / 255 - colour / 3), UInt8(colour / 2), 200]
                }
            }
        }
        return try Bitmap(width: width, height: height, pixelFormat: format, pixels: pixels)
    }

    static let processors: [any ImageProcessor] = [
        ThumborSharpen(amount: 2, radius: 1, luminanceOnly: true), ThumborSharpen(amount: 3, radius: 0.5, luminanceOnly: false),
        ThumborEqualize(), ThumborNoise(amount: 30, seed: 1),
        ThumborRoundCorner(horizontalRadius: 6, verticalRadius: 4, colour: [10, 20, 30], transparent: false),
        ThumborRoundCorner(horizontalRadius: 6, verticalRadius: 4, colour: [0, 0, 0], transparent: true),
        ImgproxySharpen(sigma: 1), ImgproxyPixelate(size: 5),
    ]

    /// Every processor takes every format, keeps the size, keeps alpha where it does not
    /// clear corners, and keeps premultiplied colour within its alpha.
    @Test(arguments: formats) func everyFormat(_ format: PixelFormat) throws {
        let input = try Self.bitmap(format) { x, y in (x * 37 + y * 11) % 256 }
        for processor in Self.processors {
            let output = try processor.process(ImageContainer(image: input)).image
            #expect(output.width == input.width && output.height == input.height, "\(processor.identifier) \(format)")
            if format.hasAlpha, !(processor is ThumborRoundCorner), !(processor is ImgproxyPixelate) {
                #expect(output.pixelFormat == format, "\(processor.identifier) \(format)")
                let step = format.bytesPerPixel
                var alphaKept = true, withinAlpha = true
                for y in 0..<input.height {
                    for x in 0..<input.width {
                        let offset = y * input.bytesPerRow + x * step
                        if output.pixels[offset + step - 1] != input.pixels[offset + step - 1] { alphaKept = false }
                        if format.alpha == .premultiplied, (0..<(step - 1)).contains(where: { output.pixels[offset + $0] > output.pixels[offset + step - 1] }) {
                            withinAlpha = false
                        }
                    }
                }
                #expect(alphaKept && withinAlpha, "\(processor.identifier) \(format)")
            }
        }
    }

    /// A flat image stays flat under both sharpens and pixelate (nothing to amplify or average).
    @Test func flatStaysFlat() throws {
        let flat = try Self.bitmap(.rgb8) { _, _ in 100 }
        for processor: any ImageProcessor in [ThumborSharpen(amount: 5, radius: 2, luminanceOnly: false), ThumborSharpen(amount: 5, radius: 2, luminanceOnly: true),
                                              ImgproxySharpen(sigma: 3), ImgproxyPixelate(size: 7)] {
            let output = try processor.process(ImageContainer(image: flat)).image
            // ±1 for the luma round trip's single precision, which thumbor truncates too.
            let worst = zip(output.pixels, flat.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= (processor is ThumborSharpen ? 1 : 0), "\(processor.identifier): \(worst)")
        }
    }

    /// Images smaller than the largest hole (16 pixels) are sharpened without reading past them,
    /// and a 1 × 1 image is its own mirror.
    @Test func tinyImagesSharpen() throws {
        for (width, height) in [(1, 1), (3, 2), (17, 1), (2, 40)] {
            let input = try Self.bitmap(.rgb8, width: width, height: height) { x, y in (x * 90 + y * 50) % 256 }
            let output = try ThumborSharpen(amount: 2, radius: 1, luminanceOnly: false).process(ImageContainer(image: input)).image
            #expect(output.width == width && output.height == height)
        }
        #expect(ThumborSharpen.mirror(-1, 5) == 1 && ThumborSharpen.mirror(5, 5) == 3 && ThumborSharpen.mirror(-17, 3) == 1)
        #expect(ThumborSharpen.mirror(20, 3) == 0 && ThumborSharpen.mirror(7, 1) == 0)
    }

    /// Four levels in equal numbers spread to 0, 85, 170 and 255: (cdf − cdf(min)) / (n − cdf(min)) · 255.
    @Test func equalizeSpreadsLevels() throws {
        let input = try Self.bitmap(.gray8, width: 4, height: 4) { x, _ in [10, 20, 30, 40][x] }
        let output = try ThumborEqualize().process(ImageContainer(image: input)).image
        #expect(Array(output.pixels.prefix(4)) == [0, 85, 170, 255])
        // One level only: thumbor divides by zero; here it is left as it is.
        let flat = try Self.bitmap(.gray8, width: 4, height: 4) { _, _ in 77 }
        #expect(try ThumborEqualize().process(ImageContainer(image: flat)).image.pixels.allSatisfy { $0 == 77 })
    }

    /// The same seed gives the same noise; another seed, other noise; amounts 0 and 1 none; each
    /// frame of an animation its own; and the values stay within the amount.
    @Test func noiseIsDeterministicAndBounded() throws {
        let input = try Self.bitmap(.rgb8) { _, _ in 128 }
        let one = try ThumborNoise(amount: 20, seed: 7).process(ImageContainer(image: input)).image
        #expect(try ThumborNoise(amount: 20, seed: 7).process(ImageContainer(image: input)).image == one)
        #expect(try ThumborNoise(amount: 20, seed: 8).process(ImageContainer(image: input)).image != one)
        #expect(try ThumborNoise(amount: 1, seed: 7).process(ImageContainer(image: input)).image == input)
        // Each pixel moved by one draw from −10 to +9, the same for R, G and B.
        var deltas = Set<Int>(), together = true
        for pixel in 0..<(input.width * input.height) {
            let moved = (0..<3).map { Int(one.pixels[pixel * 3 + $0]) - Int(input.pixels[pixel * 3 + $0]) }
            if moved[0] != moved[1] || moved[1] != moved[2] { together = false }
            deltas.insert(moved[0])
        }
        #expect(together && deltas.min() == -10 && deltas.max() == 9 && deltas.count == 20)
        let seeds = ThumborNoise.seed(["a", "20", "0"])
        #expect(seeds == ThumborNoise.seed(["a", "20", "0"]) && seeds != ThumborNoise.seed(["b", "20", "0"]))
        let animation = AnimatedImage(frames: [.init(bitmap: input, duration: .milliseconds(100)), .init(bitmap: input, duration: .milliseconds(100))], loopCount: 0)
        let frames = try #require(try ThumborNoise(amount: 20, seed: 7).process(ImageContainer(image: input, animation: animation)).animation?.frames)
        #expect(frames.count == 2 && frames[0].bitmap != frames[1].bitmap)
    }

    /// The corner pixel is painted (or cleared), the centre and the edges' middles are not; a
    /// grey image with a grey colour stays grey; radii are clamped to half the sides.
    @Test func roundCornerPaintsTheCorners() throws {
        let input = try Self.bitmap(.rgb8, width: 40, height: 30) { _, _ in 100 }
        let painted = try ThumborRoundCorner(horizontalRadius: 10, verticalRadius: 6, colour: [255, 0, 0], transparent: false).process(ImageContainer(image: input)).image
        for (x, y) in [(0, 0), (39, 0), (0, 29), (39, 29)] {
            #expect(Array(painted.pixels[(y * 40 + x) * 3..<(y * 40 + x) * 3 + 3]) == [255, 0, 0], "\(x), \(y)")
        }
        for (x, y) in [(20, 15), (20, 0), (0, 15), (10, 6)] {
            #expect(Array(painted.pixels[(y * 40 + x) * 3..<(y * 40 + x) * 3 + 3]) == [100, 155, 50], "\(x), \(y)")
        }
        let cleared = try ThumborRoundCorner(horizontalRadius: 10, verticalRadius: 6, colour: [0, 0, 0], transparent: true).process(ImageContainer(image: input)).image
        #expect(cleared.pixelFormat == .rgba8 && cleared.pixels[3] == 0 && cleared.pixels[(15 * 40 + 20) * 4 + 3] == 255)
        let grey = try Self.bitmap(.gray8, width: 8, height: 8) { _, _ in 50 }
        let greyOut = try ThumborRoundCorner(horizontalRadius: 100, verticalRadius: 100, colour: [9, 9, 9], transparent: false).process(ImageContainer(image: grey)).image
        #expect(greyOut.pixelFormat == .gray8 && greyOut.pixels[0] == 9 && greyOut.pixels[4 * 8 + 4] == 50)
    }

    /// A nine-patch `size` × `size` with opaque black markers where `marked` says (on its ring),
    /// its inside opaque red.
    static func ninePatch(size: Int, marked: (Int, Int) -> Bool) throws -> Bitmap {
        var pixels: [UInt8] = []
        for y in 0..<size {
            for x in 0..<size {
                let ring = x == 0 || y == 0 || x == size - 1 || y == size - 1
                pixels += ring ? (marked(x, y) ? [0, 0, 0, 255] : [0, 0, 0, 0]) : [255, 0, 0, 255]
            }
        }
        return try Bitmap(width: size, height: size, pixelFormat: .rgba8, pixels: pixels)
    }

    /// `convolution`, `colorize`, `curve` and `frame` take every pixel format and keep the size
    /// (the frame adds its padding); their identities change nothing; a frame with a nine-patch
    /// of 1, 2 or 3 pixels, or without markers, or larger than the image, stays inside both.
    @Test(arguments: formats) func effectsTakeEveryFormat(_ format: PixelFormat) throws {
        let input = try Self.bitmap(format) { x, y in (x * 37 + y * 11) % 256 }
        let straight = input.straightRGBA8()
        let identity = ThumborConvolution(items: [1], columns: 1, normalizes: true)
        let unchanged = try identity.process(ImageContainer(image: input)).image
        #expect(unchanged.pixelFormat == (format.hasAlpha ? .rgba8 : .rgb8))
        #expect(unchanged.straightRGBA8() == straight, "\(format)")
        let flat = ThumborCurve(points: [[.init(x: 0, y: 0), .init(x: 255, y: 255)], [.init(x: 0, y: 0), .init(x: 255, y: 255)],
                                         [.init(x: 0, y: 0), .init(x: 255, y: 255)], [.init(x: 0, y: 0), .init(x: 255, y: 255)]])
        for operation: ThumborColorFilter.Operation in [.colorize(0, 0, 0, fill: [9, 9, 9]), .curve(flat)] {
            let output = try ThumborColorFilter(operations: [operation]).process(ImageContainer(image: input)).image
            #expect(output.straightRGBA8() == straight, "\(operation) \(format)")
        }
        let edge = try ThumborConvolution(items: [-1, -1, -1, -1, 8, -1, -1, -1, -1], columns: 3, normalizes: false).process(ImageContainer(image: input)).image
        #expect(edge.width == input.width && edge.height == input.height && edge.straightRGBA8() != straight)
        for patch in [try Self.ninePatch(size: 1) { _, _ in true }, try Self.ninePatch(size: 2) { _, _ in true },
                      try Self.ninePatch(size: 3) { _, _ in true }, try Self.ninePatch(size: 8) { _, _ in false },
                      try Self.ninePatch(size: 60) { x, y in (20...40).contains(x) || (20...40).contains(y) }] {
            let framed = try ThumborFrame(source: .local("f.png"), ninePatch: patch, maximumDimension: 4096).process(ImageContainer(image: input)).image
            #expect(framed.pixelFormat == .rgb8 && framed.width >= input.width && framed.height >= input.height, "\(patch.width) \(format)")
        }
    }

    /// thumbor's arithmetic by hand: colorize blends and truncates; a 3 × 1 box blur averages a
    /// row and repeats the edge; a frame pads by its markers and paints its fixed corners over
    /// white; a frame whose padding passes the largest side is refused.
    @Test func effectsFollowThumborsFormulas() throws {
        let input = try Self.bitmap(.rgb8, width: 3, height: 1) { x, _ in [0, 90, 200][x] }
        let colorized = try ThumborColorFilter(operations: [.colorize(30, 0, 150, fill: [255, 0, 100])]).process(ImageContainer(image: input)).image
        // Red: 0·0.7 + 255·0.3 = 76.5 → 76; blue at 150 %: 0·(−0.5) + 100·1.5 = 150.
        #expect(Array(colorized.pixels[0..<3]) == [76, 255, 150])
        let blurred = try ThumborConvolution(items: [1, 1, 1], columns: 3, normalizes: true).process(ImageContainer(image: input)).image
        // (0 + 0 + 90) / 3 = 30, (0 + 90 + 200) / 3 = 96.67 → 96, (90 + 200 + 200) / 3 = 163.3 → 163.
        #expect([blurred.pixels[0], blurred.pixels[3], blurred.pixels[6]] == [30, 96, 163])
        // Markers: the middle column and row stretch; the content area leaves 1 pixel each side.
        let patch = try Self.ninePatch(size: 5) { x, y in (x == 2 && y == 0) || (x == 0 && y == 2) || (x == 2 && y == 4) || (x == 4 && y == 2) }
        let grey = try Self.bitmap(.rgb8, width: 6, height: 4) { _, _ in 100 }
        let framed = try ThumborFrame(source: .local("f.png"), ninePatch: patch, maximumDimension: 4096).process(ImageContainer(image: grey)).image
        #expect(framed.width == 8 && framed.height == 6)
        #expect(Array(framed.pixels[0..<3]) == [255, 0, 0])
        #expect(throws: ImageError.self) {
            let wide = try Self.ninePatch(size: 40) { x, y in (x == 39 && y == 38) || (y == 39 && x == 1) }
            _ = try ThumborFrame(source: .local("f.png"), ninePatch: wide, maximumDimension: 20).process(ImageContainer(image: grey))
        }
    }
}
