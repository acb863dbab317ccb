import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// The incremental JPEG decoder fed chunk by chunk: previews improve, the decoder never keeps
/// (or re-reads) the whole file, and the final image equals a full decode.
@Suite struct JPEGIncrementalTests {
    struct Run {
        var previews: [ImageContainer] = []
        /// How many bytes had been appended when each preview was taken.
        var previewOffsets: [Int] = []
        var final: ImageContainer
        /// The most input the decoder held at once.
        var maximumBufferedInput = 0
    }

    /// Appends `data` in `chunkSize` pieces, asking for a preview after each.
    static func feed(_ data: Data, chunkSize: Int, options: ImageDecodingOptions = .init()) throws -> Run {
        let decoder = try #require(JPEGDecoder().makeIncrementalDecoder(options: options) as? JPEGIncrementalDecoder)
        var previews: [ImageContainer] = [], offsets: [Int] = []
        var maximum = 0
        var offset = 0
        while offset < data.count {
            let end = min(offset + chunkSize, data.count)
            try decoder.append(data[offset..<end])
            offset = end
            maximum = max(maximum, decoder.bufferedInputBytes)
            if let preview = try decoder.preview() {
                previews.append(preview)
                offsets.append(offset)
            }
        }
        var run = Run(final: try decoder.finish())
        run.previews = previews
        run.previewOffsets = offsets
        run.maximumBufferedInput = maximum
        return run
    }

    /// Mean absolute difference between two fingerprints, over all cells and channels.
    static func meanDistance(_ a: [[Int]], _ b: [[Int]]) -> Double {
        let differences = zip(a, b).flatMap { zip($0, $1).map { Double(abs($0 - $1)) } }
        return differences.reduce(0, +) / Double(differences.count)
    }

    /// Checks the previews of `run` against the full decode of `data`.
    static func expectImproving(_ run: Run, fullDecode: ImageContainer, file: String, minimumPreviews: Int) {
        #expect(run.final.image == fullDecode.image, "\(file): finish() equals the full decode")
        #expect(run.final.orientation == fullDecode.orientation)
        #expect(run.final.iccProfile == fullDecode.iccProfile)
        #expect(!run.final.isPreview)
        #expect(run.previews.count >= minimumPreviews, "\(file): \(run.previews.count) previews")
        let target = fingerprint(fullDecode.image)
        var distances: [Double] = []
        for preview in run.previews {
            #expect(preview.isPreview)
            #expect(preview.image.width == fullDecode.image.width && preview.image.height == fullDecode.image.height)
            distances.append(meanDistance(fingerprint(preview.image), target))
        }
        let psnrs = run.previews.map { JPEGTests.psnr($0.image, fullDecode.image) }
        print("JPEG incremental: \(file): \(run.previews.count) previews at \(run.previewOffsets), mean fingerprint distances \(distances.map { ($0 * 10).rounded() / 10 }), PSNR \(psnrs.map { ($0 * 10).rounded() / 10 })")
        // Detail too: PSNR against the final image rises overall, and never falls by more than
        // 1 dB (at DCT scale 1/8 a refinement scan can nudge a few pixels away by rounding).
        for (earlier, later) in zip(psnrs, psnrs.dropFirst()) {
            #expect(later >= earlier - 1, "\(file): PSNR \(psnrs)")
        }
        if psnrs.count > 1, let first = psnrs.first, let last = psnrs.last { #expect(last > first, "\(file): PSNR \(psnrs)") }
        // Never the same picture twice.
        for (earlier, later) in zip(run.previews, run.previews.dropFirst()) {
            #expect(earlier.image != later.image, "\(file): a preview repeated the previous one")
        }
        guard let first = distances.first, let last = distances.last else { return }
        for (earlier, later) in zip(distances, distances.dropFirst()) {
            #expect(later <= earlier + 0.5, "\(file): a preview got worse: \(distances)")
        }
        if distances.count > 1 { #expect(last < first, "\(file): previews improve overall: \(distances)") }
    }

    // MARK: - Progressive

    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"),
          arguments: ["photos/autumn-2560x1600-progressive.jpg", "photos/elephants-1920x1080-progressive.jpg",
                      "photos/GreenMeadow.jpg", "edge/icc_profile_big.jpg"])
    func progressiveCorpusFilesImproveScanByScan(file: String) throws {
        let data = try JPEGTests.corpus(file)
        let run = try Self.feed(data, chunkSize: 4096)
        Self.expectImproving(run, fullDecode: try JPEGTests.registry.decode(data), file: file, minimumPreviews: 4)
        // The decoder holds only what libjpeg has not consumed yet, never the file.
        #expect(run.maximumBufferedInput <= 3 * 4096, "\(file): held \(run.maximumBufferedInput) bytes")
    }

    @Test func progressiveFixtureImproves() throws {
        let data = try JPEGTests.fixture("hopper-progressive-32.jpg")
        let run = try Self.feed(data, chunkSize: 64)
        Self.expectImproving(run, fullDecode: try JPEGTests.registry.decode(data), file: "hopper-progressive-32.jpg", minimumPreviews: 3)
    }

    // MARK: - Baseline

    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"),
          arguments: ["photos/thumb-Kite.jpg", "photos/Aqua.jpg", "edge/flower.jpg", "edge/hopper_gray.jpg", "edge/pil_sample_cmyk.jpg"])
    func baselineCorpusFilesFillRowByRow(file: String) throws {
        let data = try JPEGTests.corpus(file)
        let chunkSize = min(16384, max(256, data.count / 10))   // about ten chunks
        let run = try Self.feed(data, chunkSize: chunkSize)
        let full = try JPEGTests.registry.decode(data)
        Self.expectImproving(run, fullDecode: full, file: file, minimumPreviews: 3)
        Self.expectRowsFromTheTop(run, final: full.image)
        #expect(run.maximumBufferedInput <= 3 * chunkSize)
    }

