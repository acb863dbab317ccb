import Foundation
import Testing
import WebImageTestSupport
import WebImageCore
@testable import WebImageCodecs

/// The PNG decoder on files built from the specification (every colour type, bit depth,
/// transparency and interlacing), the repository fixtures, metadata, limits and damage.
@Suite struct PNGDecoderTests {
    typealias Pixel = PNGBuilder.Pixel

    static func decode(_ bytes: [UInt8], options: ImageDecodingOptions = .init()) throws -> ImageContainer {
        try PNGDecoder().decode(Data(bytes), options: options)
    }

    static func rgba(_ bitmap: Bitmap) -> [[UInt8]] {
        stride(from: 0, to: bitmap.pixels.count, by: 4).map { Array(bitmap.pixels[$0..<($0 + 4)]) }
    }

    /// A deterministic test pattern of samples below `2^bitDepth`.
    static func pattern(width: Int, height: Int, channels: Int, bitDepth: Int) -> [[Pixel]] {
        let maximum = (1 << bitDepth) - 1
        return (0..<height).map { y in
            (0..<width).map { x in
                (0..<channels).map { c in UInt16((x * 37 + y * 101 + c * 53 + x * y * 7) % (maximum + 1)) }
            }
        }
    }

    /// What a sample at `bitDepth` becomes in 8 bits: low depths scale up exactly (×255, ×85,
    /// ×17), 16 bits round to the nearest (`v × 255 / 65535`).
    static func eight(_ sample: UInt16, bitDepth: Int) -> UInt8 {
        switch bitDepth {
        case 16: UInt8((Int(sample) * 255 + 32767) / 65535)
        case 8: UInt8(sample)
        default: UInt8(Int(sample) * 255 / ((1 << bitDepth) - 1))
        }
    }

    /// A 16-bit file whose samples round and truncate to different 8-bit values: every sample
    /// decodes to the nearest, `v × 255 / 65535` rounded, worked out here from the 16-bit
    /// samples as png-samples.py reads them (not by libpng); the high byte Pillow keeps would be
    /// 1 lower for most of them.
    @Test func sixteenBitSamplesRoundToNearest() throws {
        let path = ISOBMFFTestFiles.fixtures.appendingPathComponent("png-16bit-rounding.png").path
        let wide = try ISOBMFFTestFiles.pngSamples(path: path)
        #expect(wide.depth == 16 && wide.channels == 4)
        let rounded = wide.values.map { Int((Double($0) * 255 / 65535).rounded()) }
        let truncated = wide.values.map { $0 >> 8 }
        #expect(zip(rounded, truncated).filter { $0 != $1 }.count >= wide.values.count / 2, "the fixture tells the two apart")
        let image = try PNGDecoder().decode(Data(contentsOf: URL(fileURLWithPath: path)), options: .init()).image
        let difference = try #require(ISOBMFFTestFiles.maximumDifference(image, wide, to8: { Int((Double($0) * 255 / 65535).rounded()) }))
        #expect(difference == 0, "differs from the rounded 16-bit samples by \(difference)")
    }

    struct Case: CustomTestStringConvertible {
        var colorType: UInt8
        var bitDepth: Int
        var interlaced: Bool
        var testDescription: String { "colour type \(colorType), \(bitDepth)-bit\(interlaced ? ", interlaced" : "")" }
    }

    static let cases: [Case] = [(0, [1, 2, 4, 8, 16]), (2, [8, 16]), (3, [1, 2, 4, 8]), (4, [8, 16]), (6, [8, 16])]
        .flatMap { type, depths in depths.flatMap { depth in [false, true].map { Case(colorType: type, bitDepth: depth, interlaced: $0) } } }

