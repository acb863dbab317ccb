import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// The JPEG encoder: round trips within a stated PSNR, quality, progressive, ICC profile,
/// never an orientation, and transparency composited over white.
@Suite struct JPEGEncoderTests {
    static func source() throws -> ImageContainer {
        try JPEGTests.registry.decode(try JPEGTests.fixture("hopper.jpg"))
    }

    static func encode(_ container: ImageContainer, quality: Int = 80, progressive: Bool = false, strip: Bool = false) throws -> Data {
        var options = ImageEncodingOptions()
        options.quality = quality
        options.progressive = progressive
        options.stripsMetadata = strip
        return try JPEGTests.registry.encode(container, as: .jpeg, options: options)
    }

    static func markers(_ data: Data) -> [UInt8] {
        JPEGTests.segments(of: data).map(\.marker)
    }

    /// Encode → decode keeps the size; the decoded pixels are within these PSNRs of the
    /// original (hopper, 128×128, a detailed photo: the bound is loose at low quality).
    @Test(arguments: [(95, 34.0), (80, 30.0), (50, 27.0), (10, 22.0)])
    func roundTripIsCloseToTheOriginal(quality: Int, minimumPSNR: Double) throws {
        let original = try Self.source()
        for progressive in [false, true] {
            let data = try Self.encode(original, quality: quality, progressive: progressive)
            #expect(ImageFormat(sniffing: data) == .jpeg)
            let decoded = try JPEGTests.registry.decode(data)
            #expect(decoded.image.width == 128 && decoded.image.height == 128)
            let psnr = JPEGTests.psnr(decoded.image, original.image)
            print("JPEG round trip q\(quality) progressive \(progressive): \(data.count) bytes, PSNR \(psnr) dB")
            #expect(psnr >= minimumPSNR, "q\(quality): \(psnr) dB")
        }
    }

    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func roundTripOfAPhoto() throws {
        let original = try JPEGTests.registry.decode(try JPEGTests.corpus("photos/thumb-Kite.jpg"))
        let decoded = try JPEGTests.registry.decode(try Self.encode(original, quality: 80))
        #expect(decoded.image.width == 400 && decoded.image.height == 250)
        #expect(JPEGTests.psnr(decoded.image, original.image) >= 32)
    }

    @Test func higherQualityIsLargerAndCloser() throws {
        let original = try Self.source()
        let low = try Self.encode(original, quality: 20), high = try Self.encode(original, quality: 95)
        #expect(low.count < high.count)
        let lowPSNR = JPEGTests.psnr(try JPEGTests.registry.decode(low).image, original.image)
        let highPSNR = JPEGTests.psnr(try JPEGTests.registry.decode(high).image, original.image)
        #expect(lowPSNR < highPSNR)
        // Out-of-range qualities are clamped, not refused.
        #expect(try Self.encode(original, quality: -5) == Self.encode(original, quality: 1))
        #expect(try Self.encode(original, quality: 250) == Self.encode(original, quality: 100))
    }

    @Test func progressiveWritesSOF2AndBaselineSOF0() throws {
        let original = try Self.source()
        let baseline = Self.markers(try Self.encode(original))
        let progressive = Self.markers(try Self.encode(original, progressive: true))
        #expect(baseline.contains(0xC0) && !baseline.contains(0xC2))
        #expect(progressive.contains(0xC2) && !progressive.contains(0xC0))
        // And the progressive file decodes incrementally with several previews.
        let data = try Self.encode(original, progressive: true)
        let incremental = try #require(JPEGDecoder().makeIncrementalDecoder(options: .init()))
        var previews = 0
        for offset in stride(from: 0, to: data.count, by: 256) {
            try incremental.append(data[offset..<min(offset + 256, data.count)])
            if try incremental.preview() != nil { previews += 1 }
        }
        #expect(previews >= 3)
        #expect(try incremental.finish().image == JPEGTests.registry.decode(data).image)
    }

    // MARK: - Metadata