    @Test func baselineFixtureFillsRowByRow() throws {
        let data = try JPEGTests.fixture("hopper.jpg")
        let run = try Self.feed(data, chunkSize: 256)
        let full = try JPEGTests.registry.decode(data)
        Self.expectImproving(run, fullDecode: full, file: "hopper.jpg", minimumPreviews: 5)
        Self.expectRowsFromTheTop(run, final: full.image)
    }

    /// Each baseline preview shows a prefix of the final image's rows, exactly, and mid-grey
    /// (128, 128, 128, 255) below it; the prefix grows from preview to preview.
    static func expectRowsFromTheTop(_ run: Run, final: Bitmap) {
        let rowBytes = final.bytesPerRow
        let greyRow = [UInt8]((0..<final.width).flatMap { _ in [UInt8(128), 128, 128, 255] })
        var previousRows = 0
        for preview in run.previews {
            preview.image.pixels.withUnsafeBytes { shown in
                final.pixels.withUnsafeBytes { expected in
                    func row(_ y: Int, equals other: UnsafeRawPointer) -> Bool {
                        memcmp(shown.baseAddress! + y * rowBytes, other, rowBytes) == 0
                    }
                    var rows = 0
                    while rows < final.height, row(rows, equals: expected.baseAddress! + rows * rowBytes) { rows += 1 }
                    #expect(rows > previousRows, "each preview shows more rows (\(rows) after \(previousRows))")
                    // Below the decoded rows, grey. (A decoded row can equal the final one by
                    // chance, so the grey starts at or after `rows`: check the last row.)
                    if rows < final.height {
                        #expect(greyRow.withUnsafeBytes { row(final.height - 1, equals: $0.baseAddress!) }, "the last row is still grey")
                    }
                    previousRows = rows
                }
            }
        }
    }

    // MARK: - Options

    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func thumbnailPreviewsAndFinalMatchTheFullThumbnailDecode() throws {
        let data = try JPEGTests.corpus("photos/autumn-2560x1600-progressive.jpg")
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(256)
        let run = try Self.feed(data, chunkSize: 16384, options: options)
        let full = try JPEGTests.registry.decode(data, options: options)
        #expect(full.image.width == 256 && full.image.height == 160)
        Self.expectImproving(run, fullDecode: full, file: "autumn thumbnail", minimumPreviews: 3)
    }

    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"), arguments: [true, false])
    func previewsAreOrientedLikeTheFinalImage(applies: Bool) throws {
        let data = try JPEGTests.corpus("edge/hopper_orientation_6.jpg")
        var options = ImageDecodingOptions()
        options.appliesOrientation = applies
        let run = try Self.feed(data, chunkSize: 512, options: options)
        let full = try JPEGTests.registry.decode(data, options: options)
        Self.expectImproving(run, fullDecode: full, file: "hopper_orientation_6 applies: \(applies)", minimumPreviews: 2)
        #expect(run.final.orientation == .right)
    }

    @Test func oneChunkOrByteByByteGiveTheSameImage() throws {
        let data = try JPEGTests.fixture("hopper-progressive-32.jpg")
        let full = try JPEGTests.registry.decode(data)
        #expect(try Self.feed(data, chunkSize: data.count).final.image == full.image)
        #expect(try Self.feed(data, chunkSize: 1).final.image == full.image)
        let baseline = try JPEGTests.fixture("hopper.jpg")
        #expect(try Self.feed(baseline, chunkSize: 1).final.image == JPEGTests.registry.decode(baseline).image)
    }

