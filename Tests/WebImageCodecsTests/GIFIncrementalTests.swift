import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// The incremental GIF decoder: no preview until the first frame's data is complete, then
/// that frame once; the final result is the full decode.
@Suite struct GIFIncrementalTests {
    @Test func firstFrameOnceComplete() throws {
        let data = try PNGGIFReference.fixture("dispose_bgnd.gif")
        let whole = try GIFDecoder().decode(data, options: .init())
        let firstFrame = try #require(whole.animation?.frames.first?.bitmap)
        let incremental = try #require(GIFDecoder().makeIncrementalDecoder(options: .init()))
        var previews: [(offset: Int, image: ImageContainer)] = []
        for offset in stride(from: 0, to: data.count, by: 50) {
            try incremental.append(data[offset..<min(offset + 50, data.count)])
            if let preview = try incremental.preview() { previews.append((offset, preview)) }
        }
        #expect(previews.count == 1)
        let preview = try #require(previews.first)
        #expect(preview.image.isPreview)
        #expect(preview.image.image == firstFrame)
        #expect(preview.offset + 50 < data.count, "shown before the file is complete")
        let final = try incremental.finish()
        #expect(final.animation == whole.animation)
    }

    /// Before the first frame is complete there is nothing to show, even with most of it in.
    @Test func nothingBeforeTheFirstFrameEnds() throws {
        let frame = GIFBuilder.image(.init(width: 30, height: 30, indices: (0..<900).map { UInt8($0 % 2) }))
        let bytes = GIFBuilder.gif(width: 30, height: 30, blocks: [frame])
        let incremental = try #require(GIFDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(Data(bytes.prefix(bytes.count - 3)))
        #expect(try incremental.preview() == nil)
        try incremental.append(Data(bytes.suffix(3)))
        #expect(try incremental.preview() != nil)
        #expect(try incremental.finish().image.width == 30)
    }

    /// Tiny pieces (13 bytes: the screen descriptor before its 768-byte colour table) are
    /// fine, and the preview still comes once the frame is in.
    @Test func tinyPieces() throws {
        let data = try PNGGIFReference.fixture("hopper.gif")
        let incremental = try #require(GIFDecoder().makeIncrementalDecoder(options: .init()))
        var previews = 0
        for offset in stride(from: 0, to: data.count, by: 13) {
            try incremental.append(data[offset..<min(offset + 13, data.count)])
            if try incremental.preview() != nil { previews += 1 }
        }
        #expect(previews == 1)
        #expect(try incremental.finish().image == (try GIFDecoder().decode(data, options: .init())).image)
    }

    /// A bad header fails as soon as it has arrived.
    @Test func badHeaderFailsEarly() throws {
        let incremental = try #require(GIFDecoder().makeIncrementalDecoder(options: .init()))
        #expect(throws: ImageError.self) { try incremental.append(try PNGGIFReference.fixture("zero_width.gif")) }
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 10
        let small = try #require(GIFDecoder().makeIncrementalDecoder(options: options))
        #expect(throws: ImageError.self) { try small.append(try PNGGIFReference.fixture("hopper.gif").prefix(20)) }
        let bomb = try #require(GIFDecoder().makeIncrementalDecoder(options: .init()))
        try bomb.append(try PNGGIFReference.fixture("decompression_bomb.gif"))
        #expect(try bomb.preview() == nil)
        #expect(throws: ImageError.self) { try bomb.finish() }
    }
}