    /// Every colour type at every bit depth PNG allows, plain and Adam7-interlaced, with a
    /// `tRNS` chunk where the colour type takes one: each pixel decodes to the RGBA the
    /// specification gives.
    @Test(arguments: cases)
    func everyColourTypeAndBitDepth(_ test: Case) throws {
        // 13×11: odd sizes leave Adam7 passes partly empty and rows ending mid-byte.
        let width = 13, height = 11
        let channels = PNGBuilder.channels(colorType: test.colorType)
        let pixels = Self.pattern(width: width, height: height, channels: channels, bitDepth: test.bitDepth)
        var before: [(String, [UInt8])] = []
        var palette: [[UInt8]] = []
        var paletteAlpha: [UInt8] = []
        var transparentSample: Pixel?
        switch test.colorType {
        case 3:
            let entries = 1 << test.bitDepth
            palette = (0..<entries).map { [UInt8($0 * 255 / max(1, entries - 1)), UInt8(($0 * 91) % 256), UInt8(255 - $0 % 256)] }
            // Alpha for the first few entries only; the rest are opaque.
            paletteAlpha = (0..<min(entries, 3)).map { UInt8($0 * 100) }
            before = [("PLTE", palette.flatMap { $0 }), ("tRNS", paletteAlpha)]
        case 0, 2:
            transparentSample = pixels[2][3]
            before = [("tRNS", transparentSample!.flatMap { PNGBuilder.be16(Int($0)) })]
        default:
            break
        }
        let bytes = PNGBuilder.png(pixels, bitDepth: test.bitDepth, colorType: test.colorType, interlaced: test.interlaced, before: before)
        let container = try Self.decode(bytes)
        #expect(container.image.width == width && container.image.height == height)
        #expect(container.image.pixelFormat == .rgba8)
        #expect(container.animation == nil)
        let decoded = Self.rgba(container.image)
        var transparentSeen = 0
        for y in 0..<height {
            for x in 0..<width {
                let sample = pixels[y][x]
                let expected: [UInt8]
                switch test.colorType {
                case 3:
                    let index = Int(sample[0])
                    expected = palette[index] + [index < paletteAlpha.count ? paletteAlpha[index] : 255]
                case 0:
                    let grey = Self.eight(sample[0], bitDepth: test.bitDepth)
                    expected = [grey, grey, grey, sample == transparentSample ? 0 : 255]
                case 4:
                    let grey = Self.eight(sample[0], bitDepth: test.bitDepth)
                    expected = [grey, grey, grey, Self.eight(sample[1], bitDepth: test.bitDepth)]
                case 2:
                    expected = sample.map { Self.eight($0, bitDepth: test.bitDepth) } + [sample == transparentSample ? 0 : 255]
                default:
                    expected = sample.map { Self.eight($0, bitDepth: test.bitDepth) }
                }
                if expected[3] == 0 { transparentSeen += 1 }
                #expect(decoded[y * width + x] == expected, "pixel (\(x), \(y))")
            }
        }
        if test.colorType != 4, test.colorType != 6 {
            #expect(transparentSeen > 0, "the tRNS chunk made some pixel transparent")
        }
    }

    /// A 16-bit sample that differs from the `tRNS` value only in its low byte stays opaque:
    /// transparency is decided at full depth, before the reduction to 8 bits.
    @Test func tRNSComparesSixteenBitSamples() throws {
        let pixels: [[Pixel]] = [[[0x1234], [0x1235]]]
        let container = try Self.decode(PNGBuilder.png(pixels, bitDepth: 16, colorType: 0, before: [("tRNS", [0x12, 0x34])]))
        #expect(Self.rgba(container.image) == [[0x12, 0x12, 0x12, 0], [0x12, 0x12, 0x12, 255]])
    }

    /// gAMA is not applied: a file that says its samples are linear (gamma 1.0) decodes to
    /// the stored samples, as Pillow and browsers without colour management show them.
    @Test func gammaIsNotApplied() throws {
        let pixels: [[Pixel]] = [[[10, 128, 250, 255]]]
        let container = try Self.decode(PNGBuilder.png(pixels, before: [("gAMA", PNGBuilder.be32(100_000))]))
        #expect(Self.rgba(container.image) == [[10, 128, 250, 255]])
    }

    /// The iCCP profile comes out byte for byte; a damaged one is left out without failing
    /// the decode.
    @Test func iccProfile() throws {
        let profile = (0..<600).map { UInt8(truncatingIfNeeded: $0 * 13) }
        let iccp = Array("sRGB-ish".utf8) + [0, 0] + PNGBuilder.zlibStored(profile)
        let container = try Self.decode(PNGBuilder.png(PNGBuilder.solid(2, 2, [1, 2, 3, 255]), before: [("iCCP", iccp)]), options: .preservingColor)
        #expect(container.iccProfile.map(Array.init) == profile)

        var damaged = Array("x".utf8) + [0, 0] + PNGBuilder.zlibStored(profile)
        damaged[damaged.count - 1] ^= 0xFF // the Adler-32
        let plain = try Self.decode(PNGBuilder.png(PNGBuilder.solid(2, 2, [1, 2, 3, 255]), before: [("iCCP", damaged)]))
        #expect(plain.iccProfile == nil)
        #expect(Self.rgba(plain.image).allSatisfy { $0 == [1, 2, 3, 255] })
    }

