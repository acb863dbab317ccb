import Foundation
import WebImageCore

/// An APNG composed a frame at a time by ``APNGRenderer``, the canvas and each frame's dispose
/// op carried to the next: the frames equal ``PNGDecoder``'s.
final class APNGFrameSource: AnimationFrameSource {
    private let bytes: StableBytes
    private let renderer: APNGRenderer
    private let frames: [PNGFile.Frame]
    private let metadata: PNGDecoder.Metadata
    private let options: ImageDecodingOptions
    private var canvas: FrameCanvas
    private let scratch: UnsafeMutableRawBufferPointer
    private var next = 0
    /// The file ended inside a frame: the play ends before it.
    private var cutShort = false

    /// `nil` for a still PNG, or an APNG of one frame.
    init?(_ data: Data, options: ImageDecodingOptions) throws {
        bytes = StableBytes(data)
        let file = try PNGFile(bytes.buffer)
        try PNGDecoder.checkLimits(file, bytes.buffer, options: options)
        guard let animation = file.animation else { return nil }
        frames = Array(animation.frames.prefix(animation.declaredFrameCount))
        guard frames.count > 1 else { return nil }
        guard frames.count <= options.maximumFrameCount else {
            throw ImageError.tooLarge("APNG: \(frames.count) frames exceed the limit of \(options.maximumFrameCount)")
        }
        renderer = APNGRenderer(file: file, animation: animation, bytes: bytes.buffer, options: options)
        metadata = PNGDecoder.Metadata(file, bytes.buffer)
        self.options = options
        canvas = FrameCanvas(width: file.header.width, height: file.header.height)
        scratch = APNGRenderer.makeScratch(for: frames)
    }

    deinit {
        scratch.deallocate()
    }

    var canvasWidth: Int { canvas.width }
    var canvasHeight: Int { canvas.height }
    var frameCount: Int? { renderer.file.truncated ? nil : frames.count }
    var loopCount: Int { renderer.animation.plays }
    var orientation: ImageOrientation { metadata.orientation }

    func nextFrame() throws -> AnimatedImage.Frame? {
        guard next < frames.count, !cutShort else { return nil }
        guard var frame = try renderer.compose(frames[next], index: next, onto: canvas, scratch: scratch) else {
            cutShort = true
            return nil
        }
        next += 1
        frame.bitmap = ColorConversion.apply(frame.bitmap, profile: metadata.iccProfile, options: options)
        return frame
    }

    func reset() {
        canvas = FrameCanvas(width: canvas.width, height: canvas.height)
        next = 0
        cutShort = false
    }
}
