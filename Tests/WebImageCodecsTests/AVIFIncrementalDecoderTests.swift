import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// AVIF as it arrives. `avif-grid.avif` is a 128 × 256 image in a grid of 2 × 4 tiles of 64 × 64
/// (avifenc --grid 2x4, 4:4:4), whose tiles libavif decodes a row at a time; the other fixtures
/// are single-tile images and a sequence, which it decodes only whole.
@Suite struct AVIFIncrementalDecoderTests {
    typealias Files = ISOBMFFTestFiles

    static func feed(_ data: Data, chunkSize: Int, options: ImageDecodingOptions = .init()) throws -> IncrementalRun {
        try IncrementalRun.feed(AVIFDecoder(), data, chunkSize: chunkSize, options: options)
    }

    /// Appends `data` in pieces of `chunkSize` until `incremental` refuses one: the error, `nil`
    /// when every byte was accepted, and how many bytes had been offered by then.
    static func appendUntilRefused(_ incremental: any IncrementalImageDecoder, _ data: Data, chunkSize: Int) -> (error: (any Error)?, offered: Int) {
        var offset = 0
        while offset < data.count {
            let end = min(offset + chunkSize, data.count)
            do {
                try incremental.append(data.subdata(in: offset..<end))
            } catch {
                return (error, end)
            }
            offset = end
        }
        return (nil, offset)
    }

    /// The rows of `bitmap` from `start` to `end` (exclusive).
    static func rows(_ bitmap: Bitmap, _ start: Int, _ end: Int) -> ArraySlice<UInt8> {
        bitmap.pixels[(start * bitmap.bytesPerRow)..<(end * bitmap.bytesPerRow)]
    }

    @Test("a grid shows its rows of tiles as they arrive, the rest black; the final image is the one-shot decode's")
    func aGridShowsItsRowsOfTiles() throws {
        let data = try Files.fixture("avif-grid.avif")
        let full = try CoderRegistry.system().decode(data)
        for chunkSize in [1, 100, 700] {
            let run = try Self.feed(data, chunkSize: chunkSize)
            #expect(run.final.image == full.image, "chunks of \(chunkSize)")
            #expect(!run.final.isPreview)
            // Three previews at most (after one, two and three rows of tiles; the fourth is the
            // final image), each showing more rows than the one before.
            #expect((1...3).contains(run.previews.count), "chunks of \(chunkSize): \(run.previews.count) previews")
            var shownBefore = 0
            for preview in run.previews {
                #expect(preview.isPreview)
                let image = preview.image
                #expect(image.width == 128 && image.height == 256 && image.pixelFormat == full.image.pixelFormat)
                // The rows shown are the final image's, whole tiles of 64 rows; the rest is zero.
                let shown = (0..<image.height).first { Self.rows(image, $0, $0 + 1) != Self.rows(full.image, $0, $0 + 1) } ?? image.height
                #expect(shown % 64 == 0 && shown > shownBefore && shown < 256, "\(shown) rows shown after \(shownBefore)")
                #expect(Self.rows(image, 0, shown) == Self.rows(full.image, 0, shown))
                #expect(Self.rows(image, shown, 256).allSatisfy { $0 == 0 })
                shownBefore = shown
            }
        }
    }

    @Test("previews are resized to the thumbnail as the final image is")
    func thumbnailPreviews() throws {
        let data = try Files.fixture("avif-grid.avif")
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(64)
        let run = try Self.feed(data, chunkSize: 300, options: options)
        #expect(run.final.image == (try CoderRegistry.system().decode(data, options: options)).image)
        #expect(!run.previews.isEmpty)
        for preview in run.previews + [run.final] {
            #expect(preview.image.width == 32 && preview.image.height == 64)
        }
    }

    @Test("single-tile images and a sequence give no preview and the one-shot decode's result", arguments: [
        "avif-alpha.avif", "avif-10bit.avif", "avif-irot1.avif", "avif-clap.avif", "avif-animated.avif", "hopper-32.avif",
    ])
    func wholeImages(_ name: String) throws {
        let data = try Files.fixture(name)
        let full = try CoderRegistry.system().decode(data)
        let run = try Self.feed(data, chunkSize: 64)
        #expect(run.previews.isEmpty)
        #expect(run.final.image == full.image)
        #expect(run.final.animation?.frames.map(\.bitmap) == full.animation?.frames.map(\.bitmap))
        #expect(run.final.animation?.frames.map(\.duration) == full.animation?.frames.map(\.duration))
    }

