import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Damaged and hostile JPEGs: never a crash, a hang or an unbounded allocation; a typed error,
/// or the documented partial image (a file cut inside its image data decodes as far as its
/// data goes, the rest mid-grey).
@Suite(.timeLimit(.minutes(10 * Sanitizers.slowdown))) struct JPEGHostileInputTests {
    /// What a decode of damaged bytes may do: throw an ``ImageError`` or return an image of the
    /// size the header declares.
    static func decodeOrTypedError(_ data: Data, options: ImageDecodingOptions = .init()) -> Bitmap? {
        do {
            return try JPEGDecoder().decode(data, options: options).image
        } catch is ImageError {
            return nil
        } catch {
            Issue.record("untyped error \(error)")
            return nil
        }
    }

    /// `truncated_jpeg.jpg` (which Pillow refuses) is a progressive 100×100 file cut in its
    /// scans: we return the partial image, whose scans so far cover the whole picture coarsely.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func truncatedCorpusFileGivesThePartialImage() throws {
        let reference = try #require(JPEGTests.reference("edge/truncated_jpeg.jpg"))
        #expect(!reference.decodable)
        let data = try JPEGTests.corpus("edge/truncated_jpeg.jpg")
        let image = try JPEGTests.registry.decode(data).image
        #expect([image.width, image.height] == reference.size)
        // The same through the incremental decoder.
        let incremental = try #require(JPEGDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(data)
        #expect(try incremental.finish().image == image)
    }

    /// Fuzz finding #12 (Tests/Fixtures/fuzz/fuzz-decode/jpeg-warning-then-fatal-error): a
    /// progressive file with three stray bytes before its second scan (a libjpeg warning) and
    /// impossible parameters in its third (a fatal error). TurboJPEG stopped at the fatal error
    /// but reported a warning, and the decoder returned a bitmap it had never written (all
    /// transparent black in a fresh process, any earlier heap contents in a server). Now a
    /// typed error, through each engine and the incremental decoder.
    @Test func aWarningThenAFatalErrorIsATypedError() throws {
        let data = try JPEGTests.fixture("fuzz/fuzz-decode/jpeg-warning-then-fatal-error")
        var libjpeg = JPEGDecoder()
        libjpeg.engine = .libjpeg
        for decoder in [JPEGDecoder(), libjpeg] {
            #expect(throws: ImageError.self, "\(decoder.engine)") { try decoder.decode(data, options: .init()) }
        }
        let incremental = try #require(JPEGDecoder().makeIncrementalDecoder(options: .init()))
        #expect(throws: ImageError.self) {
            try incremental.append(data)
            _ = try incremental.finish()
        }
    }

    /// The same stray bytes without the fatal error: a warning only. TurboJPEG's decode is set
    /// aside and the image comes from libjpeg's (every pixel written: opaque), marked incomplete,
    /// equal to the libjpeg engine's.
    @Test func aWarningAloneDecodesThroughLibjpeg() throws {
        var bytes = [UInt8](try JPEGTests.fixture("hopper-progressive-32.jpg"))
        let scans = (0..<(bytes.count - 1)).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }
        bytes.insert(contentsOf: [0, 0, 0], at: scans[1])
        let data = Data(bytes)
        let decoded = try JPEGDecoder().decode(data, options: .init())
        #expect(!decoded.isComplete)
        var libjpeg = JPEGDecoder()
        libjpeg.engine = .libjpeg
        #expect(decoded.image == (try libjpeg.decode(data, options: .init()).image))
        let image = decoded.image
        let opaque = (0..<image.height).allSatisfy { row in
            (0..<image.width).allSatisfy { image.pixels[row * image.bytesPerRow + $0 * 4 + 3] == 255 }
        }
        #expect(opaque && image.pixelFormat == .rgba8)
    }

    /// A file cut inside its image data decodes (as browsers show it) but says it is not the
    /// whole image, through each engine and the incremental decoder; the whole file says it is.
    @Test(arguments: ["hopper.jpg", "hopper-progressive-32.jpg", "hopper-cmyk-32.jpg"])
    func aTruncatedFileDecodesAsIncomplete(name: String) throws {
        let data = try JPEGTests.fixture(name)
        var libjpeg = JPEGDecoder()
        libjpeg.engine = .libjpeg
        for decoder in [JPEGDecoder(), libjpeg] {
            #expect(try decoder.decode(data, options: .init()).isComplete)
            let cut = try decoder.decode(data.prefix(data.count * 6 / 10), options: .init())
            #expect(!cut.isComplete, "\(name), \(decoder.engine)")
            var thumbnail = ImageDecodingOptions()
            thumbnail.thumbnail = .maxPixelSize(8)
            #expect(try !JPEGTests.registry.decode(data.prefix(data.count * 6 / 10), options: thumbnail).isComplete, "\(name) thumbnail")
        }
        let incremental = try #require(JPEGDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(data.prefix(data.count * 6 / 10))
        #expect(try !incremental.finish().isComplete, "\(name) incremental")
    }

    /// Every prefix of a baseline and a progressive file: a prefix that ends in the header
    /// throws ``ImageError/corruptData(_:)``; one that reaches the image data returns the full
    /// size with every pixel written (or, cut inside the tables between two progressive scans,
    /// a typed error), and for the baseline file the rows before the cut equal the full decode's.
    @Test(arguments: ["hopper.jpg", "hopper-progressive-32.jpg", "hopper-cmyk-32.jpg"])
    func everyPrefixDecodesOrFailsCleanly(name: String) throws {
        let data = try JPEGTests.fixture(name)
        let full = try JPEGDecoder().decode(data, options: .init()).image
        let headerEnd = try #require(JPEGTests.segments(of: data).last { $0.marker == 0xDA }).range.upperBound
        let laterSegments = JPEGTests.segmentsBetweenScans(of: data)
        var partialImages = 0, segmentFailures = 0
        for length in stride(from: 0, to: data.count, by: max(1, data.count / 300)) {
            let prefix = data.prefix(length)
            if length <= headerEnd + 2 {
                #expect(throws: ImageError.self, "\(name) cut at \(length)") { try JPEGDecoder().decode(prefix, options: .init()) }
                continue
            }
            // A cut inside a marker segment before a later scan (a Huffman table, the scan's
            // header) can leave libjpeg reading its fake end-of-image marker as the segment's
            // contents: a fatal error, as in djpeg.
            let image: Bitmap
            do {
                image = try JPEGDecoder().decode(prefix, options: .init()).image
            } catch is ImageError where laterSegments.contains(where: { $0.lowerBound < length && length < $0.upperBound }) {
                segmentFailures += 1
                continue
            }
            #expect(image.width == full.width && image.height == full.height)
            // Every pixel written by the decoder (opaque), none left as the allocation had it:
            // finding #12, a bitmap TurboJPEG had stopped writing returned as an image.
            #expect(stride(from: 3, to: image.pixels.count, by: 4).allSatisfy { image.pixels[$0] == 255 }, "\(name) cut at \(length)")
            partialImages += 1
            if name == "hopper.jpg", length > data.count / 2 {
                // The first 16 rows (one row of 4:2:0 MCUs) come from the first half of the file.
                #expect(image.pixels.prefix(16 * full.bytesPerRow) == full.pixels.prefix(16 * full.bytesPerRow), "cut at \(length)")
            }
        }
        #expect(partialImages > 100)
        // Only the progressive file has segments between its scans.
        #expect((segmentFailures > 0) == (name == "hopper-progressive-32.jpg"), "\(segmentFailures) failures inside later segments")
        // The last row of a file cut at two thirds is mid-grey: libjpeg fills the missing blocks.
        if name == "hopper.jpg" {
            let image = try JPEGDecoder().decode(data.prefix(data.count * 2 / 3), options: .init()).image
            let last = image.pixels.suffix(image.bytesPerRow)
            #expect(last.allSatisfy { $0 == 128 || $0 == 255 })
        }
    }

    /// SOI followed by random bytes: libjpeg skips garbage looking for markers and finds
    /// nonsense; every attempt throws a typed error or yields an image within the limits.
    @Test func randomBytesAfterSOI() {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 4_000_000
        var errors = 0
        for seed in 1...300 {
            let data = Data([0xFF, 0xD8] + JPEGTests.noise(count: 4096, seed: UInt64(seed)))
            if let image = Self.decodeOrTypedError(data, options: options) {
                #expect(image.width * image.height <= options.maximumPixelCount)
            } else {
                errors += 1
            }
            // The incremental decoder too, in small chunks.
            if let incremental = JPEGDecoder().makeIncrementalDecoder(options: options) {
                do {
                    for chunk in stride(from: 0, to: data.count, by: 512) {
                        try incremental.append(data[chunk..<min(chunk + 512, data.count)])
                        _ = try incremental.preview()
                    }
                    _ = try incremental.finish()
                } catch is ImageError {
                } catch {
                    Issue.record("untyped error \(error)")
                }
            }
        }
        #expect(errors > 250, "random bytes are almost never a JPEG")
    }

    /// Random segments after a valid header (SOI + markers with random contents), and every
    /// single byte of hopper's header flipped: typed errors or images, never a crash.
    @Test func corruptedHeaderBytes() throws {
        let data = try JPEGTests.fixture("hopper.jpg")
        let headerEnd = try #require(JPEGTests.segments(of: data).last { $0.marker == 0xDA }).range.upperBound
        for index in 2..<headerEnd {
            for value: UInt8 in [0x00, 0xFF, data[index] ^ 0x55] {
                var damaged = data
                damaged[index] = value
                if let image = Self.decodeOrTypedError(damaged) {
                    #expect(image.width > 0 && image.height > 0)
                }
            }
        }
    }

    /// Random bytes in place of the compressed data: libjpeg warns and decodes what it can.
    @Test func corruptImageDataStillGivesAnImage() throws {
        let data = try JPEGTests.fixture("hopper.jpg")
        let headerEnd = try #require(JPEGTests.segments(of: data).last { $0.marker == 0xDA }).range.upperBound
        for seed in 1...20 {
            var damaged = data
            let noise = JPEGTests.noise(count: 1000, seed: UInt64(seed))
            damaged.replaceSubrange(headerEnd + 500..<headerEnd + 1500, with: noise)
            let image = try #require(Self.decodeOrTypedError(damaged))
            #expect(image.width == 128 && image.height == 128)
        }
    }

    /// A frame header claiming 65500×65500 pixels: refused from the header, before allocating.
    @Test func hugeDimensionsAreRefused() throws {
        var data = try JPEGTests.fixture("hopper.jpg")
        let frame = try #require(JPEGTests.segments(of: data).first { $0.marker == 0xC0 })
        // SOF0: FF C0, length (2), precision (1), height (2), width (2).
        let at = frame.range.lowerBound + 5
        data.replaceSubrange(at..<at + 4, with: [0xFF, 0xDC, 0xFF, 0xDC])
        #expect(throws: ImageError.tooLarge("JPEG of 65500×65500 pixels is over the limit of 100000000")) {
            try JPEGDecoder().decode(data, options: .init())
        }
        data.replaceSubrange(at..<at + 4, with: [0, 0, 0, 128])   // zero height
        #expect(throws: ImageError.self) { try JPEGDecoder().decode(data, options: .init()) }
    }

    /// A progressive file whose last scan is repeated 600 times: over the 500-scan limit, both
    /// through TurboJPEG, libjpeg and the incremental decoder (each scan costs a pass over the
    /// coefficients, so a small file could otherwise burn CPU for minutes).
    @Test func tooManyScansAreRefused() throws {
        let data = try JPEGTests.fixture("hopper-progressive-32.jpg")
        let bytes = [UInt8](data)
        // The last scan: from its SOS marker to the EOI at the end of the file.
        var lastScan = bytes.count - 2
        while !(bytes[lastScan] == 0xFF && bytes[lastScan + 1] == 0xDA) { lastScan -= 1 }
        let scan = bytes[lastScan..<(bytes.count - 2)]
        var hostile = Data(bytes[..<(bytes.count - 2)])
        for _ in 0..<600 { hostile.append(contentsOf: scan) }
        hostile.append(contentsOf: [0xFF, 0xD9])
        #expect(throws: ImageError.self) { try JPEGDecoder().decode(hostile, options: .init()) }
        var libjpeg = JPEGDecoder()
        libjpeg.engine = .libjpeg
        #expect(throws: ImageError.corruptData("JPEG: more than 500 scans")) { try libjpeg.decode(hostile, options: .init()) }
        let incremental = try #require(JPEGDecoder().makeIncrementalDecoder(options: .init()))
        #expect(throws: ImageError.corruptData("JPEG: more than 500 scans")) {
            try incremental.append(hostile)
            _ = try incremental.finish()
        }
        // 400 repeats stay under the limit and decode.
        var fine = Data(bytes[..<(bytes.count - 2)])
        for _ in 0..<400 { fine.append(contentsOf: scan) }
        fine.append(contentsOf: [0xFF, 0xD9])
        #expect(try JPEGDecoder().decode(fine, options: .init()).image.width == 32)
    }

    /// Valid JPEG variants this build does not decode are unsupported, not corrupt: 12-bit
    /// samples (SOF1 with precision 12) and lossless JPEG (SOF3).
    @Test func unsupportedVariantsAreReportedAsSuch() throws {
        let data = try JPEGTests.fixture("hopper.jpg")
        let frame = try #require(JPEGTests.segments(of: data).first { $0.marker == 0xC0 })
        var twelveBit = data
        twelveBit[frame.range.lowerBound + 1] = 0xC1
        twelveBit[frame.range.lowerBound + 4] = 12
        var lossless = data
        lossless[frame.range.lowerBound + 1] = 0xC3
        for variant in [twelveBit, lossless] {
            do {
                _ = try JPEGDecoder().decode(variant, options: .init())
                Issue.record("expected unsupportedFormat")
            } catch let error as ImageError {
                guard case .unsupportedFormat = error else { Issue.record("expected unsupportedFormat, got \(error)"); continue }
            }
        }
    }

    @Test func emptyAndTinyInputs() {
        for bytes: [UInt8] in [[], [0xFF], [0xFF, 0xD8], [0xFF, 0xD8, 0xFF], [0xFF, 0xD8, 0xFF, 0xD9], [0x00, 0x01, 0x02]] {
            #expect(throws: ImageError.self, "\(bytes)") { try JPEGDecoder().decode(Data(bytes), options: .init()) }
            let incremental = JPEGDecoder().makeIncrementalDecoder(options: .init())
            #expect(throws: ImageError.self, "\(bytes)") {
                try incremental?.append(Data(bytes))
                _ = try incremental?.finish()
            }
        }
    }
}
