import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// The progressive PNG decoder fed chunk by chunk: previews come, improve, and the last result
/// is the full decode.
@Suite struct PNGIncrementalTests {
    /// Feeds `data` in `chunk`-byte pieces, asking for a preview after each, and returns the
    /// previews and the final image.
    static func feed(_ data: Data, chunk: Int, options: ImageDecodingOptions = .init()) throws -> (previews: [ImageContainer], final: ImageContainer) {
        let incremental = try #require(PNGDecoder().makeIncrementalDecoder(options: options))
        var previews: [ImageContainer] = []
        var offset = 0
        while offset < data.count {
            try incremental.append(data[offset..<min(offset + chunk, data.count)])
            offset += chunk
            if let preview = try incremental.preview() { previews.append(preview) }
        }
        return (previews, try incremental.finish())
    }

    /// Pixels of `bitmap` equal to `reference`'s.
    static func matching(_ bitmap: Bitmap, _ reference: Bitmap) -> Int {
        stride(from: 0, to: bitmap.pixels.count, by: 4).reduce(0) { count, offset in
            count + (bitmap.pixels[offset..<(offset + 4)] == reference.pixels[offset..<(offset + 4)] ? 1 : 0)
        }
    }

    /// Mean absolute difference per channel.
    static func error(_ bitmap: Bitmap, _ reference: Bitmap) -> Double {
        Double(zip(bitmap.pixels, reference.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(bitmap.pixels.count)
    }

    @Test func plainPNGRowByRow() throws {
        let data = try PNGGIFReference.fixture("hopper.png")
        let full = try PNGDecoder().decode(data, options: .init())
        let (previews, final) = try Self.feed(data, chunk: 2048)
        #expect(final.image == full.image)
        #expect(!final.isPreview)
        #expect(previews.count >= 5, "a preview for most chunks of a \(data.count)-byte file")
        var last = -1
        for preview in previews {
            #expect(preview.isPreview)
            #expect(preview.image.width == 128 && preview.image.height == 128)
            let matching = Self.matching(preview.image, full.image)
            #expect(matching > last, "each preview shows more rows")
            last = matching
        }
        // The first preview shows the top rows and leaves the rest transparent.
        let first = previews[0].image
        #expect(first.pixels[3] == 255)
        #expect(first.pixels[first.pixels.count - 1] == 0)
    }

    /// Pieces of a few bytes, splitting every chunk header: the same result.
    @Test func tinyPieces() throws {
        let data = try PNGGIFReference.fixture("hopper.png")
        let (previews, final) = try Self.feed(data, chunk: 7)
        #expect(final.image == (try PNGDecoder().decode(data, options: .init())).image)
        #expect(previews.count >= 100, "a preview for every few rows")
    }

    /// Asking for a preview when nothing new arrived gives nil.
    @Test func noPreviewWithoutProgress() throws {
        let data = try PNGGIFReference.fixture("hopper.png")
        let incremental = try #require(PNGDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(data.prefix(20))
        #expect(try incremental.preview() == nil, "no rows yet")
        try incremental.append(data[20..<8000])
        #expect(try incremental.preview() != nil)
        #expect(try incremental.preview() == nil, "nothing new since")
    }

    /// Adam7: the first passes give a coarse but complete image long before the file is in,
    /// every preview is at least as close to the final image, and the last is exact.
    @Test func interlacedPassesGiveACoarseImageEarly() throws {
        let source = try PNGDecoder().decode(try PNGGIFReference.fixture("hopper.png"), options: .init())
        var encoder = PNGEncoder()
        encoder.interlaced = true
        let data = try encoder.encode(source, options: .init())
        let (previews, final) = try Self.feed(data, chunk: 1024)
        #expect(final.image == source.image)
        let complete = previews.firstIndex { preview in stride(from: 3, to: preview.image.pixels.count, by: 4).allSatisfy { preview.image.pixels[$0] == 255 } }
        let early = try #require(complete, "some preview covers the whole image")
        #expect(early < previews.count / 2, "a full (coarse) image within the first half of the previews")
        var previous = Double.infinity
        for preview in previews[early...] {
            let error = Self.error(preview.image, source.image)
            #expect(error <= previous + 0.5, "previews converge: \(error) after \(previous)")
            previous = min(previous, error)
        }
        #expect(Self.error(previews[early].image, source.image) > Self.error(previews[previews.count - 1].image, source.image))
    }

    /// Interlaced files built by hand (every colour type) decode progressively to the same
    /// pixels as whole.
    @Test(arguments: [UInt8(0), 2, 3, 4, 6])
    func interlacedColourTypes(colorType: UInt8) throws {
        let channels = PNGBuilder.channels(colorType: colorType)
        let pixels = PNGDecoderTests.pattern(width: 23, height: 17, channels: channels, bitDepth: colorType == 3 ? 4 : 8)
        let before: [(String, [UInt8])] = colorType == 3 ? [("PLTE", (0..<16).flatMap { [UInt8($0 * 16), 9, 200] })] : []
        let data = Data(PNGBuilder.png(pixels, bitDepth: colorType == 3 ? 4 : 8, colorType: colorType, interlaced: true, before: before))
        let (previews, final) = try Self.feed(data, chunk: 97)
        #expect(final.image == (try PNGDecoder().decode(data, options: .init())).image)
        #expect(previews.count > 0)
    }

    /// A file that stops early: previews show what arrived, finish reports corrupt data.
    @Test func truncatedFile() throws {
        let data = try PNGGIFReference.fixture("hopper.png")
        let incremental = try #require(PNGDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(data.prefix(data.count / 2))
        let preview = try #require(try incremental.preview())
        #expect(preview.image.width == 128)
        #expect(throws: ImageError.self) { try incremental.finish() }
    }

    @Test func limitsAndCorruptData() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 100
        let tooLarge = try #require(PNGDecoder().makeIncrementalDecoder(options: options))
        #expect(throws: ImageError.self) { try tooLarge.append(try PNGGIFReference.fixture("hopper.png").prefix(100)) }

        let broken = try #require(PNGDecoder().makeIncrementalDecoder(options: .init()))
        #expect(throws: ImageError.self) {
            try broken.append(try PNGGIFReference.fixture("broken.png"))
            _ = try broken.finish()
        }
    }

