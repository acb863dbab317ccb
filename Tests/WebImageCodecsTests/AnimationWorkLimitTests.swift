import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Animation decodes are bounded by the work they do (canvas pixels × frames composed, and the
/// frame count), not only by the frames they keep: small files that would keep a core busy
/// for minutes are refused before the first frame is composed.
@Suite(.timeLimit(.minutes(10 * Sanitizers.slowdown))) struct AnimationWorkLimitTests {
    let registry = CoderRegistry.system()

    /// Expects `body` to throw ``ImageError/tooLarge(_:)`` whose message names `words`.
    func expectTooLarge(_ words: String, _ body: () throws -> ImageContainer) {
        do {
            let container = try body()
            Issue.record("decoded \(container.animation?.frames.count ?? 1) frames instead of refusing")
        } catch let error as ImageError {
            guard case .tooLarge(let message) = error else { Issue.record("expected tooLarge, got \(error)"); return }
            #expect(message.contains(words), "\(message)")
        } catch {
            Issue.record("not an ImageError: \(error)")
        }
    }

    /// The denial of service: a 4096×4096 canvas with 3,000 one-pixel frames (147 KB) asked for
    /// as a 64 px thumbnail. The thumbnail frames fit the memory limit; composing 3,000 canvases
    /// of 16.8 megapixels does not fit the work limit.
    @Test func largeCanvasWithThousandsOfFramesIsRefusedBeforeComposing() throws {
        let data = AnimatedWebPBuilder.file(width: 4096, height: 4096, frameCount: 3000)
        #expect(data.count < 200_000)
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(64)
        expectTooLarge("compose more than") { try registry.decode(data, options: options) }
        // The incremental decoder gathers an animation and decodes it at the end: the same rule.
        let incremental = try #require(registry.makeIncrementalDecoder(for: .webp, options: options))
        expectTooLarge("compose more than") {
            try incremental.append(data)
            return try incremental.finish()
        }
    }

    /// Hostile-input finding 9: the proxy's limits (256 MiB of decoded frames, 2^28 canvas
    /// pixels composed) refused a 1920×1080 GIF of 40 frames as "more than 32 frames", while the
    /// README promised 128 frames of 1080p. One definition now, in every decoder: the work limit
    /// counts canvases composed (128 of 1080p), the memory limit the frames as kept, at the
    /// size asked for, so such a GIF decodes as a thumbnail; at full size 32 frames fit. Here at
    /// a sixteenth of the area, with the limits scaled alike (a debug build composes 1080p
    /// canvases slowly).
    @Test func theMemoryLimitCountsFramesAtTheSizeAskedFor() throws {
        var options = ImageDecodingOptions()
        options.maximumAnimationBytes = 480 * 270 * 4 * 32
        options.maximumAnimationPixels = 480 * 270 * 128
        // A full first frame, then 39 one-pixel frames: each composed on the whole canvas.
        let blocks = [GIFBuilder.image(GIFDecoderTests.solid(480, 270, 2))]
            + (1..<40).map { GIFBuilder.image(GIFDecoderTests.solid(1, 1, UInt8($0 % 5), x: $0, y: 0)) }
        let gif = Data(GIFBuilder.gif(width: 480, height: 270, globalPalette: GIFDecoderTests.palette, blocks: blocks))
        options.thumbnail = .maxPixelSize(128)
        let thumbnail = try registry.decode(gif, options: options)
        #expect(thumbnail.animation?.frames.count == 40)
        #expect(thumbnail.image.width == 128 && thumbnail.image.height == 72)
        #expect(thumbnail.animation?.frames.allSatisfy { $0.bitmap.width == 128 && $0.bitmap.height == 72 } == true)
        options.thumbnail = nil
        expectTooLarge("more than 32 frames of 480×270 exceed the limit of 16588800 bytes") { try registry.decode(gif, options: options) }
    }

    /// libwebp looks frame *i* up by walking its list from the start: 200,000 frames of 1×1
    /// took 32 s. The frame count is bounded before any lookup.
    @Test func hundredsOfThousandsOfTinyFramesAreRefusedByCount() throws {
        let data = AnimatedWebPBuilder.file(width: 1, height: 1, frameCount: 200_000)
        expectTooLarge("200000 frames exceed the limit of 10000") { try registry.decode(data) }
    }

    /// Within both limits the same shape decodes, every frame composed: the limits refuse only
    /// what is past them.
    @Test func animationsWithinTheLimitsDecode() throws {
        let data = AnimatedWebPBuilder.file(width: 64, height: 64, frameCount: 500)
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(16)
        let container = try registry.decode(data, options: options)
        let animation = try #require(container.animation)
        #expect(animation.frames.count == 500)
        #expect(animation.width == 16 && animation.height == 16)
        // The red pixel at the top-left corner, averaged over its 4×4 block by the thumbnail.
        #expect(animation.frames[499].bitmap.pixels[0] > 0)

        // The first frame alone is one canvas of work, whatever the count.
        options.firstFrameOnly = true
        options.maximumFrameCount = 10
        #expect(try registry.decode(data, options: options).animation == nil)
    }

    /// A limit set by the caller applies exactly: 100 frames of 100×100 are a million pixels.
    @Test(arguments: [999_999, 1_000_000])
    func theWorkLimitIsCanvasPixelsTimesFrames(limit: Int) throws {
        let data = AnimatedWebPBuilder.file(width: 100, height: 100, frameCount: 100)
        var options = ImageDecodingOptions()
        options.maximumAnimationPixels = limit
        if limit < 1_000_000 {
            expectTooLarge("100 frames of a 100×100 canvas") { try registry.decode(data, options: options) }
        } else {
            #expect(try registry.decode(data, options: options).animation?.frames.count == 100)
        }
    }

    /// GIF states no frame count: the work is counted frame by frame, and the decode stops at
    /// the first frame past the limit.
    @Test func gifWorkIsCheckedFrameByFrame() throws {
        let frame = GIFBuilder.image(.init(width: 1, height: 1, indices: [1], control: (disposal: 0, delay: 2, transparent: nil)))
        let data = Data(GIFBuilder.gif(width: 200, height: 200, blocks: Array(repeating: frame, count: 30)))
        var options = ImageDecodingOptions()
        options.maximumAnimationPixels = 200 * 200 * 29
        expectTooLarge("30 frames of a 200×200 canvas") { try registry.decode(data, options: options) }
        options.maximumAnimationPixels = 200 * 200 * 30
        #expect(try registry.decode(data, options: options).animation?.frames.count == 30)
        options.maximumFrameCount = 29
        expectTooLarge("30 frames exceed the limit of 29") { try registry.decode(data, options: options) }
    }

    /// APNG states its frame count in `acTL`: checked before the first frame is decoded.
    @Test func apngWorkIsCheckedFromTheFrameCount() throws {
        // The first frame covers the canvas (the APNG rule); the rest are 2×2.
        let frames = (0..<20).map { (index: Int) -> PNGBuilder.Frame in
            let side = index == 0 ? 300 : 2
            return PNGBuilder.Frame(pixels: PNGBuilder.solid(side, side, [UInt16(index * 10), 0, 0, 255]))
        }
        let data = Data(PNGBuilder.apng(width: 300, height: 300, frames: frames))
        var options = ImageDecodingOptions()
        options.maximumAnimationPixels = 300 * 300 * 19
        expectTooLarge("20 frames of a 300×300 canvas") { try registry.decode(data, options: options) }
        options.maximumAnimationPixels = 300 * 300 * 20
        #expect(try registry.decode(data, options: options).animation?.frames.count == 20)
    }
}