    /// Segments libjpeg skips (COM, unknown APPn) and segments it keeps (APP1 EXIF, APP2 ICC)
    /// split across many small chunks: skipping resumes in the next chunk.
    @Test func markerSegmentsSplitAcrossChunks() throws {
        var data = JPEGMarkers.insertingSegment(marker: 0xFE, payload: JPEGTests.noise(count: 3000, seed: 3), into: try JPEGTests.fixture("hopper.jpg"))
        data = JPEGMarkers.insertingSegment(marker: 0xEA, payload: JPEGTests.noise(count: 5000, seed: 4), into: data)
        data = JPEGMarkers.insertingICCProfile(Data(JPEGTests.noise(count: 70_000, seed: 5)), into: data)
        data = JPEGTests.withEXIFOrientation(3, data)
        let full = try JPEGTests.registry.decode(data, options: .preservingColor)
        #expect(full.orientation == .down && full.iccProfile?.count == 70_000)
        for chunkSize in [7, 333, 4096] {
            let run = try Self.feed(data, chunkSize: chunkSize, options: .preservingColor)
            #expect(run.final.image == full.image, "chunks of \(chunkSize)")
            #expect(run.final.orientation == .down && run.final.iccProfile == full.iccProfile)
        }
    }

    // MARK: - Errors and limits

    @Test func refusesTooLargeAsSoonAsTheHeaderArrives() throws {
        let data = try JPEGTests.fixture("hopper.jpg")
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 1000
        let decoder = try #require(JPEGDecoder().makeIncrementalDecoder(options: options))
        try decoder.append(data.prefix(100))   // still in the tables
        #expect(throws: ImageError.tooLarge("JPEG of 128×128 pixels is over the limit of 1000")) {
            try decoder.append(data[100..<700])
        }
        // The failure sticks.
        #expect(throws: ImageError.self) { try decoder.finish() }
    }

    @Test func previewIsNilUntilSomethingCanBeShown() throws {
        let data = try JPEGTests.fixture("hopper.jpg")
        let decoder = try #require(JPEGDecoder().makeIncrementalDecoder(options: .init()))
        #expect(try decoder.preview() == nil)
        try decoder.append(data.prefix(300))
        #expect(try decoder.preview() == nil)
        try decoder.append(data[300..<3000])
        #expect(try decoder.preview() != nil)
        #expect(try decoder.preview() == nil, "nothing more to show")
    }

    /// A file cut short ends like a full decode of the same bytes: the partial image.
    @Test func truncatedInputFinishesLikeAFullDecode() throws {
        for name in ["hopper.jpg", "hopper-progressive-32.jpg"] {
            let data = try JPEGTests.fixture(name)
            let cut = data.prefix(data.count * 2 / 3)
            let full = try JPEGTests.registry.decode(cut)
            #expect(try Self.feed(cut, chunkSize: 100).final.image == full.image, "\(name)")
        }
        // Cut inside the header: finish() reports it.
        let decoder = try #require(JPEGDecoder().makeIncrementalDecoder(options: .init()))
        try decoder.append(try JPEGTests.fixture("hopper.jpg").prefix(200))
        #expect(throws: ImageError.self) { try decoder.finish() }
    }

    /// Bytes after the end of the image are not kept (a server appending junk cannot make the
    /// decoder buffer it), and do not change the image.
    @Test func trailingDataIsNotBuffered() throws {
        for name in ["hopper.jpg", "hopper-progressive-32.jpg"] {
            let data = try JPEGTests.fixture(name)
            let decoder = try #require(JPEGDecoder().makeIncrementalDecoder(options: .init()) as? JPEGIncrementalDecoder)
            try decoder.append(data)
            let junk = Data(JPEGTests.noise(count: 65536, seed: 7))
            for _ in 0..<16 {
                try decoder.append(junk)
                #expect(decoder.bufferedInputBytes < 4096, "\(name)")
            }
            #expect(try decoder.finish().image == JPEGTests.registry.decode(data).image)
        }
    }

    @Test func appendingAfterFinishFails() throws {
        let data = try JPEGTests.fixture("hopper.jpg")
        let decoder = try #require(JPEGDecoder().makeIncrementalDecoder(options: .init()))
        try decoder.append(data)
        let final = try decoder.finish()
        #expect(try decoder.finish().image == final.image, "finish() is idempotent")
        #expect(throws: ImageError.self) { try decoder.append(Data([0])) }
    }
}
