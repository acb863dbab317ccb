import Foundation
import WebImageCore

/// A GIF composed a frame at a time by ``GIFRenderer``, which carries the canvas and each
/// frame's disposal to the next: the frames equal ``GIFDecoder``'s.
final class GIFFrameSource: AnimationFrameSource {
    private let bytes: StableBytes
    private let options: ImageDecodingOptions
    private var renderer: GIFRenderer
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int

    /// `nil` for a GIF that composes one frame.
    init?(_ data: Data, options: ImageDecodingOptions) throws {
        bytes = StableBytes(data)
        self.options = options
        renderer = try GIFRenderer(bytes.buffer, options: options, keepsEveryFrame: false)
        // A walk over the blocks, no LZW decoded: whether there is a second frame, and the
        // loop count, which a file may store anywhere before its trailer.
        var walk = try GIFStream(bytes.buffer)
        var frames = 0
        // As the renderer counts them: a frame the bytes cut short counts only when first.
        while let frame = walk.nextFrame(), frame.isComplete || frames == 0 { frames += 1 }
        guard frames > 1 else { return nil }
        canvasWidth = walk.screen.width
        canvasHeight = walk.screen.height
        loopCount = walk.loopValue.map { $0 == 0 ? 0 : $0 + 1 } ?? 1
    }

    /// GIF states no frame count, and a damaged frame ends a play early only when decoded.
    var frameCount: Int? { nil }

    func nextFrame() throws -> AnimatedImage.Frame? {
        try renderer.nextFrame()
    }

    func reset() throws {
        renderer = try GIFRenderer(bytes.buffer, options: options, keepsEveryFrame: false)
    }
}
