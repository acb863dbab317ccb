import CCodecShims
import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// The JPEG decoder on the repository's fixtures (always) and on every JPEG of
/// `../shared/corpus` (when present). Conformance with `reference.json` is ConformanceTests'.
@Suite struct JPEGDecoderTests {
    /// A decoder that converts to sRGB whatever the options say (the deprecated
    /// `init(convertsToSRGB:)`'s behaviour).
    static var alwaysConverting: JPEGDecoder {
        var decoder = JPEGDecoder()
        decoder.alwaysConvertsToSRGB = true
        return decoder
    }

    /// TurboJPEG (the fast path for grey, RGB and YCbCr) and the libjpeg path (CMYK,
    /// incremental) give the same bytes, full size and scaled: the incremental decoder's final
    /// image can equal the full decode only if they do.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"),
          arguments: JPEGTests.corpusJPEGs.map(\.file))
    func turboJPEGAndLibJPEGAgree(file: String) throws {
        try expectEnginesAgree(try JPEGTests.corpus(file), file: file)
    }

    /// At 1/8 scale a progressive file decodes from its DC scans alone: the same bytes as a
    /// decode of the whole file, from a much smaller input.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"),
          arguments: ["photos/autumn-2560x1600-progressive.jpg", "photos/elephants-1920x1080-progressive.jpg",
                      "photos/volna-5120x2880-progressive.jpg", "photos/GreenMeadow.jpg",
                      "photos/FreshFlower.jpg", "edge/icc_profile_big.jpg", "edge/truncated_jpeg.jpg"])
    func progressiveEighthScaleSkipsTheACScans(file: String) throws {
        let data = try JPEGTests.corpus(file)
        let dcScans = data.withUnsafeBytes { JPEGScanFilter.dcScansOnly($0) }
        if file == "edge/truncated_jpeg.jpg" {
            #expect(dcScans == nil, "a truncated file is decoded whole")
        } else {
            let dcScans = try #require(dcScans)
            print("JPEG DC scans of \(file): \(dcScans.count) of \(data.count) bytes")
            // The ICC profile (400 KB) is most of icc_profile_big.jpg.
            #expect(dcScans.count < data.count / 2 || file == "edge/icc_profile_big.jpg")
        }
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(8)
        var libjpeg = JPEGDecoder()
        libjpeg.engine = .libjpeg
        let fast = try JPEGDecoder().decode(data, options: options).image
        let whole = try libjpeg.decode(data, options: options).image
        #expect(fast.width * 8 >= whole.width && fast.width == whole.width && fast.height == whole.height)
        #expect(fast == whole, "\(file)")
    }

    @Test func scanFilterLeavesOtherFilesAlone() throws {
        let progressive = try JPEGTests.fixture("hopper-progressive-32.jpg")
        #expect(progressive.withUnsafeBytes { JPEGScanFilter.dcScansOnly($0) } != nil)
        for name in ["hopper.jpg", "hopper_16bit_qtables.jpg", "hopper-cmyk-32.jpg"] {
            #expect(try JPEGTests.fixture(name).withUnsafeBytes { JPEGScanFilter.dcScansOnly($0) } == nil, "\(name) has no AC scans to drop")
        }
        // A progressive file whose scans stop after the DC ones has nothing to drop.
        let bytes = [UInt8](progressive)
        let segments = JPEGTests.segments(of: progressive)
        let firstScan = try #require(segments.last).range.lowerBound
        var secondScan = try #require(segments.last).range.upperBound
        while !(bytes[secondScan] == 0xFF && bytes[secondScan + 1] == 0xDA) { secondScan += 1 }
        let dcOnly = Data(bytes[..<secondScan] + [0xFF, 0xD9])
        #expect(firstScan < secondScan)
        #expect(dcOnly.withUnsafeBytes { JPEGScanFilter.dcScansOnly($0) } == nil)
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(4)
        #expect(try JPEGDecoder().decode(progressive, options: options).image.width == 4)
    }

    @Test(arguments: ["hopper.jpg", "hopper-progressive-32.jpg", "hopper_16bit_qtables.jpg"])
    func turboJPEGAndLibJPEGAgreeOnFixtures(name: String) throws {
        try expectEnginesAgree(try JPEGTests.fixture(name), file: name)
    }

    private func expectEnginesAgree(_ data: Data, file: String) throws {
        var libjpeg = JPEGDecoder()
        libjpeg.engine = .libjpeg
        var thumbnail = ImageDecodingOptions()
        thumbnail.thumbnail = .maxPixelSize(100)
        for options in [ImageDecodingOptions(), thumbnail] {
            let fast: ImageContainer, slow: ImageContainer
            do {
                fast = try JPEGDecoder().decode(data, options: options)
            } catch {
                // Undecodable files must fail the same way on both paths.
                #expect(throws: ImageError.self, "\(file)") { try libjpeg.decode(data, options: options) }
                continue
            }
            slow = try libjpeg.decode(data, options: options)
            #expect(fast.image == slow.image, "\(file) at \(String(describing: options.thumbnail))")
        }
    }

    // MARK: - Fixtures (no corpus needed)

    /// The whole-image mean colour Pillow reports for each fixture, and ours within 1.
    @Test(arguments: [
        ("hopper.jpg", 128, [89.72, 80.08, 95.41]),
        ("hopper-progressive-32.jpg", 32, [89.77, 80.13, 95.42]),
        ("hopper_16bit_qtables.jpg", 128, [90.13, 80.28, 94.8]),
        ("hopper-cmyk-32.jpg", 32, [89.55, 79.95, 95.21]),
    ])
    func decodesFixtures(name: String, side: Int, mean: [Double]) throws {
        let container = try JPEGTests.registry.decode(try JPEGTests.fixture(name))
        let image = container.image
        #expect(image.width == side && image.height == side)
        var sums = [0, 0, 0, 0]
        for pixel in stride(from: 0, to: image.pixels.count, by: 4) {
            for channel in 0..<4 { sums[channel] += Int(image.pixels[pixel + channel]) }
        }
        let count = Double(side * side)
        for channel in 0..<3 {
            #expect(abs(Double(sums[channel]) / count - mean[channel]) <= 1, "\(name) channel \(channel)")
        }
        #expect(Double(sums[3]) / count == 255, "JPEG pixels are opaque")
    }

    /// The CMYK fixture (Adobe marker, transform 0: plain inverted CMYK, not YCCK) cell by cell
    /// against Pillow's RGB; the corpus's `pil_sample_cmyk.jpg` covers YCCK.
    @Test func decodesInvertedCMYKLikePillow() throws {
        let pillow: [[Int]] = [[56, 55, 93], [37, 35, 74], [87, 74, 85], [146, 137, 134], [127, 131, 149], [80, 115, 181], [66, 105, 178], [72, 110, 182], [54, 53, 92], [65, 59, 86], [37, 28, 26], [78, 57, 47], [92, 69, 55], [52, 68, 102], [76, 115, 185], [77, 116, 187], [93, 86, 109], [33, 29, 58], [124, 78, 56], [199, 131, 102], [191, 121, 92], [121, 107, 121], [95, 133, 194], [95, 133, 196], [30, 27, 60], [58, 50, 69], [196, 132, 97], [214, 134, 102], [213, 132, 102], [154, 137, 151], [108, 143, 201], [107, 140, 202], [32, 23, 44], [135, 55, 54], [172, 105, 54], [183, 108, 76], [180, 109, 79], [108, 131, 173], [111, 147, 202], [109, 142, 203], [77, 59, 63], [49, 14, 17], [33, 29, 30], [181, 127, 104], [162, 126, 114], [17, 19, 28], [57, 68, 97], [97, 125, 177], [65, 50, 47], [12, 12, 14], [12, 11, 16], [99, 96, 100], [61, 60, 64], [21, 20, 29], [19, 17, 29], [49, 59, 85], [50, 39, 36], [78, 72, 77], [41, 37, 42], [74, 70, 76], [25, 22, 30], [92, 56, 70], [71, 35, 43], [30, 34, 52]]
        let data = try JPEGTests.fixture("hopper-cmyk-32.jpg")
        let image = try JPEGTests.registry.decode(data).image
        let ours = fingerprint(image).map { Array($0.prefix(3)) }
        #expect(fingerprintDistance(ours, pillow) <= JPEGTests.tolerance)

        // Without the APP14 marker the file reads the same: CMYK is taken as inverted either way.
        #expect(data[2] == 0xFF && data[3] == 0xEE && data[4] == 0 && data[5] == 14)
        var stripped = data
        stripped.removeSubrange(2..<18)
        #expect(try JPEGTests.registry.decode(stripped).image == image)
    }

    @Test func convertsCMYKBothWays() {
        // Inverted (Adobe): C = 255 means no cyan ink; M = Y = 0 full magenta and yellow: red.
        var pixels: [UInt8] = [255, 0, 0, 255, /* black: K = 0 */ 10, 200, 90, 0, /* 50% grey */ 255, 255, 255, 128]
        wi_jpeg_cmyk_to_rgba(&pixels, 3, 1)
        #expect(pixels == [255, 0, 0, 255, 0, 0, 0, 255, 128, 128, 128, 255])
        // Plain: ink amounts as stored.
        var plain: [UInt8] = [0, 255, 255, 0, 0, 0, 0, 255]
        wi_jpeg_cmyk_to_rgba(&plain, 2, 0)
        #expect(plain == [255, 0, 0, 255, 0, 0, 0, 255])
    }

    @Test func decodesGrayscaleToOpaqueGreyRGBA() throws {
        let gray = try Bitmap(width: 8, height: 8, pixelFormat: .gray8, pixels: (0..<64).map { UInt8($0 * 4) })
        let jpeg = try JPEGEncoder().encode(ImageContainer(image: gray), options: .init())
        let decoded = try JPEGTests.registry.decode(jpeg).image
        #expect(decoded.width == 8 && decoded.height == 8)
        for pixel in stride(from: 0, to: decoded.pixels.count, by: 4) {
            #expect(decoded.pixels[pixel] == decoded.pixels[pixel + 1] && decoded.pixels[pixel] == decoded.pixels[pixel + 2])
            #expect(decoded.pixels[pixel + 3] == 255)
        }
    }

    // MARK: - Orientation

    /// `hopper_orientation_N.jpg` stores hopper turned so that applying N shows it upright:
    /// by default the pixels come back oriented (the reference's oriented fingerprint); with
    /// `appliesOrientation` off, as stored, with the orientation reported.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"), arguments: 2...8)
    func appliesOrReportsEXIFOrientation(value: Int) throws {
        let file = "edge/hopper_orientation_\(value).jpg"
        let reference = try #require(JPEGTests.reference(file))
        let data = try JPEGTests.corpus(file)
        let expected = try #require(reference.fingerprints?.first)
        let orientation = try #require(ImageOrientation(exifValue: value))

        let upright = try JPEGTests.registry.decode(data)
        #expect(upright.orientation == orientation)
        #expect(fingerprintDistance(fingerprint(upright.image), expected) <= JPEGTests.tolerance)

        var options = ImageDecodingOptions()
        options.appliesOrientation = false
        let stored = try JPEGTests.registry.decode(data, options: options)
        #expect(stored.orientation == orientation)
        #expect([stored.image.width, stored.image.height] == reference.size)
        #expect(stored.image.oriented(orientation) == upright.image)
        // The stored pixels are not already upright (each of 2–8 moves hopper's asymmetric face).
        #expect(fingerprintDistance(fingerprint(stored.image), expected) > 20)
    }

    /// The decoder itself never applies the orientation: that is the registry's job.
    @Test func decoderReportsWithoutApplying() throws {
        let jpeg = JPEGTests.withEXIFOrientation(6, try makeJPEG(width: 48, height: 16))
        let container = try JPEGDecoder().decode(jpeg, options: .init())
        #expect(container.orientation == .right)
        #expect(container.image.width == 48 && container.image.height == 16)
        let upright = try JPEGTests.registry.decode(jpeg)
        #expect(upright.image.width == 16 && upright.image.height == 48)
    }

    @Test func malformedEXIFIsIgnored() throws {
        // A TIFF header pointing its IFD past the end of the block.
        let tiff: [UInt8] = [0x49, 0x49, 42, 0, 0xFF, 0xFF, 0, 0]
        let jpeg = JPEGMarkers.insertingSegment(marker: 0xE1, payload: Array("Exif".utf8) + [0, 0] + tiff, into: try makeJPEG(width: 8, height: 8))
        #expect(try JPEGTests.registry.decode(jpeg).orientation == .up)
    }

    // MARK: - ICC profile

    /// `icc_profile_big.jpg` carries a 399,788-byte profile in seven APP2 chunks (six full ones).
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func reassemblesTheICCProfile() throws {
        let container = try JPEGTests.registry.decode(try JPEGTests.corpus("edge/icc_profile_big.jpg"), options: .preservingColor)
        let profile = try #require(container.iccProfile)
        #expect(profile.count == 6 * 65_519 + 6_690 - 16)
        // An ICC header: its size field, then "acsp" at offset 36.
        let declared = profile.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        #expect(declared == profile.count)
        #expect(Array(profile[36..<40]) == Array("acsp".utf8))
    }

    @Test func chunksOutOfOrderAreReassembledInSequence() throws {
        let profile = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        var jpeg = JPEGMarkers.insertingICCProfile(profile, into: try makeJPEG(width: 8, height: 8))
        // Swap the first two chunks' segments in the file.
        let segments = JPEGTests.segments(of: jpeg).filter { $0.marker == 0xE2 }
        #expect(segments.count == 4)
        let first = jpeg[segments[0].range], second = jpeg[segments[1].range]
        jpeg.replaceSubrange(segments[0].range.lowerBound..<segments[1].range.upperBound, with: second + first)
        #expect(try JPEGTests.registry.decode(jpeg, options: .preservingColor).iccProfile == profile)
        // A missing chunk makes the profile unusable: none is reported.
        var missing = jpeg
        missing.removeSubrange(JPEGTests.segments(of: jpeg).filter { $0.marker == 0xE2 }[2].range)
        #expect(try JPEGTests.registry.decode(missing).iccProfile == nil)
    }

    /// Pillow does not convert colours (the corpus fingerprints are of unconverted pixels);
    /// `.preserve` leaves them so, the default moves them to sRGB and drops the profile, and
    /// `convertsToSRGB` converts even when the options preserve.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func convertsToSRGBUnlessPreserving() throws {
        let data = try JPEGTests.corpus("edge/icc_profile_big.jpg")
        let plain = try JPEGDecoder().decode(data, options: .preservingColor)
        let converted = try JPEGDecoder().decode(data, options: .init())
        #expect(plain.iccProfile != nil && converted.iccProfile == nil)
        #expect(try Self.alwaysConverting.decode(data, options: .preservingColor).image == converted.image)
        let distance = fingerprintDistance(fingerprint(converted.image), fingerprint(plain.image))
        #expect(distance > 0 && distance < 60, "a colour conversion moves colours, but not wildly: \(distance)")
        // No profile: nothing to convert.
        let hopper = try JPEGTests.fixture("hopper.jpg")
        #expect(try Self.alwaysConverting.decode(hopper, options: .init()).image == JPEGDecoder().decode(hopper, options: .init()).image)
    }

    // MARK: - Thumbnails

    /// A 256 px thumbnail of the 5120×2880 photo decodes at 1/8 scale (640×360: 0.9 MB instead
    /// of 59 MB as RGBA); the registry then resamples to exactly 256×144.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func thumbnailDecodesAtDCTScale() throws {
        let data = try JPEGTests.corpus("photos/shell-5120x2880.jpg")
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(256)
        let raw = try JPEGDecoder().decode(data, options: options)
        #expect(raw.image.width == 640 && raw.image.height == 360)
        #expect(raw.image.cost * 64 == 5120 * 2880 * 4)
        let thumbnail = try JPEGTests.registry.decode(data, options: options)
        #expect(thumbnail.image.width == 256 && thumbnail.image.height == 144)
        // Same picture: the thumbnail's cells are the full image's cell means, within resampling error.
        let reference = try #require(JPEGTests.reference("photos/shell-5120x2880.jpg")?.fingerprints?.first)
        #expect(fingerprintDistance(fingerprint(thumbnail.image), reference) <= 8)

        // A larger target takes the smallest scale that still covers it: 1000 px needs 2/8 (1280).
        options.thumbnail = .maxPixelSize(1000)
        let quarter = try JPEGDecoder().decode(data, options: options)
        #expect(quarter.image.width == 1280 && quarter.image.height == 720)
    }

    /// The scale is chosen on the oriented size: a 256×64 image stored with orientation 6 is
    /// 64×256 upright, and a 16×64 box needs only 2/8 of it (64×16 stored); judged on the
    /// stored size it would have needed the full height.
    @Test func thumbnailScaleFollowsOrientation() throws {
        let jpeg = JPEGTests.withEXIFOrientation(6, try makeJPEG(width: 256, height: 64))
        var options = ImageDecodingOptions()
        options.thumbnail = .size(width: 16, height: 64, contentMode: .fit)
        let raw = try JPEGDecoder().decode(jpeg, options: options)
        #expect(raw.image.width == 64 && raw.image.height == 16)
        let finished = try JPEGTests.registry.decode(jpeg, options: options)
        #expect(finished.image.width == 16 && finished.image.height == 64)
        // Not applying the orientation, the box is fitted on the stored 256×64 (to 16×4): 1/8 covers it.
        options.appliesOrientation = false
        let stored = try JPEGDecoder().decode(jpeg, options: options)
        #expect(stored.image.width == 32 && stored.image.height == 8)
    }

    @Test func scaleChoice() {
        typealias T = ImageDecodingOptions.Thumbnail
        #expect(JPEGHeader.eighths(width: 5120, height: 2880, thumbnail: nil) == 8)
        #expect(JPEGHeader.eighths(width: 5120, height: 2880, thumbnail: T.maxPixelSize(256)) == 1)
        #expect(JPEGHeader.eighths(width: 5120, height: 2880, thumbnail: T.maxPixelSize(641)) == 2)
        #expect(JPEGHeader.eighths(width: 5120, height: 2880, thumbnail: T.maxPixelSize(5000)) == 8)
        #expect(JPEGHeader.eighths(width: 800, height: 600, thumbnail: T.size(width: 300, height: 300, contentMode: .fill)) == 4)
        #expect(JPEGHeader.eighths(width: 800, height: 600, thumbnail: T.size(width: 300, height: 300, contentMode: .fit)) == 3)
        // Tiny images: every scale gives 1×1, so the finest (full) one is used.
        #expect(JPEGHeader.eighths(width: 1, height: 1, thumbnail: T.maxPixelSize(1)) == 8)
        // Never upscales: a thumbnail larger than the image decodes at full size.
        #expect(JPEGHeader.eighths(width: 100, height: 100, thumbnail: T.maxPixelSize(400)) == 8)
    }

    // MARK: - Limits

    /// The pixel limit is checked from the header alone: the photo's first kilobytes (the
    /// header, no image data) are refused as too large, not as truncated.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func refusesImagesOverThePixelLimitFromTheHeader() throws {
        let data = try JPEGTests.corpus("photos/shell-5120x2880.jpg")
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 5120 * 2880 - 1
        #expect(throws: ImageError.self) { try JPEGDecoder().decode(data, options: options) }
        let headerEnd = try #require(JPEGTests.segments(of: data).last { $0.marker == 0xDA }).range.upperBound
        do {
            _ = try JPEGDecoder().decode(data.prefix(headerEnd), options: options)
            Issue.record("expected tooLarge")
        } catch let error as ImageError {
            guard case .tooLarge = error else { Issue.record("expected tooLarge, got \(error)"); return }
        }
        options.thumbnail = .maxPixelSize(64)   // a thumbnail does not lift the limit
        #expect(throws: ImageError.tooLarge("JPEG of 5120×2880 pixels is over the limit of 14745599")) {
            try JPEGDecoder().decode(data, options: options)
        }
    }

    @Test func pixelLimitIsInclusive() throws {
        let data = try JPEGTests.fixture("hopper.jpg")
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 128 * 128
        #expect(try JPEGDecoder().decode(data, options: options).image.width == 128)
        options.maximumPixelCount -= 1
        #expect(throws: ImageError.tooLarge("JPEG of 128×128 pixels is over the limit of 16383")) {
            try JPEGDecoder().decode(data, options: options)
        }
    }

    // MARK: - Helpers

    /// A small baseline JPEG of a gradient.
    private func makeJPEG(width: Int, height: Int) throws -> Data {
        let bitmap = try Bitmap(width: width, height: height, pixelFormat: .rgba8) { pixels in
            for y in 0..<height {
                for x in 0..<width {
                    let offset = (y * width + x) * 4
                    pixels[offset] = UInt8(x * 255 / max(1, width - 1))
                    pixels[offset + 1] = UInt8(y * 255 / max(1, height - 1))
                    pixels[offset + 2] = 90
                    pixels[offset + 3] = 255
                }
            }
        }
        return try JPEGEncoder().encode(ImageContainer(image: bitmap), options: .init())
    }
}