    /// An eXIf orientation is reported, not applied, by the decoder; the registry turns the
    /// pixels upright.
    @Test func exifOrientation() throws {
        // Big-endian TIFF, one IFD entry: Orientation (0x0112), SHORT, 1 value, 6.
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
        let pixels = (0..<2).map { y in (0..<3).map { x -> Pixel in [UInt16(x * 80), UInt16(y * 80), 0, 255] } }
        let bytes = PNGBuilder.png(pixels, before: [("eXIf", tiff)])
        let raw = try Self.decode(bytes)
        #expect(raw.orientation == .right)
        #expect(raw.image.width == 3 && raw.image.height == 2)
        let upright = try CoderRegistry(decoders: [PNGDecoder()]).decode(Data(bytes))
        #expect(upright.image.width == 2 && upright.image.height == 3)
    }

    @Test func fixtures() throws {
        let hopper = try PNGDecoder().decode(try PNGGIFReference.fixture("hopper.png"), options: .init())
        #expect(hopper.image.width == 128 && hopper.image.height == 128)
        #expect(Self.rgba(hopper.image).allSatisfy { $0[3] == 255 })
        #expect(hopper.format == .png)

        let rgba = try PNGDecoder().decode(try PNGGIFReference.fixture("hopper-rgba-32.png"), options: .init())
        #expect(rgba.image.width == 32 && rgba.image.height == 32)

        // A palette image whose tRNS makes its one pixel fully transparent; the stored colour
        // stays (reference.json: [255, 77, 0, 0]).
        let tRNS = try PNGDecoder().decode(try PNGGIFReference.fixture("tRNS_null_1x1.png"), options: .init())
        #expect(Self.rgba(tRNS.image) == [[255, 77, 0, 0]])

        #expect(throws: ImageError.self) { try PNGDecoder().decode(try PNGGIFReference.fixture("broken.png"), options: .init()) }
    }

    // MARK: - Limits

    /// The pixel limit is checked from IHDR: a 100 000 × 100 000 header with a few bytes of
    /// data fails as too large, not as an allocation.
    @Test func pixelLimitFromTheHeader() throws {
        let bytes = PNGBuilder.raw([
            PNGBuilder.chunk("IHDR", PNGBuilder.ihdr(width: 100_000, height: 100_000, bitDepth: 8, colorType: 6, interlaced: false)),
            PNGBuilder.chunk("IDAT", PNGBuilder.zlibStored([0, 1, 2, 3])),
            PNGBuilder.chunk("IEND", []),
        ])
        #expect(throws: ImageError.tooLarge("PNG: 100000×100000 is more than the 100000000-pixel limit")) { try Self.decode(bytes) }

        var options = ImageDecodingOptions()
        options.maximumPixelCount = 12
        let small = PNGBuilder.png(PNGBuilder.solid(4, 4, [0, 0, 0, 255]))
        #expect(throws: ImageError.self) { try Self.decode(small, options: options) }
        options.maximumPixelCount = 16
        #expect(try Self.decode(small, options: options).image.width == 4)
    }

    /// Compressed text is never inflated unboundedly: a zTXt chunk inflating past 1 MiB is a
    /// zlib bomb (the way Pillow rejects `png_decompression_dos.png`), and so is text adding
    /// up past 8 MiB; text within the limits decodes.
    @Test(.timeLimit(.minutes(10 * Sanitizers.slowdown))) func textBombs() throws {
        let image = PNGBuilder.solid(1, 1, [0, 0, 0, 255])
        func zTXt(_ size: Int) -> (String, [UInt8]) {
            ("zTXt", Array("Comment".utf8) + [0, 0] + PNGBuilder.zlibStored([UInt8](repeating: 0x41, count: size)))
        }
        #expect(try Self.decode(PNGBuilder.png(image, before: [zTXt(1 << 20)])).image.width == 1)
        #expect(throws: ImageError.self) { try Self.decode(PNGBuilder.png(image, before: [zTXt((1 << 20) + 1)])) }
        let nine = Array(repeating: zTXt(1 << 20), count: 9)
        #expect(throws: ImageError.self) { try Self.decode(PNGBuilder.png(image, before: nine)) }
        // Compressed iTXt counts too.
        let itxt = ("iTXt", Array("Title".utf8) + [0, 1, 0, 0, 0] + PNGBuilder.zlibStored([UInt8](repeating: 0x42, count: (1 << 20) + 10)))
        #expect(throws: ImageError.self) { try Self.decode(PNGBuilder.png(image, after: [itxt])) }
        // A corrupt zlib stream in a text chunk is corrupt data.
        #expect(throws: ImageError.self) { try Self.decode(PNGBuilder.png(image, before: [("zTXt", Array("a".utf8) + [0, 0, 0x78, 0x01, 0xFF])])) }
    }