    @Test func writesTheICCProfileUnlessStripped() throws {
        var container = try Self.source()
        let profile = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) })
        container.iccProfile = profile
        let kept = try Self.encode(container)
        #expect(Self.markers(kept).filter { $0 == 0xE2 }.count == 3)
        #expect(Self.markers(kept).first == 0xE0, "JFIF stays first")
        let decoded = try JPEGTests.registry.decode(kept, options: .preservingColor)
        #expect(decoded.iccProfile == profile)
        #expect(try decoded.image == JPEGTests.registry.decode(Self.encode(container, strip: true)).image)

        let stripped = try Self.encode(container, strip: true)
        #expect(!Self.markers(stripped).contains(0xE2))
        #expect(try JPEGTests.registry.decode(stripped).iccProfile == nil)
    }

    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func aLargeProfileRoundTrips() throws {
        let container = try JPEGTests.registry.decode(try JPEGTests.corpus("edge/icc_profile_big.jpg"), options: .preservingColor)
        let profile = try #require(container.iccProfile)
        let decoded = try JPEGTests.registry.decode(try Self.encode(container), options: .preservingColor)
        #expect(decoded.iccProfile == profile)
    }

    /// Decoded upright from orientation 6, encoded: the file has no EXIF, and decodes upright
    /// with orientation `.up`.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func neverWritesAnOrientation() throws {
        let upright = try JPEGTests.registry.decode(try JPEGTests.corpus("edge/hopper_orientation_6.jpg"))
        #expect(upright.orientation == .right)
        let data = try Self.encode(upright)
        #expect(!Self.markers(data).contains(0xE1))
        let decoded = try JPEGTests.registry.decode(data)
        #expect(decoded.orientation == .up)
        #expect(JPEGTests.psnr(decoded.image, upright.image) > 30)
    }

    // MARK: - Pixel formats and alpha

    /// Straight alpha is composited over white: opaque red stays red, fully transparent pixels
    /// (whatever colour they store) become white, half-transparent blue becomes light blue.
    @Test func transparencyIsCompositedOverWhite() throws {
        let bitmap = try Bitmap(width: 48, height: 16, pixelFormat: .rgba8) { pixels in
            for y in 0..<16 {
                for x in 0..<48 {
                    let pixel: [UInt8] = x < 16 ? [255, 0, 0, 255] : x < 32 ? [0, 0, 0, 0] : [0, 0, 255, 128]
                    for channel in 0..<4 { pixels[(y * 48 + x) * 4 + channel] = pixel[channel] }
                }
            }
        }
        let decoded = try JPEGTests.registry.decode(try Self.encode(ImageContainer(image: bitmap), quality: 95)).image
        func pixel(_ x: Int, _ y: Int) -> [Int] { (0..<4).map { Int(decoded.pixels[(y * 48 + x) * 4 + $0]) } }
        func near(_ a: [Int], _ b: [Int]) -> Bool { zip(a, b).allSatisfy { abs($0 - $1) <= 8 } }
        #expect(near(pixel(8, 8), [255, 0, 0, 255]), "\(pixel(8, 8))")
        #expect(near(pixel(24, 8), [255, 255, 255, 255]), "\(pixel(24, 8))")
        #expect(near(pixel(40, 8), [127, 127, 255, 255]), "\(pixel(40, 8))")
    }

    /// The compositing formulas, on flat 16×16 blocks at quality 100 (where JPEG's error is a
    /// unit or two): straight `c·a/255 + 255 − a`, premultiplied `c + 255 − a`, grey likewise.
    @Test func compositingFormulas() throws {
        func encoded(_ format: PixelFormat, _ pixel: [UInt8]) throws -> [Int] {
            let bitmap = try Bitmap(width: 16, height: 16, pixelFormat: format, pixels: Array([[UInt8]](repeating: pixel, count: 256).joined()))
            let decoded = try JPEGTests.registry.decode(try Self.encode(ImageContainer(image: bitmap), quality: 100)).image
            return (0..<4).map { Int(decoded.pixels[8 * decoded.bytesPerRow + 8 * 4 + $0]) }
        }
        func near(_ a: [Int], _ b: [Int]) -> Bool { zip(a, b).allSatisfy { abs($0 - $1) <= 2 } }
        #expect(near(try encoded(.rgba8, [200, 100, 0, 51]), [244, 224, 204, 255]))
        #expect(near(try encoded(.rgba8, [7, 8, 9, 0]), [255, 255, 255, 255]))
        #expect(near(try encoded(.rgba8Premultiplied, [40, 20, 0, 51]), [244, 224, 204, 255]))
        #expect(near(try encoded(.grayAlpha8, [0, 255]), [0, 0, 0, 255]))
        #expect(near(try encoded(.grayAlpha8, [0, 0]), [255, 255, 255, 255]))
        #expect(near(try encoded(.grayAlpha8, [100, 128]), [178, 178, 178, 255]))
        // RGBA whose format says "no alpha": the fourth byte is ignored, not composited.
        #expect(near(try encoded(PixelFormat(channels: .rgba, alpha: .none), [10, 200, 30, 0]), [10, 200, 30, 255]))
    }

    /// Rows mixing opaque and transparent pixels next to fully opaque rows: each row is judged
    /// on its own (opaque rows are read in place, others composited).
    @Test func opaqueAndTranslucentRowsMix() throws {
        let bitmap = try Bitmap(width: 33, height: 40, pixelFormat: .rgba8) { pixels in
            for y in 0..<40 {
                for x in 0..<33 {
                    let translucent = y >= 20 && x == 32   // the last pixel of the lower rows
                    let pixel: [UInt8] = translucent ? [0, 0, 0, 0] : [30, 60, 90, 255]
                    for c in 0..<4 { pixels[(y * 33 + x) * 4 + c] = pixel[c] }
                }
            }
        }
        let decoded = try JPEGTests.registry.decode(try Self.encode(ImageContainer(image: bitmap), quality: 100)).image
        func pixel(_ x: Int, _ y: Int) -> [Int] { (0..<3).map { Int(decoded.pixels[y * decoded.bytesPerRow + x * 4 + $0]) } }
        #expect(pixel(32, 30).allSatisfy { $0 >= 240 }, "transparent pixel → white: \(pixel(32, 30))")
        #expect(zip(pixel(5, 5), [30, 60, 90]).allSatisfy { abs($0 - $1) <= 3 })
        #expect(zip(pixel(5, 35), [30, 60, 90]).allSatisfy { abs($0 - $1) <= 3 })
    }

    /// Every pixel format encodes; grey ones as one-component JPEG; rows wider than their
    /// pixels (padding) are honoured.
    @Test func everyPixelFormatEncodes() throws {
        let original = try Self.source().image
        let rgb = try Bitmap(width: 128, height: 128, pixelFormat: .rgb8) { out in
            for index in 0..<(128 * 128) { for c in 0..<3 { out[index * 3 + c] = original.pixels[index * 4 + c] } }
        }
        let padded = try Bitmap(width: 128, height: 128, pixelFormat: .rgba8, bytesPerRow: 128 * 4 + 12) { out in
            for y in 0..<128 {
                for x in 0..<(128 * 4) { out[y * (128 * 4 + 12) + x] = original.pixels[y * 128 * 4 + x] }
                for x in (128 * 4)..<(128 * 4 + 12) { out[y * (128 * 4 + 12) + x] = 0 }
            }
        }
        let gray = try Bitmap(width: 128, height: 128, pixelFormat: .gray8, pixels: (0..<(128 * 128)).map { original.pixels[$0 * 4 + 1] })
        let grayAlpha = try Bitmap(width: 128, height: 128, pixelFormat: .grayAlpha8, pixels: (0..<(128 * 128)).flatMap { [original.pixels[$0 * 4 + 1], 255] })
        let opaquePremultiplied = try Bitmap(width: 128, height: 128, pixelFormat: .rgba8Premultiplied, pixels: original.pixels)

        for (name, bitmap, components) in [("rgb8", rgb, 3), ("padded rgba8", padded, 3), ("gray8", gray, 1), ("grayAlpha8", grayAlpha, 1), ("premultiplied", opaquePremultiplied, 3)] {
            let data = try Self.encode(ImageContainer(image: bitmap), quality: 90)
            let frame = try #require(JPEGTests.segments(of: data).first { $0.marker == 0xC0 })
            #expect(Int(data[frame.range.lowerBound + 9]) == components, "\(name)")
            let decoded = try JPEGTests.registry.decode(data).image
            #expect(decoded.width == 128 && decoded.height == 128)
            if components == 3 { #expect(JPEGTests.psnr(decoded, original) > 30, "\(name)") }
        }
        // Padding does not change the picture.
        #expect(try Self.encode(ImageContainer(image: padded)) == Self.encode(ImageContainer(image: original)))
    }

    @Test func animatedContainersWriteTheFirstFrame() throws {
        let first = try Self.source().image
        let second = try Bitmap(width: 128, height: 128, pixelFormat: .rgba8, pixels: [UInt8](repeating: 255, count: 128 * 128 * 4))
        let animation = AnimatedImage(frames: [.init(bitmap: first, duration: .milliseconds(100)), .init(bitmap: second, duration: .milliseconds(100))], loopCount: 0)
        let container = ImageContainer(image: first, animation: animation)
        #expect(try Self.encode(container) == Self.encode(ImageContainer(image: first)))
    }
}
