import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// PNG encoding: round trips are exact, the colour type is the smallest that holds the pixels,
/// the ICC profile is kept unless stripped.
@Suite struct PNGEncoderTests {
    static func roundTrip(_ container: ImageContainer, encoder: PNGEncoder = PNGEncoder(), options: ImageEncodingOptions = .init()) throws -> (data: Data, decoded: ImageContainer) {
        let data = try encoder.encode(container, options: options)
        // Stored values and profile as written: the encoder is under test, not colour management.
        return (data, try PNGDecoder().decode(data, options: .preservingColor))
    }

    /// IHDR's colour type (byte 25 of the file).
    static func colourType(_ data: Data) -> UInt8 { data[25] }

    static func noise(width: Int, height: Int, alpha: (Int, Int) -> UInt8, grey: Bool = false) throws -> Bitmap {
        var generator = SeededGenerator(seed: UInt64(width * 1000 + height))
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let r = UInt8(truncatingIfNeeded: generator.next())
                let rgb = grey ? [r, r, r] : [r, UInt8(truncatingIfNeeded: generator.next()), UInt8(truncatingIfNeeded: x * 3 + y)]
                pixels += rgb + [alpha(x, y)]
            }
        }
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    @Test(arguments: [
        ("RGBA", false, false, UInt8(6)),
        ("opaque RGB", true, false, UInt8(2)),
        ("grey with alpha", false, true, UInt8(4)),
        ("opaque grey", true, true, UInt8(0)),
    ])
    func roundTripsExactly(name: String, opaque: Bool, grey: Bool, colourType: UInt8) throws {
        let bitmap = try Self.noise(width: 37, height: 23, alpha: { x, y in opaque ? 255 : UInt8((x * 7 + y * 11) % 256) }, grey: grey)
        for interlaced in [false, true] {
            var encoder = PNGEncoder()
            encoder.interlaced = interlaced
            let (data, decoded) = try Self.roundTrip(ImageContainer(image: bitmap), encoder: encoder)
            #expect(decoded.image == bitmap, "\(name), interlaced: \(interlaced)")
            #expect(Self.colourType(data) == colourType, "\(name): the smallest colour type")
            #expect(data[28] == (interlaced ? 1 : 0))
        }
    }

    /// Other pixel formats: RGB, grey and grey+alpha bitmaps are written as such, and
    /// premultiplied RGBA is written straight.
    @Test func otherPixelFormats() throws {
        let rgb = try Bitmap(width: 2, height: 1, pixelFormat: .rgb8, pixels: [1, 2, 3, 4, 5, 6])
        #expect(try Self.roundTrip(ImageContainer(image: rgb)).decoded.image.pixels == [1, 2, 3, 255, 4, 5, 6, 255])
        let gray = try Bitmap(width: 2, height: 1, pixelFormat: .gray8, pixels: [7, 200])
        #expect(try Self.roundTrip(ImageContainer(image: gray)).decoded.image.pixels == [7, 7, 7, 255, 200, 200, 200, 255])
        let grayAlpha = try Bitmap(width: 2, height: 1, pixelFormat: .grayAlpha8, pixels: [7, 0, 200, 128])
        #expect(try Self.roundTrip(ImageContainer(image: grayAlpha)).decoded.image.pixels == [7, 7, 7, 0, 200, 200, 200, 128])
        let premultiplied = try Bitmap(width: 2, height: 1, pixelFormat: .rgba8Premultiplied, pixels: [100, 50, 0, 128, 0, 0, 0, 0])
        #expect(try Self.roundTrip(ImageContainer(image: premultiplied)).decoded.image.pixels == [199, 100, 0, 128, 0, 0, 0, 0])
        // Rows with padding (bytesPerRow beyond the pixels) are read row by row.
        let padded = try Bitmap(width: 1, height: 2, pixelFormat: .rgba8, bytesPerRow: 8, pixels: [1, 2, 3, 4, 9, 9, 9, 9, 5, 6, 7, 8, 9, 9, 9, 9])
        #expect(try Self.roundTrip(ImageContainer(image: padded)).decoded.image.pixels == [1, 2, 3, 4, 5, 6, 7, 8])
    }

    @Test func iccProfileUnlessStripped() throws {
        // A plausible profile: libpng checks the header's length field and signature.
        var profile = [UInt8](repeating: 0, count: 132)
        profile.replaceSubrange(0..<4, with: PNGBuilder.be32(132))
        profile.replaceSubrange(12..<16, with: Array("mntr".utf8))
        profile.replaceSubrange(16..<20, with: Array("RGB ".utf8))
        profile.replaceSubrange(20..<24, with: Array("XYZ ".utf8))
        profile.replaceSubrange(36..<40, with: Array("acsp".utf8))
        // The PCS illuminant, D50, in s15.16: 0.9642, 1.0, 0.8249.
        profile.replaceSubrange(68..<80, with: PNGBuilder.be32(0xF6D6) + PNGBuilder.be32(0x1_0000) + PNGBuilder.be32(0xD32D))
        let image = try Self.noise(width: 4, height: 4, alpha: { _, _ in 255 })
        let container = ImageContainer(image: image, iccProfile: Data(profile))
        let kept = try Self.roundTrip(container).decoded
        #expect(kept.iccProfile == Data(profile))
        var options = ImageEncodingOptions()
        options.stripsMetadata = true
        #expect(try Self.roundTrip(container, options: options).decoded.iccProfile == nil)
        // A profile libpng rejects is left out; the pixels are still written.
        let junk = ImageContainer(image: image, iccProfile: Data([1, 2, 3]))
        let withoutJunk = try Self.roundTrip(junk).decoded
        #expect(withoutJunk.image == image)
        #expect(withoutJunk.iccProfile == nil)
    }

    /// Every zlib level gives the same pixels; higher levels give smaller files on this
    /// compressible image.
    @Test func compressionLevels() throws {
        var pixels: [UInt8] = []
        for i in 0..<(64 * 64) {
            pixels += [UInt8(i % 64 * 4), UInt8(i / 64 * 4), 90, 255]
        }
        let bitmap = try Bitmap(width: 64, height: 64, pixelFormat: .rgba8, pixels: pixels)
        var sizes: [Int] = []
        for level in [0, 1, 6, 9] {
            var encoder = PNGEncoder()
            encoder.compressionLevel = level
            let (data, decoded) = try Self.roundTrip(ImageContainer(image: bitmap), encoder: encoder)
            #expect(decoded.image == bitmap)
            sizes.append(data.count)
        }
        #expect(sizes[0] > sizes[1] && sizes[1] >= sizes[3], "\(sizes)")
    }

    /// An animated container is written as an APNG that decodes to the same frames, delays
    /// (in milliseconds) and loop count; with firstFrameOnly, as a still PNG.
    @Test func animatedSourceWritesAPNG() throws {
        let frames = try (0..<4).map { index in
            try Self.noise(width: 9, height: 5, alpha: { x, y in index == 2 ? UInt8((x + y) * 20) : 255 })
        }
        let durations: [Duration] = [.milliseconds(40), .zero, .milliseconds(1500), .seconds(100)]
        let animation = AnimatedImage(frames: zip(frames, durations).map { .init(bitmap: $0, duration: $1) }, loopCount: 2)
        let container = ImageContainer(image: frames[0], animation: animation)
        let (data, decoded) = try Self.roundTrip(container)
        #expect(Self.colourType(data) == 6, "one frame has alpha, so all are RGBA")
        let result = try #require(decoded.animation)
        #expect(decoded.format == .apng)
        #expect(result.frames.map(\.bitmap) == frames)
        #expect(result.frames.map(\.duration) == durations)
        #expect(result.loopCount == 2)

        var options = ImageEncodingOptions()
        options.firstFrameOnly = true
        let still = try Self.roundTrip(container, options: options).decoded
        #expect(still.animation == nil)
        #expect(still.image == frames[0])
    }

    /// Frames of different pixel formats share one colour type; grey frames stay grey.
    @Test func animatedGreyFrames() throws {
        let grey = try Bitmap(width: 2, height: 1, pixelFormat: .gray8, pixels: [10, 20])
        let greyRGBA = try Bitmap(width: 2, height: 1, pixelFormat: .rgba8, pixels: [30, 30, 30, 255, 40, 40, 40, 255])
        let animation = AnimatedImage(frames: [.init(bitmap: grey, duration: .seconds(1)), .init(bitmap: greyRGBA, duration: .seconds(1))], loopCount: 0)
        let (data, decoded) = try Self.roundTrip(ImageContainer(image: grey, animation: animation))
        #expect(Self.colourType(data) == 0)
        #expect(decoded.animation?.frames.map(\.bitmap.pixels) == [[10, 10, 10, 255, 20, 20, 20, 255], greyRGBA.pixels])

        let colour = try Bitmap(width: 2, height: 1, pixelFormat: .rgb8, pixels: [1, 2, 3, 4, 5, 6])
        let mixed = AnimatedImage(frames: [.init(bitmap: grey, duration: .seconds(1)), .init(bitmap: colour, duration: .seconds(1))], loopCount: 0)
        let (mixedData, mixedDecoded) = try Self.roundTrip(ImageContainer(image: grey, animation: mixed))
        #expect(Self.colourType(mixedData) == 2)
        #expect(mixedDecoded.animation?.frames.map(\.bitmap.pixels) == [[10, 10, 10, 255, 20, 20, 20, 255], [1, 2, 3, 255, 4, 5, 6, 255]])
    }

    @Test func delaysAsAPNGFractions() {
        #expect(APNGWriter.delay(.milliseconds(70)) == (70, 1000))
        #expect(APNGWriter.delay(.microseconds(1500)) == (2, 1000))
        #expect(APNGWriter.delay(.seconds(65.535)) == (65535, 1000))
        #expect(APNGWriter.delay(.seconds(100)) == (100, 1))
        #expect(APNGWriter.delay(.seconds(1_000_000)) == (65535, 1))
        #expect(APNGWriter.delay(.seconds(-3)) == (0, 1000))
    }

    /// An animated GIF from the corpus (42 frames) converted to APNG keeps every frame exactly.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func gifToAPNG() throws {
        let gif = try GIFDecoder().decode(try Data(contentsOf: Reference.corpus!.appendingPathComponent("edge/iss634.gif")), options: .init())
        let apng = try Self.roundTrip(gif).decoded
        #expect(apng.animation?.frames.map(\.bitmap) == gif.animation?.frames.map(\.bitmap))
        #expect(apng.animation?.frames.map(\.duration) == gif.animation?.frames.map(\.duration))
        #expect(apng.animation?.loopCount == gif.animation?.loopCount)
    }

    /// Through the registry, as a user would.
    @Test func registryEncodesPNG() throws {
        let registry = CoderRegistry.system()
        let bitmap = try Self.noise(width: 5, height: 3, alpha: { x, _ in UInt8(x * 60) })
        let data = try registry.encode(ImageContainer(image: bitmap), as: .png)
        #expect(try registry.decode(data).image == bitmap)
    }

    /// A real photo (RGBA, 2560×1600) round-trips exactly.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func photoRoundTrip() throws {
        let data = try Data(contentsOf: Reference.corpus!.appendingPathComponent("photos/elarun-2560x1600-rgba.png"))
        let original = try PNGDecoder().decode(data, options: .init())
        #expect(try Self.roundTrip(original).decoded.image == original.image)
    }
}