    /// An APNG whose default image is not a frame shows no preview of it; its final result is
    /// the animation, as decoded whole. One whose default image is the first frame previews it.
    @Test func animatedPNG() throws {
        let data = try PNGGIFReference.fixture("apng-delay.png")
        let (previews, final) = try Self.feed(data, chunk: 100)
        #expect(previews.count == 0)
        let whole = try PNGDecoder().decode(data, options: .init())
        #expect(final.animation == whole.animation)
        #expect(final.animation?.frames.count == 4)

        let frames = [PNGBuilder.Frame(pixels: PNGBuilder.solid(64, 64, [255, 0, 0, 255])), PNGBuilder.Frame(pixels: PNGBuilder.solid(8, 8, [0, 0, 255, 255]))]
        let first = Data(PNGBuilder.apng(width: 64, height: 64, frames: frames))
        let (firstPreviews, firstFinal) = try Self.feed(first, chunk: 4096)
        #expect(firstPreviews.count > 0)
        #expect(firstFinal.animation?.frames.count == 2)
    }

    /// Previews are oriented like the final image.
    @Test func previewsAreOriented() throws {
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
        let data = Data(PNGBuilder.png(PNGDecoderTests.pattern(width: 40, height: 10, channels: 4, bitDepth: 8), before: [("eXIf", tiff)]))
        let (previews, final) = try Self.feed(data, chunk: 300)
        #expect(final.image.width == 10 && final.image.height == 40)
        #expect(previews.count > 0)
        #expect(previews.allSatisfy { $0.image.width == 10 && $0.image.height == 40 })
    }

    /// A corpus photo (2560×1600 RGBA) in 64 KiB pieces, as a download would deliver it.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"))
    func photoInPieces() throws {
        let data = try Data(contentsOf: Reference.corpus!.appendingPathComponent("photos/elarun-2560x1600-rgba.png"))
        let (previews, final) = try Self.feed(data, chunk: 64 << 10)
        #expect(final.image == (try PNGDecoder().decode(data, options: .init())).image)
        #expect(previews.count > 10)
    }
}
