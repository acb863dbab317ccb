import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCore

/// ``ImageMetadata`` read from headers and chunk walks. This target links WebImageCore alone,
/// which holds no decoder at all (the codecs live in WebImageCodecs), so every answer here is
/// proof that it came without decoding a pixel. The comparison with the real decoders is in
/// WebImageCodecsTests (ImageMetadataDecoderTests).
@Suite struct ImageMetadataTests {
    static let demoImages = TestFiles.repositoryRoot.appendingPathComponent("Demo/images")

    // MARK: GIF

    @Test func manyFrameGIFIsCountedWithoutDecoding() throws {
        // Demo/images/chi-animated.gif (the corpus's edge/chi.gif): 31 frames of 10 hundredths,
        // NETSCAPE2.0 loop value 0; Pillow's reference.json agrees (frames 31, loop 0, 100 ms).
        // WebImageCore cannot decode a GIF, so the count can only come from the block walk.
        let data = try Data(contentsOf: Self.demoImages.appendingPathComponent("chi-animated.gif"))
        let metadata = try ImageMetadata(reading: data)
        #expect(metadata.format == .gif)
        #expect(metadata.frameCount == 31)
        #expect(metadata.isAnimated == true)
        #expect(metadata.loopCount == 0)
        #expect(metadata.frameDurations == Array(repeating: .milliseconds(100), count: 31))
        #expect(metadata.isTruncated == false)
        #expect(metadata.orientation == .up && metadata.bitDepth == 8)
    }

