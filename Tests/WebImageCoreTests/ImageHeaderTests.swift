import Foundation
import Testing
@testable import WebImageCore

/// Every fact sniffed from every repository fixture, checked against what the file is known
/// to hold (see Tests/Fixtures/LICENSES.md for each file's origin).
@Suite struct ImageHeaderTests {
    static let expectations: [(file: String, header: ImageHeader)] = [
        ("hopper.jpg", .init(format: .jpeg, isAnimated: false, hasAlpha: false, pixelWidth: 128, pixelHeight: 128, isProgressive: false)),
        ("hopper_16bit_qtables.jpg", .init(format: .jpeg, isAnimated: false, hasAlpha: false, pixelWidth: 128, pixelHeight: 128, isProgressive: false)),
        ("hopper-progressive-32.jpg", .init(format: .jpeg, isAnimated: false, hasAlpha: false, pixelWidth: 32, pixelHeight: 32, isProgressive: true)),
        // Four-component (Adobe CMYK) JPEG: no alpha, for all its four channels.
        ("hopper-cmyk-32.jpg", .init(format: .jpeg, isAnimated: false, hasAlpha: false, pixelWidth: 32, pixelHeight: 32, isProgressive: false)),
        ("hopper.png", .init(format: .png, isAnimated: false, hasAlpha: false, pixelWidth: 128, pixelHeight: 128)),
        ("hopper-rgba-32.png", .init(format: .png, isAnimated: false, hasAlpha: true, pixelWidth: 32, pixelHeight: 32)),
        ("tRNS_null_1x1.png", .init(format: .png, isAnimated: false, hasAlpha: true, pixelWidth: 1, pixelHeight: 1)),
        ("png-16bit-rounding.png", .init(format: .png, isAnimated: false, hasAlpha: true, pixelWidth: 8, pixelHeight: 8)),
        // acTL says 4 frames; Pillow reports 5 because it also counts the default image,
        // which this file keeps out of the animation.
        ("apng-delay.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-single_frame.png", .init(format: .apng, isAnimated: false, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        // make-apng-fallback-fixtures.py: a valid two-frame APNG, and the same with one fault each
        // that makes the decoder show the still default image. The sniff sees only the acTL
        // before the image data (its CRC unchecked), so it promises an animation for all but
        // the one whose num_plays is out of range; the decoder and ImageMetadata have the last word.
        ("apng-two-frames.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-actl-crc.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-empty-fctl.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-fctl-crc.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-fdat-before-idat.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-fewer-frames.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-partial-fctl.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-second-actl.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-sequence-gap.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-too-many-plays.png", .init(format: .apng, isAnimated: false, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        ("apng-fallback-two-fctl-before-idat.png", .init(format: .apng, isAnimated: true, hasAlpha: true, pixelWidth: 128, pixelHeight: 64)),
        // The PNG signature followed by random bytes: a PNG by magic, with nothing readable after.
        ("broken.png", .init(format: .png)),
        ("hopper.gif", .init(format: .gif, isAnimated: false, hasAlpha: false, pixelWidth: 128, pixelHeight: 128)),
        // Animated, and the walk stops at the second frame without having seen transparency.
        ("dispose_bgnd.gif", .init(format: .gif, isAnimated: true, pixelWidth: 100, pixelHeight: 100)),
        // The logical screen, not the 65535×1321 frame; the data ends inside that frame.
        ("decompression_bomb.gif", .init(format: .gif, hasAlpha: true, pixelWidth: 32, pixelHeight: 32)),
        ("zero_width.gif", .init(format: .gif, hasAlpha: true, pixelWidth: 0, pixelHeight: 32)),
        ("hopper.webp", .init(format: .webp, webPEncoding: .lossy, isAnimated: false, hasAlpha: false, pixelWidth: 128, pixelHeight: 128)),
        ("hopper-lossless-32.webp", .init(format: .webp, webPEncoding: .lossless, isAnimated: false, hasAlpha: false, pixelWidth: 32, pixelHeight: 32)),
        ("hopper-alpha-32.webp", .init(format: .webp, webPEncoding: .extended, isAnimated: false, hasAlpha: true, pixelWidth: 32, pixelHeight: 32)),
        ("hopper-animated-16.webp", .init(format: .webp, webPEncoding: .extended, isAnimated: true, hasAlpha: false, pixelWidth: 16, pixelHeight: 16)),
        ("hopper-32.tif", .init(format: .tiff, hasAlpha: false, pixelWidth: 32, pixelHeight: 32)),
        ("hopper-rgba-32.tif", .init(format: .tiff, hasAlpha: true, pixelWidth: 32, pixelHeight: 32)),
        ("hopper-gray16be-32.tif", .init(format: .tiff, hasAlpha: false, pixelWidth: 32, pixelHeight: 32)),
        ("hopper-32.bmp", .init(format: .bmp, isAnimated: false, hasAlpha: false, pixelWidth: 32, pixelHeight: 32)),
        ("hopper-32.ico", .init(format: .ico, isAnimated: false, pixelWidth: 32, pixelHeight: 32)),
        ("hopper-32.avif", .init(format: .avif, pixelWidth: 32, pixelHeight: 32)),
        // The AVIF/HEIC fixtures: the primary item's `ispe`, none under a `clap` or a quarter-turn `irot`.
        ("avif-gradient.avif", .init(format: .avif, pixelWidth: 32, pixelHeight: 32)),
        ("avif-alpha.avif", .init(format: .avif, pixelWidth: 32, pixelHeight: 32)),
        ("avif-10bit.avif", .init(format: .avif, pixelWidth: 32, pixelHeight: 32)),
        ("avif-12bit-420.avif", .init(format: .avif, pixelWidth: 32, pixelHeight: 32)),
        ("avif-irot1.avif", .init(format: .avif)),
        ("avif-irot2.avif", .init(format: .avif, pixelWidth: 48, pixelHeight: 32)),
        ("avif-irot3.avif", .init(format: .avif)),
        ("avif-imir0.avif", .init(format: .avif, pixelWidth: 48, pixelHeight: 32)),
        ("avif-imir1.avif", .init(format: .avif, pixelWidth: 48, pixelHeight: 32)),
        ("avif-irot1-imir0.avif", .init(format: .avif)),
        ("avif-irot1-imir1.avif", .init(format: .avif)),
        ("avif-clap.avif", .init(format: .avif)),
        ("avif-animated.avif", .init(format: .avif, isAnimated: true, pixelWidth: 16, pixelHeight: 16)),
        ("avif-loop-once.avif", .init(format: .avif, isAnimated: true, pixelWidth: 16, pixelHeight: 16)),
        ("avif-loop-3.avif", .init(format: .avif, isAnimated: true, pixelWidth: 16, pixelHeight: 16)),
        ("avif-loop-infinite.avif", .init(format: .avif, isAnimated: true, pixelWidth: 16, pixelHeight: 16)),
        ("avif-grid.avif", .init(format: .avif, pixelWidth: 128, pixelHeight: 256).withTiles(8)),
        ("heic-gradient.heic", .init(format: .heic, pixelWidth: 32, pixelHeight: 32)),
        ("heic-grid.heic", .init(format: .heic, pixelWidth: 128, pixelHeight: 64).withTiles(2)),
        ("heic-alpha.heic", .init(format: .heic, pixelWidth: 32, pixelHeight: 32)),
        ("heic-10bit.heic", .init(format: .heic, pixelWidth: 32, pixelHeight: 32)),
        ("heic-thumbnail.heic", .init(format: .heic, pixelWidth: 192, pixelHeight: 128)),
        ("heic-thumbnail-inverse.heic", .init(format: .heic, pixelWidth: 48, pixelHeight: 32)),
        ("heic-exif6.heic", .init(format: .heic, pixelWidth: 48, pixelHeight: 32)),
        ("heic-orientation2.heic", .init(format: .heic, pixelWidth: 48, pixelHeight: 32)),
        ("heic-orientation3.heic", .init(format: .heic, pixelWidth: 48, pixelHeight: 32)),
        ("heic-orientation4.heic", .init(format: .heic, pixelWidth: 48, pixelHeight: 32)),
        ("heic-orientation5.heic", .init(format: .heic)),
        ("heic-orientation6.heic", .init(format: .heic)),
        ("heic-orientation6-exif8.heic", .init(format: .heic)),
        ("heic-orientation7.heic", .init(format: .heic)),
        ("heic-orientation8.heic", .init(format: .heic)),
        // The JPEG XL fixtures (make-jxl-fixtures.py): the codestream's size, upright (jxlinfo
        // prints 48x32 and orientations 5 to 8 for the turned ones), and its animation flag.
        ("jxl-lossless.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 32)),
        ("jxl-container.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 32)),
        ("jxl-progressive.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 520, pixelHeight: 300)),
        ("jxl-lossy.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 128, pixelHeight: 128)),
        ("jxl-alpha.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 32)),
        ("jxl-alpha-lossy.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 32)),
        ("jxl-16bit.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 32)),
        ("jxl-grey-alpha.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 32)),
        ("jxl-animated.jxl", .init(format: .jxl, isAnimated: true, pixelWidth: 16, pixelHeight: 16)),
        ("jxl-loops.jxl", .init(format: .jxl, isAnimated: true, pixelWidth: 16, pixelHeight: 16)),
        ("jxl-bomb-9000.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 9000, pixelHeight: 9000)),
        ("jxl-announces-30000.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 30000, pixelHeight: 30000)),
        ("jxl-orientation2.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 48, pixelHeight: 32)),
        ("jxl-orientation3.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 48, pixelHeight: 32)),
        ("jxl-orientation4.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 48, pixelHeight: 32)),
        ("jxl-orientation5.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 48)),
        ("jxl-orientation6.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 48)),
        ("jxl-orientation7.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 48)),
        ("jxl-orientation8.jxl", .init(format: .jxl, isAnimated: false, pixelWidth: 32, pixelHeight: 48)),
        ("shapes.svg", .init(format: .svg)),
    ]

    @Test(arguments: expectations)
    func fixtureHeader(file: String, expected: ImageHeader) throws {
        let data = try TestFiles.fixture(file)
        #expect(ImageHeader(sniffing: data) == expected)
        #expect(ImageFormat(sniffing: data) == expected.format, "the format-only path agrees")
    }

    @Test func everyFixtureHasAnExpectation() throws {
        let covered = Set(Self.expectations.map(\.file))
        #expect(Set(try TestFiles.fixtureImageNames()) == covered)
    }

    @Test func pixelCountSaturatesInsteadOfOverflowing() {
        #expect(ImageHeader(format: .png, pixelWidth: 3, pixelHeight: 4).pixelCount == 12)
        #expect(ImageHeader(format: .png, pixelWidth: 3).pixelCount == nil)
        // Two lying 32-bit PNG dimensions multiply past Int.max on 64-bit.
        let huge = ImageHeader(format: .png, pixelWidth: Int(UInt32.max), pixelHeight: Int(UInt32.max))
        #expect(huge.pixelCount == Int.max || huge.pixelCount == Int(UInt32.max) * Int(UInt32.max))
        #expect(ImageHeader(format: .png, pixelWidth: .max, pixelHeight: 2).pixelCount == .max)
    }

    @Test func webPCanvasUsesAll24Bits() {
        // VP8X canvas of 16 777 216 × 1 (the largest width the header can express).
        var bytes = Bytes.riff("VP8X", payload: [0x10, 0, 0, 0] + [0xFF, 0xFF, 0xFF] + [0, 0, 0])
        let header = ImageHeader(sniffing: bytes)
        #expect(header == .init(format: .webp, webPEncoding: .extended, isAnimated: false, hasAlpha: true,
                                pixelWidth: 1 << 24, pixelHeight: 1))
        bytes[20] = 0x02 // animation flag only
        #expect(ImageHeader(sniffing: bytes)?.isAnimated == true)
        #expect(ImageHeader(sniffing: bytes)?.hasAlpha == false)
    }

    @Test func apngNeedsACTLBeforeTheFirstIDAT() {
        let before = Bytes.png(chunks: [("acTL", Bytes.be32(3) + Bytes.be32(0)), ("IDAT", [0]), ("IEND", [])])
        #expect(ImageHeader(sniffing: before)?.format == .apng)
        #expect(ImageHeader(sniffing: before)?.isAnimated == true)
        // The APNG spec: an acTL after IDAT is not an animation control chunk.
        let after = Bytes.png(chunks: [("IDAT", [0]), ("acTL", Bytes.be32(3) + Bytes.be32(0)), ("IEND", [])])
        #expect(ImageHeader(sniffing: after) == .init(format: .png, isAnimated: false, hasAlpha: false, pixelWidth: 4, pixelHeight: 3))
    }

    @Test func pngTransparencyComesFromColourTypeOrTRNS() {
        for (colourType, expected) in [(0, false), (2, false), (3, false), (4, true), (6, true)] {
            let plain = Bytes.png(colourType: UInt8(colourType), chunks: [("IDAT", [0])])
            #expect(ImageHeader(sniffing: plain)?.hasAlpha == expected, "colour type \(colourType)")
        }
        let palette = Bytes.png(colourType: 3, chunks: [("PLTE", [0, 0, 0]), ("tRNS", [0]), ("IDAT", [0])])
        #expect(ImageHeader(sniffing: palette)?.hasAlpha == true)
        // Cut before IDAT: a palette image might still get a tRNS, so alpha is unknown.
        let cut = Bytes.png(colourType: 3, chunks: [("PLTE", [0, 0, 0])])
        #expect(ImageHeader(sniffing: cut)?.hasAlpha == nil)
        #expect(ImageHeader(sniffing: cut)?.isAnimated == nil)
    }

    @Test func gifAnimationIsASecondImageNotALoopExtension() throws {
        // A still GIF with a NETSCAPE loop extension is still a still.
        let still = Bytes.gif(images: 1, loopExtension: true)
        #expect(ImageHeader(sniffing: still)?.isAnimated == false)
        #expect(ImageHeader(sniffing: Bytes.gif(images: 2))?.isAnimated == true)
        #expect(ImageHeader(sniffing: Bytes.gif(images: 0))?.isAnimated == false)
        // Without its trailer, a one-image GIF might have had more: unknown.
        #expect(ImageHeader(sniffing: Bytes.gif(images: 1).dropLast()) == .init(format: .gif, pixelWidth: 8, pixelHeight: 8))
        // Transparency is a flag in the graphic control extension.
        #expect(ImageHeader(sniffing: Bytes.gif(images: 1, transparent: true))?.hasAlpha == true)
        #expect(ImageHeader(sniffing: Bytes.gif(images: 1, transparent: false))?.hasAlpha == false)
    }

    @Test func jpegSkipsStrayBytesBetweenSegmentsLikeLibjpeg() {
        // A comment whose length is 5 bytes short, then the frame header: the layout of the
        // corpus's junk_jpeg_header.jpg, which libjpeg and Pillow decode with a warning.
        let comment = Array("made by hand".utf8)
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFE] + Bytes.be16(2 + comment.count) + comment + Array("hello".utf8)
            + Bytes.jpegSOF(width: 640, height: 480)
        #expect(ImageHeader(sniffing: bytes)?.pixelWidth == 640)
        #expect(ImageHeader(sniffing: bytes)?.pixelHeight == 480)
    }

    @Test func jpegFrameHeaderOfEveryProcess() {
        // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC), which must be skipped as segments.
        for code in UInt8(0xC0)...0xCF {
            let bytes: [UInt8] = [0xFF, 0xD8] + Bytes.jpegSOF(width: 300, height: 200, code: code)
            let expectedWidth: Int? = [0xC4, 0xC8, 0xCC].contains(code) ? nil : 300
            #expect(ImageHeader(sniffing: bytes)?.pixelWidth == expectedWidth, "marker \(String(code, radix: 16))")
            // The progressive processes: SOF2, SOF6, SOF10, SOF14.
            let expectedProgressive: Bool? = expectedWidth == nil ? nil : [0xC2, 0xC6, 0xCA, 0xCE].contains(code)
            #expect(ImageHeader(sniffing: bytes)?.isProgressive == expectedProgressive, "marker \(String(code, radix: 16))")
        }
    }

    @Test func bmpDimensionsAndAlphaMasks() {
        // A top-down BMP stores a negative height.
        let topDown = Bytes.bmp(dibSize: 40, width: 20, height: -10, bitsPerPixel: 24)
        #expect(ImageHeader(sniffing: topDown) == .init(format: .bmp, isAnimated: false, hasAlpha: false, pixelWidth: 20, pixelHeight: 10))
        let core = Bytes.bmp(dibSize: 12, width: 7, height: 9, bitsPerPixel: 24)
        #expect(ImageHeader(sniffing: core)?.pixelWidth == 7)
        #expect(ImageHeader(sniffing: core)?.pixelHeight == 9)
        // A V5 header with BI_BITFIELDS and a non-zero alpha mask.
        let argb = Bytes.bmp(dibSize: 124, width: 2, height: 2, bitsPerPixel: 32, compression: 3, alphaMask: 0xFF00_0000)
        #expect(ImageHeader(sniffing: argb)?.hasAlpha == true)
        let xrgb = Bytes.bmp(dibSize: 124, width: 2, height: 2, bitsPerPixel: 32, compression: 3, alphaMask: 0)
        #expect(ImageHeader(sniffing: xrgb)?.hasAlpha == false)
        // 32-bit BI_RGB: the fourth byte means nothing definite.
        let rgbx = Bytes.bmp(dibSize: 40, width: 2, height: 2, bitsPerPixel: 32)
        #expect(ImageHeader(sniffing: rgbx)?.hasAlpha == nil)
    }

    @Test func icoReportsTheLargestEntryAndZeroMeans256() throws {
        var bytes: [UInt8] = [0, 0, 1, 0, 3, 0]
        for (width, height) in [(16, 16), (0, 0), (48, 48)] as [(UInt8, UInt8)] {
            bytes += [width, height, 0, 0, 1, 0, 32, 0] + Bytes.le32(0) + Bytes.le32(0)
        }
        #expect(ImageHeader(sniffing: bytes)?.pixelWidth == 256)
        #expect(ImageHeader(sniffing: bytes)?.pixelHeight == 256)
        // With the directory cut short, the largest entry may be the missing one: no size.
        #expect(ImageHeader(sniffing: bytes.prefix(6 + 16 * 2 - 1)) == .init(format: .ico, isAnimated: false))
    }
}

extension ImageHeader {
    /// The header with the tile count the grid fixtures' boxes state (`iref` `dimg` entries, and
    /// the grid descriptor's rows × columns, read by hand from the files).
    func withTiles(_ count: Int) -> ImageHeader {
        var header = self
        header.tileCount = count
        return header
    }
}
