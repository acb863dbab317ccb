import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// JPEG XL as it arrives. `jxl-progressive.jxl` is a 520 × 300 photo of the corpus through the
/// reference encoder (`cjxl -p -d 2.5`, libjxl 0.7): six 256-pixel groups behind a DC, which
/// libjxl announces.
@Suite struct JXLIncrementalDecoderTests {
    typealias Files = ISOBMFFTestFiles

    typealias Run = IncrementalRun

    /// Feeds `data` in chunks of `chunkSize`, asking for a preview after each.
    static func feed(_ data: Data, chunkSize: Int, options: ImageDecodingOptions = .init()) throws -> Run {
        try IncrementalRun.feed(JXLDecoder(), data, chunkSize: chunkSize, options: options)
    }

    /// The mean absolute difference of two bitmaps' samples.
    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        let total = zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        return Double(total) / Double(a.pixels.count)
    }

    @Test("a progressive file gives previews that come closer to the image at each step; the final image is the one-shot decode's")
    func previewsImproveAndTheFinalImageIsTheOneShotDecode() throws {
        let data = try Files.fixture("jxl-progressive.jxl")
        let run = try Self.feed(data, chunkSize: 256)
        let full = try CoderRegistry.system().decode(data)
        #expect(run.final.image == full.image)
        #expect(!run.final.isPreview)
        #expect(run.previews.count >= 2, "\(run.previews.count) previews")
        var last = Double.infinity
        for preview in run.previews {
            #expect(preview.isPreview)
            #expect(preview.image.width == full.image.width && preview.image.height == full.image.height)
            let difference = Self.meanDifference(preview.image, full.image)
            #expect(difference <= last, "each step at least as close as the one before: \(difference) after \(last)")
            last = difference
        }
        // Even the first (the DC, upsampled 8×) is a recognisable picture, not a blank canvas.
        let first = try #require(run.previews.first)
        let blank = try Bitmap(width: full.image.width, height: full.image.height, pixelFormat: first.image.pixelFormat,
                               pixels: [UInt8](repeating: 0, count: first.image.pixels.count))
        #expect(Self.meanDifference(first.image, full.image) < Self.meanDifference(blank, full.image) / 4)
    }

    @Test("no new step, no preview")
    func noPreviewWithoutANewStep() throws {
        let data = try Files.fixture("jxl-progressive.jxl")
        let incremental = try #require(JXLDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(Data()) // an empty chunk is nothing, not an error
        var offset = 0, preview: ImageContainer?
        while preview == nil, offset < data.count {
            try incremental.append(data.subdata(in: offset..<min(offset + 128, data.count)))
            offset += 128
            preview = try incremental.preview()
        }
        #expect(preview != nil)
        #expect(try incremental.preview() == nil, "nothing new arrived")
        try incremental.append(data.suffix(from: offset))
        #expect(try incremental.finish().image == (try CoderRegistry.system().decode(data)).image)
    }

    @Test("thumbnails: previews and the final image at the thumbnail size, the final one equal to the one-shot decode's")
    func thumbnails() throws {
        let data = try Files.fixture("jxl-progressive.jxl")
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(50)
        let run = try Self.feed(data, chunkSize: 400, options: options)
        let full = try CoderRegistry.system().decode(data, options: options)
        #expect(run.final.image == full.image)
        #expect(full.image.width == 50 && full.image.height == 29)
        #expect(!run.previews.isEmpty && run.previews.allSatisfy { $0.image.width == 50 && $0.image.height == 29 })
    }

    @Test("stills, alpha, 16-bit, orientations and animations, a byte at a time or in halves, finish as the one-shot decode")
    func everyFixtureFinishesAsTheOneShotDecode() throws {
        for name in ["jxl-lossless.jxl", "jxl-alpha.jxl", "jxl-16bit.jxl", "jxl-container.jxl", "jxl-orientation6.jxl",
                     "jxl-animated.jxl", "color/gradient-adobergb.jxl"] {
            let data = try Files.fixture(name)
            let full = try CoderRegistry.system().decode(data)
            for chunkSize in [1, data.count / 2 + 1] {
                let run = try Self.feed(data, chunkSize: chunkSize)
                #expect(run.final.image == full.image, "\(name), chunks of \(chunkSize)")
                #expect(run.final.animation?.frames.map(\.bitmap) == full.animation?.frames.map(\.bitmap), "\(name)")
                #expect(run.final.animation?.loopCount == full.animation?.loopCount, "\(name)")
            }
        }
    }

    @Test("a file cut short fails at finish with corruptData; one past the pixel limit fails at its header, before any frame buffer")
    func truncatedAndTooLargeFiles() throws {
        let data = try Files.fixture("jxl-progressive.jxl")
        for length in [0, 10, data.count / 2, data.count - 1] {
            let incremental = try #require(JXLDecoder().makeIncrementalDecoder(options: .init()))
            try incremental.append(data.prefix(length))
            #expect {
                try incremental.finish()
            } throws: { error in
                guard case .corruptData = error as? ImageError else { return false }
                return true
            }
        }

        var options = ImageDecodingOptions()
        options.maximumPixelCount = 100
        let incremental = try #require(JXLDecoder().makeIncrementalDecoder(options: options))
        #expect {
            try incremental.append(data)
        } throws: { error in
            guard case .tooLarge = error as? ImageError else { return false }
            return true
        }
        // The failure stays: later calls report it again.
        #expect(throws: ImageError.self) { try incremental.preview() }
        #expect(throws: ImageError.self) { try incremental.finish() }
    }
}