    @Test func gifBlocksGiveFramesDelaysLoopsAndTransparency() throws {
        let metadata = try ImageMetadata(reading: Bytes.gif(images: 3, loopExtension: true, transparent: true))
        #expect(metadata == ImageMetadata(
            format: .gif, pixelWidth: 8, pixelHeight: 8, orientation: .up, hasAlpha: true, isAnimated: true,
            frameCount: 3, loopCount: 0, frameDurations: Array(repeating: .milliseconds(100), count: 3),
            isProgressive: false, bitDepth: 8))
        // A still GIF: no loop count, no durations, and without a transparent index, no alpha.
        let still = try ImageMetadata(reading: Bytes.gif(images: 1, transparent: false))
        #expect(still.frameCount == 1 && still.isAnimated == false && still.loopCount == nil)
        #expect(still.frameDurations.isEmpty && still.hasAlpha == false)
    }

    @Test func gifLoopValueCountsRepeatsAndOnlyTheFirstExtensionCounts() throws {
        // NETSCAPE2.0 with 2 repeats (3 plays), then a second extension saying 7: ignored.
        var bytes = Bytes.gif(images: 2, trailer: false)
        let screenEnd = 13 + 6
        let loop = { (value: Int) in [0x21, 0xFF, 11] + Bytes.ascii("NETSCAPE2.0") + [3, 1] + Bytes.le16(value) + [0] }
        bytes.insert(contentsOf: loop(2), at: screenEnd)
        bytes += loop(7) + [0x3B]
        let metadata = try ImageMetadata(reading: bytes)
        #expect(metadata.loopCount == 3)
        #expect(metadata.frameCount == 2)
        // No extension: an animation plays once.
        #expect(try ImageMetadata(reading: Bytes.gif(images: 2)).loopCount == 1)
    }

    @Test func gifInterlacedFirstFrameIsProgressive() throws {
        var bytes = Bytes.gif(images: 2)
        let flags = 13 + 6 + 9 // the first image descriptor's flags
        bytes[flags] |= 0x40
        #expect(try ImageMetadata(reading: bytes).isProgressive == true)
    }

    // MARK: PNG and APNG

    static func frameControl(sequence: Int, numerator: Int, denominator: Int) -> (String, [UInt8]) {
        ("fcTL", Bytes.be32(sequence) + Bytes.be32(4) + Bytes.be32(3) + Bytes.be32(0) + Bytes.be32(0)
            + Bytes.be16(numerator) + Bytes.be16(denominator) + [0, 0])
    }

    @Test func apngFramesComeFromFrameControls() throws {
        let controls = (0..<3).map { Self.frameControl(sequence: $0, numerator: 1, denominator: 4) }
        let bytes = Bytes.png(chunks: [("acTL", Bytes.be32(3) + Bytes.be32(2)), ("iCCP", Bytes.ascii("p\0\0x"))]
            + [controls[0], ("IDAT", [0]), controls[1], controls[2], ("IEND", [])])
        let metadata = try ImageMetadata(reading: bytes)
        #expect(metadata == ImageMetadata(
            format: .apng, pixelWidth: 4, pixelHeight: 3, orientation: .up, hasAlpha: false, isAnimated: true,
            frameCount: 3, loopCount: 2, frameDurations: Array(repeating: .milliseconds(250), count: 3),
            hasICCProfile: true, isProgressive: false, bitDepth: 8))
    }

    @Test func apngWhoseFrameCountDisagreesIsItsStillDefaultImage() throws {
        // acTL declares 4 frames, the complete file has 3 fcTL chunks: decoders show the default image.
        let controls = (0..<3).map { Self.frameControl(sequence: $0, numerator: 0, denominator: 0) }
        let bytes = Bytes.png(chunks: [("acTL", Bytes.be32(4) + Bytes.be32(0)), controls[0], ("IDAT", [0]), controls[1], controls[2], ("IEND", [])])
        let metadata = try ImageMetadata(reading: bytes)
        #expect(metadata.frameCount == 1 && metadata.isAnimated == false && metadata.loopCount == nil)
        #expect(metadata.frameDurations.isEmpty)
    }

    @Test func pngExifOrientationAndInterlace() throws {
        // A big-endian TIFF with IFD0 holding Orientation = 6, behind JPEG's Exif prefix.
        let tiff = Bytes.ascii("MM") + Bytes.be16(42) + Bytes.be32(8) + Bytes.be16(1)
            + Bytes.be16(0x0112) + Bytes.be16(3) + Bytes.be32(1) + Bytes.be16(6) + [0, 0] + Bytes.be32(0)
        var bytes = Bytes.png(chunks: [("IDAT", [0]), ("eXIf", Bytes.ascii("Exif\0\0") + tiff), ("IEND", [])])
        bytes[28] = 1 // IHDR interlace method: Adam7
        let metadata = try ImageMetadata(reading: bytes)
        #expect(metadata.orientation == .right)
        #expect(metadata.orientedWidth == 3 && metadata.orientedHeight == 4)
        #expect(metadata.isProgressive == true && metadata.hasICCProfile == false && metadata.isTruncated == false)
    }

    // MARK: JPEG

    @Test func jpegSegmentsGiveOrientationProfilePrecisionAndProgressive() throws {
        let tiff = Bytes.ascii("II") + Bytes.le16(42) + Bytes.le32(8) + Bytes.le16(1)
            + Bytes.le16(0x0112) + Bytes.le16(3) + Bytes.le32(1) + Bytes.le16(8) + [0, 0] + Bytes.le32(0)
        let app1 = Bytes.ascii("Exif\0\0") + tiff
        let app2 = Bytes.ascii("ICC_PROFILE\0") + [1, 1] + [UInt8](repeating: 7, count: 16)
        var sof = Bytes.jpegSOF(width: 40, height: 30, code: 0xC2)
        sof[4] = 12 // precision
        let bytes: [UInt8] = [0xFF, 0xD8] + [0xFF, 0xE1] + Bytes.be16(app1.count + 2) + app1
            + [0xFF, 0xE2] + Bytes.be16(app2.count + 2) + app2 + sof + [0xFF, 0xDA] + Bytes.be16(8) + [1, 1, 0, 0, 0x3F, 0]
        let metadata = try ImageMetadata(reading: bytes)
        #expect(metadata == ImageMetadata(
            format: .jpeg, pixelWidth: 40, pixelHeight: 30, orientation: .left, hasAlpha: false, isAnimated: false,
            frameCount: 1, hasICCProfile: true, isProgressive: true, bitDepth: 12))
        #expect(metadata.orientedWidth == 30)
    }

    @Test func jpegFixturesAndDemoImages() throws {
        let progressive = try ImageMetadata(reading: TestFiles.fixture("hopper-progressive-32.jpg"))
        #expect(progressive.isProgressive == true && progressive.bitDepth == 8 && progressive.orientation == .up)
        let rotated = try ImageMetadata(reading: Data(contentsOf: Self.demoImages.appendingPathComponent("hopper_orientation_6.jpg")))
        #expect(rotated.orientation == .right)
        #expect(rotated.orientedWidth == rotated.pixelHeight && rotated.orientedHeight == rotated.pixelWidth)
    }

    // MARK: WebP

    @Test func animatedWebPFramesLoopAndDurations() throws {
        // Demo/images/iss634-animated.webp (the corpus's edge/iss634.webp): 42 frames, looping
        // forever, first durations 0, 70, 60, 70, 70, 60 ms (Pillow's reference.json).
        let metadata = try ImageMetadata(reading: Data(contentsOf: Self.demoImages.appendingPathComponent("iss634-animated.webp")))
        #expect(metadata.frameCount == 42 && metadata.isAnimated == true && metadata.loopCount == 0)
        #expect(Array(metadata.frameDurations.prefix(6)) == [0, 70, 60, 70, 70, 60].map { .milliseconds($0) })
        #expect(metadata.isTruncated == false && metadata.isProgressive == false && metadata.bitDepth == 8)
    }

    // MARK: Other formats

    @Test func otherFormatsReportWhatTheirHeadersKnow() throws {
        for name in ["hopper-32.bmp", "hopper-32.ico", "shapes.svg"] {
            let metadata = try ImageMetadata(reading: TestFiles.fixture(name))
            #expect(metadata.frameCount == 1 && metadata.orientation == .up && metadata.isAnimated == false, "\(name)")
        }
        let tiff = try ImageMetadata(reading: TestFiles.fixture("hopper-32.tif"))
        #expect(tiff.orientation == .up && tiff.frameCount == nil && tiff.pixelWidth == 32)
        let avif = try ImageMetadata(reading: TestFiles.fixture("hopper-32.avif"))
        #expect(avif.orientation == .up && avif.frameCount == 1 && avif.format == .avif)
        #expect(avif.loopCount == nil, "a still AVIF has no loop count")
        // A sequence's frames and durations, as `avifdec --info` lists them: 100, 250, 40 ms.
        let sequence = try ImageMetadata(reading: TestFiles.fixture("avif-animated.avif"))
        #expect(sequence.frameCount == 3)
        #expect(sequence.frameDurations == [.milliseconds(100), .milliseconds(250), .milliseconds(40)])
        // An AVIF sequence's loop count is its edit list's plays, forever without one.
        for (name, plays) in [("avif-animated.avif", 0), ("avif-loop-once.avif", 1), ("avif-loop-3.avif", 3), ("avif-loop-infinite.avif", 0)] {
            #expect(try ImageMetadata(reading: TestFiles.fixture(name)).loopCount == plays, "\(name)")
        }
        #expect(throws: ImageError.self) { try ImageMetadata(reading: Data("not an image".utf8)) }
    }

    /// A HEIF or AVIF item's `irot` and `imir` as the EXIF orientation they amount to: the
    /// orientations AVIFDecoderTests establishes from where each fixture's quadrants land.
    @Test(arguments: [
        ("avif-irot1.avif", ImageOrientation.left), ("avif-irot2.avif", .down), ("avif-irot3.avif", .right),
        ("avif-imir0.avif", .downMirrored), ("avif-imir1.avif", .upMirrored),
        ("avif-irot1-imir0.avif", .leftMirrored), ("avif-irot1-imir1.avif", .rightMirrored),
        ("heic-orientation3.heic", .down), ("heic-orientation5.heic", .leftMirrored),
    ])
    func isoBMFFTransformsAsOrientation(name: String, orientation: ImageOrientation) throws {
        let metadata = try ImageMetadata(reading: TestFiles.fixture(name))
        #expect(metadata.orientation == orientation, "\(name)")
        #expect(metadata.frameCount == 1, "\(name)")
    }

    // MARK: Hostile and cut-short input

    static func isTooLarge(_ error: ImageError?) -> Bool {
        if case .some(.tooLarge) = error { return true }
        return false
    }

    @Test func frameCountPastTheLimitIsRefused() throws {
        #expect(try ImageMetadata(reading: Bytes.gif(images: 10), maximumFrameCount: 10).frameCount == 10)
        #expect(Self.isTooLarge(#expect(throws: ImageError.self) { try ImageMetadata(reading: Bytes.gif(images: 11), maximumFrameCount: 10) }))
        // The default limit (ImageDecodingOptions.maximumFrameCount, 10,000): 10,001 frames of
        // 15 bytes each are refused, not counted on.
        let error = #expect(throws: ImageError.self) { try ImageMetadata(reading: Bytes.gif(images: 10_001)) }
        #expect(Self.isTooLarge(error), "\(String(describing: error))")
    }

    @Test func gifSubBlockClaimingMoreThanTheFileEndsTheWalk() throws {
        // The second image's first sub-block claims 255 bytes; 3 follow.
        let bytes = Bytes.gif(images: 1, trailer: false) + [0x2C] + Bytes.le16(0) + Bytes.le16(0) + Bytes.le16(1) + Bytes.le16(1) + [0, 2, 255, 1, 2, 3]
        let metadata = try ImageMetadata(reading: bytes)
        #expect(metadata.isTruncated && metadata.frameCount == 1 && metadata.isAnimated == nil)
        // A first frame cut short still counts: its rows that arrived make a picture.
        let first = try ImageMetadata(reading: Array(Bytes.gif(images: 1).dropLast(3)))
        #expect(first.isTruncated && first.frameCount == 1)
    }

    @Test func pngChunkLengthPastTheEnd() throws {
        let bytes = Bytes.png(chunks: [("tEXt", Bytes.ascii("a\0b"))])
        var lying = bytes
        lying.replaceSubrange(33..<37, with: Bytes.be32(0x7FFF_FFF0))
        let metadata = try ImageMetadata(reading: lying)
        #expect(metadata.isTruncated && metadata.pixelWidth == 4 && metadata.frameCount == 1)
        #expect(metadata.orientation == nil, "an eXIf could come later")
        lying.replaceSubrange(33..<37, with: Bytes.be32(0xFFFF_FFFF))
        #expect(try ImageMetadata(reading: lying).isTruncated)
    }

    @Test func webPRIFFSizeLies() throws {
        // VP8X flagged animated, ANIM, one ANMF, then a chunk claiming 4 GB.
        let vp8x: [UInt8] = [0x02, 0, 0, 0, 3, 0, 0, 2, 0, 0]
        let anmf: [UInt8] = [UInt8](repeating: 0, count: 12) + [0x2C, 0x01, 0, 0]
        var body: [UInt8] = Bytes.ascii("WEBP") + Bytes.ascii("VP8X") + Bytes.le32(10) + vp8x
        body += Bytes.ascii("ANIM") + Bytes.le32(6) + [0, 0, 0, 0] as [UInt8] + Bytes.le16(3)
        body += Bytes.ascii("ANMF") + Bytes.le32(anmf.count) + anmf
        let honest = Bytes.ascii("RIFF") + Bytes.le32(body.count) + body
        let metadata = try ImageMetadata(reading: honest)
        #expect(metadata.frameCount == 1 && metadata.loopCount == 3 && metadata.frameDurations == [.milliseconds(300)])
        #expect(!metadata.isTruncated && metadata.pixelWidth == 4 && metadata.pixelHeight == 3)
        // RIFF claims 4 GB: the bytes end first.
        let longer = Bytes.ascii("RIFF") + Bytes.le32(0xFFFF_FFF0) + body + Bytes.ascii("ANMF") + Bytes.le32(0xFFFF_FF00)
        let cut = try ImageMetadata(reading: longer)
        #expect(cut.isTruncated && cut.frameCount == 1 && cut.hasICCProfile == nil)
        // RIFF claims less than the bytes: chunks after its end are not the file's.
        let shorter = Bytes.ascii("RIFF") + Bytes.le32(body.count) + body + Bytes.ascii("ANMF") + Bytes.le32(anmf.count) + anmf
        #expect(try ImageMetadata(reading: shorter).frameCount == 1)
    }

    @Test(arguments: ["hopper.gif", "dispose_bgnd.gif", "apng-delay.png", "hopper-rgba-32.png", "hopper-animated-16.webp", "hopper.webp"])
    func everyPrefixIsMarkedCutShort(name: String) throws {
        let data = try TestFiles.fixture(name)
        let full = try ImageMetadata(reading: data)
        #expect(!full.isTruncated)
        #expect(try ImageMetadata(reading: Array(data)) == full, "[UInt8] and Data agree")
        // Every length near the start (headers) and a stride through the rest.
        let lengths = Array(1..<min(200, data.count)) + Array(stride(from: 200, to: data.count, by: 97))
        for length in lengths {
            let result = Result { try ImageMetadata(reading: data.prefix(length)) }.mapError { ($0 as? ImageError) ?? .corruptData("not an ImageError: \($0)") }
            guard case .success(let partial) = result else {
                // Too short to tell the format: the only error a cut-short file can give.
                if case .failure(.unsupportedFormat) = result, length < 16 { continue }
                Issue.record("\(name), \(length) bytes: \(result)")
                continue
            }
            #expect(partial.isTruncated, "\(name), \(length) bytes")
            #expect((partial.frameCount ?? 0) <= (full.frameCount ?? 0), "\(name), \(length) bytes")
            #expect(partial.frameDurations.count <= full.frameDurations.count, "\(name), \(length) bytes")
        }
    }
}
