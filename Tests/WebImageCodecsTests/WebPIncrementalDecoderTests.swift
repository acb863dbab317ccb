import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

@Suite struct WebPIncrementalDecoderTests {
    typealias Run = IncrementalRun

    /// Feeds `data` in chunks of `chunkSize`, asking for a preview after each.
    static func feed(_ data: Data, chunkSize: Int, options: ImageDecodingOptions = .init()) throws -> Run {
        try IncrementalRun.feed(WebPDecoder(), data, chunkSize: chunkSize, options: options)
    }

    /// How many leading rows of `preview` equal the final image's, and whether every row after
    /// them is transparent black, as documented.
    static func rowsMatching(_ preview: Bitmap, _ final: Bitmap) -> (rows: Int, restIsClear: Bool) {
        let row = final.width * 4
        var rows = 0
        while rows < final.height, preview.pixels[rows * row ..< (rows + 1) * row] == final.pixels[rows * row ..< (rows + 1) * row] {
            rows += 1
        }
        let rest = preview.pixels[(rows * row)...]
        return (rows, rest.allSatisfy { $0 == 0 })
    }

    /// Chunk by chunk through a lossy, a lossless and a lossy + alpha still: previews arrive,
    /// each shows more final rows than the one before (the rest transparent), and the finished
    /// image equals the one-shot decode through the registry. The 32 px files have only two
    /// 16-row macroblock rows (lossy) or decode in few row batches (lossless), hence fewer
    /// previews.
    @Test(arguments: [("hopper.webp", 4), ("hopper-lossless-32.webp", 2), ("hopper-alpha-32.webp", 2)])
    func previewsImproveAndTheLastEqualsTheFullDecode(fixture: String, minimumPreviews: Int) throws {
        let data = try WebPTestFiles.fixture(fixture)
        let run = try Self.feed(data, chunkSize: max(64, data.count / 12))
        let full = try WebPTestFiles.registry().decode(data)
        #expect(run.final.image == full.image)
        #expect(!run.final.isPreview)
        #expect(run.previews.count >= minimumPreviews, "\(run.previews.count) previews")
        var lastRows = 0
        for preview in run.previews {
            #expect(preview.isPreview)
            #expect(preview.image.width == full.image.width && preview.image.height == full.image.height)
            let (rows, restIsClear) = Self.rowsMatching(preview.image, full.image)
            #expect(rows > lastRows, "each preview shows more rows: \(rows) after \(lastRows)")
            #expect(restIsClear, "rows not decoded yet are transparent black")
            lastRows = rows
        }
    }

    @Test func oneByteAtATime() throws {
        let data = try WebPTestFiles.fixture("hopper-lossless-32.webp")
        let run = try Self.feed(data, chunkSize: 1)
        #expect(run.final.image == (try WebPDecoder().decode(data, options: .init())).image)
        #expect(run.previews.count >= 2)
    }

    @Test func noPreviewWithoutNewRows() throws {
        let data = try WebPTestFiles.fixture("hopper.webp")
        let incremental = try #require(WebPDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(data.prefix(data.count / 2))
        #expect(try incremental.preview() != nil)
        #expect(try incremental.preview() == nil, "nothing new arrived")
        try incremental.append(data.suffix(from: data.count / 2))
        #expect(try incremental.preview() != nil)
    }

    @Test func thumbnailPreviewsAreScaledByLibwebp() throws {
        let data = try WebPTestFiles.fixture("hopper.webp")
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(50)
        let run = try Self.feed(data, chunkSize: 400, options: options)
        #expect(run.final.image == (try WebPTestFiles.registry().decode(data, options: options)).image)
        #expect(run.final.image.width == 50)
        #expect(!run.previews.isEmpty && run.previews.allSatisfy { $0.image.width == 50 && $0.image.height == 50 })
    }

    /// An animated WebP gives no previews (libwebp has no incremental animation decoder) and
    /// finishes as the full decode does.
    @Test func animatedGathersAndFinishesWithEveryFrame() throws {
        let data = try WebPTestFiles.fixture("hopper-animated-16.webp")
        let run = try Self.feed(data, chunkSize: 100)
        #expect(run.previews.isEmpty)
        let full = try WebPDecoder().decode(data, options: .init())
        #expect(run.final.animation == full.animation)
        #expect(run.final.animation?.frames.count == 3)
    }