    /// A few bytes claiming a big image fail before its bitmap is allocated: deflate cannot
    /// expand more than 1032:1, so 40 bytes of image data cannot make 9 999 × 9 999 pixels.
    @Test func imageDataTooShortForTheHeader() throws {
        let bytes = PNGBuilder.raw([
            PNGBuilder.chunk("IHDR", PNGBuilder.ihdr(width: 9_999, height: 9_999, bitDepth: 8, colorType: 6, interlaced: false)),
            PNGBuilder.chunk("IDAT", [UInt8](repeating: 0, count: 40)),
            PNGBuilder.chunk("IEND", []),
        ])
        #expect(throws: ImageError.corruptData("PNG: 40 bytes of image data cannot hold 9999×9999 pixels")) { try Self.decode(bytes) }
    }

    // MARK: - Damage

    /// Every prefix of a PNG either decodes (only once the image data is complete: a missing
    /// IEND is tolerated) or throws an ``ImageError``; none crashes.
    @Test func truncatedAtEveryOffset() throws {
        let pixels = Self.pattern(width: 9, height: 7, channels: 4, bitDepth: 8)
        for interlaced in [false, true] {
            let text = Array("k".utf8) + [0] + Array("v".utf8)
            let bytes = PNGBuilder.png(pixels, interlaced: interlaced, after: [("tEXt", text)])
            let full = try Self.decode(bytes)
            let idatEnd = bytes.count - PNGBuilder.chunk("IEND", []).count - PNGBuilder.chunk("tEXt", text).count
            for length in 0..<bytes.count {
                do {
                    let partial = try Self.decode(Array(bytes.prefix(length)))
                    #expect(length >= idatEnd, "\(length) bytes decoded")
                    #expect(partial.image == full.image)
                } catch is ImageError {
                    #expect(length < idatEnd, "\(length) bytes failed although the image data is whole")
                }
            }
        }
    }

    /// Chunk lengths that lie, bad CRCs and bytes flipped anywhere give typed errors or a
    /// decode, never a crash.
    @Test func lyingLengthsAndFlippedBytes() throws {
        let good = PNGBuilder.png(Self.pattern(width: 8, height: 8, channels: 4, bitDepth: 8))
        // IDAT's length field (after the signature and the 25-byte IHDR chunk).
        for length in [0, 1, 100, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF] {
            var bytes = good
            bytes.replaceSubrange(33..<37, with: PNGBuilder.be32(length))
            #expect(throws: ImageError.self) { try Self.decode(bytes) }
        }
        // IHDR with a bad CRC, zero width, an unknown colour type, an invalid depth.
        var badCRC = good
        badCRC[29] ^= 1
        #expect(throws: ImageError.self) { try Self.decode(badCRC) }
        for ihdr in [PNGBuilder.ihdr(width: 0, height: 8, bitDepth: 8, colorType: 6, interlaced: false),
                     PNGBuilder.ihdr(width: 8, height: 8, bitDepth: 8, colorType: 5, interlaced: false),
                     PNGBuilder.ihdr(width: 8, height: 8, bitDepth: 4, colorType: 6, interlaced: false)] {
            var bytes = good
            bytes.replaceSubrange(8..<33, with: PNGBuilder.chunk("IHDR", ihdr))
            #expect(throws: ImageError.self) { try Self.decode(bytes) }
        }
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<300 {
            var bytes = good
            for _ in 0..<3 {
                let index = Int(generator.next() % UInt64(bytes.count))
                bytes[index] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            }
            do { _ = try Self.decode(bytes) } catch is ImageError {}
        }
    }
}

