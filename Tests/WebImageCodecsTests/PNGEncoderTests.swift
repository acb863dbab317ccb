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
        return (data, try PNGDecoder().decode(data, options: .init()))
    }

    /// IHDR's colour type (byte 25 of the file).
    static func colourType(_ data: Data) -> UInt8 { data[25] }

    static func noise(width: Int, height: Int, alpha: (Int, Int) -> UInt8, grey: Bool = false) throws -> Bitmap {
        var generator = SplitMix(seed: UInt64(width * 1000 + height))
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

    /// An animated container is written as its first frame.
    @Test func animatedSourceWritesTheFirstFrame() throws {
        let first = try Bitmap(width: 1, height: 1, pixelFormat: .rgba8, pixels: [1, 2, 3, 255])
        let second = try Bitmap(width: 1, height: 1, pixelFormat: .rgba8, pixels: [9, 9, 9, 255])
        let animation = AnimatedImage(frames: [.init(bitmap: first, duration: .seconds(1)), .init(bitmap: second, duration: .seconds(1))], loopCount: 0)
        let decoded = try Self.roundTrip(ImageContainer(image: first, animation: animation)).decoded
        #expect(decoded.image == first)
        #expect(decoded.animation == nil)
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