    /// A header announcing EXIF: the orientation comes after the image data, so no preview can
    /// be oriented like the final image until the end; the final image is oriented.
    @Test func exifAnnouncedMeansNoPreviewsBeforeTheOrientation() throws {
        let source = try WebPTestFiles.fixture("hopper.webp")
        let data = try WebPTestFiles.muxing("EXIF", WebPTestFiles.exifTIFF(orientation: 3), into: source)
        let run = try Self.feed(data, chunkSize: 300)
        // The last append brings the EXIF chunk; only then can a (complete) preview appear.
        #expect(run.previews.count <= 1)
        #expect(run.final.orientation == .down)
        #expect(run.final.image == (try WebPTestFiles.registry().decode(data)).image)
        #expect(run.final.image == (try WebPDecoder().decode(source, options: .init())).image.oriented(.down))
    }

    /// A thumbnail box whose size depends on an orientation that arrives last: decoding starts
    /// at the larger of the two candidate sizes, and the finished image still equals the
    /// one-shot decode, whether the turn proves to swap the sides (6: the decoded size was
    /// right) or not (1: the decoder falls back to the one-shot decode at the end).
    @Test(arguments: [6, 1])
    func thumbnailWithALateOrientationFinishesLikeTheFullDecode(orientation: Int) throws {
        let data = try WebPTestFiles.halfHopper(orientation: orientation)
        var options = ImageDecodingOptions()
        options.thumbnail = .size(width: 32, height: 64, contentMode: .fit)
        let run = try Self.feed(data, chunkSize: 200, options: options)
        let full = try WebPTestFiles.registry().decode(data, options: options)
        #expect(run.final.image == full.image)
        #expect(run.final.orientation.rawValue == orientation)
        #expect(run.final.image.width == 32 && run.final.image.height == (orientation == 6 ? 64 : 16))
    }

    @Test func iccProfileArrivesWithThePreviews() throws {
        let profile = [UInt8](repeating: 9, count: 200)
        let data = try WebPTestFiles.muxing("ICCP", profile, into: try WebPTestFiles.fixture("hopper.webp"))
        let run = try Self.feed(data, chunkSize: 500, options: .preservingColor)
        #expect(!run.previews.isEmpty)
        #expect(run.previews.allSatisfy { $0.iccProfile == Data(profile) })
        #expect(run.final.iccProfile == Data(profile))
    }

    @Test func truncatedFileFailsToFinishAfterPreviews() throws {
        let data = try WebPTestFiles.fixture("hopper.webp")
        let incremental = try #require(WebPDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(data.prefix(data.count * 2 / 3))
        let preview = try #require(try incremental.preview())
        #expect(preview.image.height == 128)
        #expect(throws: ImageError.self) { try incremental.finish() }
    }

    @Test func headerOnlyFailsToFinish() throws {
        let incremental = try #require(WebPDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(Data("RIFF".utf8))
        #expect(try incremental.preview() == nil)
        #expect(throws: ImageError.self) { try incremental.finish() }
    }

    @Test func garbageFailsAndStaysFailed() throws {
        let incremental = try #require(WebPDecoder().makeIncrementalDecoder(options: .init()))
        #expect(throws: ImageError.self) { try incremental.append(Data(repeating: 0xAB, count: 64)) }
        #expect(throws: ImageError.self) { try incremental.append(Data(repeating: 0, count: 64)) }
        #expect(throws: ImageError.self) { try incremental.finish() }
    }

    @Test func pixelLimitIsCheckedBeforeTheBuffer() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 1000
        let incremental = try #require(WebPDecoder().makeIncrementalDecoder(options: options))
        #expect(throws: ImageError.self) { try incremental.append(try WebPTestFiles.fixture("hopper.webp").prefix(100)) }
    }

    @Test(.enabled(if: WebPTestFiles.corpusIsPresent, "../shared/corpus is absent: the WebP corpus tests are skipped"))
    func corpusPhotoInNetworkSizedChunks() throws {
        let entry = try #require(WebPTestFiles.corpusEntries.first { $0.file == "photos/wood-4096.webp" })
        let data = try Reference.data(entry)
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(512)
        let run = try Self.feed(data, chunkSize: 64 << 10, options: options)
        #expect(run.final.image == (try WebPTestFiles.registry().decode(data, options: options)).image)
        #expect(run.previews.count >= 4)
        var lastRows = 0
        for preview in run.previews {
            let (rows, restIsClear) = Self.rowsMatching(preview.image, run.final.image)
            #expect(rows > lastRows && restIsClear)
            lastRows = rows
        }
    }
}