extension JPEGTests {
    /// A JPEG's marker segments before the first scan: marker code and byte range (including
    /// the FF marker bytes).
    static func segments(of jpeg: Data) -> [(marker: UInt8, range: Range<Int>)] {
        let bytes = [UInt8](jpeg)
        var result: [(UInt8, Range<Int>)] = []
        var index = 2
        while index + 4 <= bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            result.append((marker, index..<(index + 2 + length)))
            if marker == 0xDA { break }
            index += 2 + length
        }
        return result
    }

    /// The byte ranges of the marker segments after the first scan's data has begun (the
    /// tables and scan headers between a progressive file's scans), found by their markers:
    /// inside entropy-coded data a 0xFF is followed by 0x00 or a restart marker.
    static func segmentsBetweenScans(of jpeg: Data) -> [Range<Int>] {
        let bytes = [UInt8](jpeg)
        guard let first = segments(of: jpeg).last, first.marker == 0xDA else { return [] }
        var ranges: [Range<Int>] = []
        var index = first.range.upperBound
        while index + 4 <= bytes.count {
            let marker = bytes[index + 1]
            if bytes[index] == 0xFF, [0xC4, 0xDA, 0xDB, 0xDD].contains(marker) {
                let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                ranges.append(index..<(index + 2 + length))
                index += 2 + length
            } else {
                index += 1
            }
        }
        return ranges
    }

    /// `jpeg` with an APP1 EXIF segment whose IFD0 holds only the orientation tag.
    static func withEXIFOrientation(_ value: UInt8, _ jpeg: Data) -> Data {
        let tiff: [UInt8] = [
            0x4D, 0x4D, 0, 42, 0, 0, 0, 8,        // big-endian TIFF, IFD0 at 8
            0, 1,                                 // one entry
            0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, value, 0, 0,   // Orientation, SHORT, 1, value
            0, 0, 0, 0,                           // no next IFD
        ]
        return JPEGMarkers.insertingSegment(marker: 0xE1, payload: Array("Exif".utf8) + [0, 0] + tiff, into: jpeg)
    }
}