    @Test("the pixel limit refuses a grid once its boxes are in, before the file is complete")
    func limitsBeforeThePixels() throws {
        let data = try Files.fixture("avif-grid.avif")
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 128 * 255
        let incremental = try #require(AVIFDecoder().makeIncrementalDecoder(options: options))
        let (refusal, offered) = Self.appendUntilRefused(incremental, data, chunkSize: 100)
        guard case .tooLarge = try #require(refusal as? ImageError) else {
            Issue.record("\(String(describing: refusal))")
            return
        }
        #expect(offered < data.count / 2, "refused after \(offered) of \(data.count) bytes")
        // The decoder stays failed.
        #expect(throws: ImageError.self) { try incremental.finish() }
    }

    @Test("a file that ends early fails with corruptData, however far it got", arguments: [0.02, 0.5, 0.9])
    func truncatedFiles(_ fraction: Double) throws {
        let data = try Files.fixture("avif-grid.avif")
        let incremental = try #require(AVIFDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(data.prefix(Int(Double(data.count) * fraction)))
        _ = try incremental.preview()
        #expect {
            try incremental.finish()
        } throws: { error in
            guard case .corruptData = error as? ImageError else { return false }
            return true
        }
    }
}

extension AVIFIncrementalDecoderTests {
    /// Fuzz finding #15: a 3 KB AVIF whose item claims 3.8 GB of data. libavif allocates an
    /// item's claimed size before reading it when the file's size is unknown, as it is while the
    /// file arrives; the decoder now bounds the size by the image's (8 bytes a pixel and 4 MB),
    /// so libavif refuses the item as soon as it is asked for, instead of allocating it and
    /// waiting for bytes that never come. The one-shot decode refuses it too.
    @Test(arguments: [1, 100, 3000])
    func anItemLargerThanTheImageCanBeIsRefusedOnArrival(chunkSize: Int) throws {
        let data = try Files.fixture("fuzz/fuzz-incremental/avif-item-size-beyond-the-file")
        #expect(throws: ImageError.self) { try CoderRegistry.system().decode(data) }
        let incremental = try #require(AVIFDecoder().makeIncrementalDecoder(options: .init()))
        let refusal = Self.appendUntilRefused(incremental, data, chunkSize: chunkSize).error
        guard case .corruptData = try #require(refusal as? ImageError, "accepted every byte, waiting for more") else {
            Issue.record("\(String(describing: refusal))")
            return
        }
    }

    /// The fuzz-incremental smoke on 5eaeaa9: a 4,352-byte AVIF grid whose items' extents claim
    /// up to 3.9 GB (a tile) and 1.29 GB (the grid item). libavif reads a grid item while it
    /// parses, before any size hint is set, so it allocated the grid item's whole claim. The claim is now read from `iloc` before libavif
    /// parses, and refused once the `meta` box is in, whatever the chunks; and checked here
    /// against the box itself, so that the test fails if the census stops reading lengths.
    @Test(arguments: [1, 97, 4352])
    func anItemClaimingMoreThanAnImageCanCodeIsRefusedBeforeParsing(chunkSize: Int) throws {
        let data = try Files.fixture("fuzz/fuzz-incremental/avif-grid-item-claims-1-3-gb")
        let claimed = data.withUnsafeBytes { ISOBMFFItems.largestItemLength($0) }
        #expect(claimed == 0xE700_00D8)
        #expect(throws: ImageError.self) { try CoderRegistry.system().decode(data) }
        let incremental = try #require(AVIFDecoder().makeIncrementalDecoder(options: .init()))
        let (refusal, offered) = Self.appendUntilRefused(incremental, data, chunkSize: chunkSize)
        guard case .corruptData(let message) = try #require(refusal as? ImageError, "accepted every byte") else {
            Issue.record("\(String(describing: refusal))")
            return
        }
        #expect(message.contains("claims"))
        // The `meta` box ends at byte 709: the refusal comes with the chunk that completes it.
        #expect(offered < 709 + chunkSize)
    }
}
