import Foundation
import WebImageCore

/// A JPEG XL animation decoded a frame at a time, for the player: one libjxl decoder kept
/// between calls (a frame may be blended onto the ones before it, which libjxl keeps), a new one
/// for the next play. The frames equal ``JXLDecoder``'s (composed by libjxl, oriented, in sRGB
/// unless the options preserve the colour space), at the image's size.
final class JXLFrameSource: AnimationFrameSource {
    private let bytes: StableBytes
    private let options: ImageDecodingOptions
    private var stream: JXLStream
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int

    /// `nil` for a still image.
    init?(_ data: Data, options: ImageDecodingOptions) throws {
        bytes = StableBytes(data)
        let stream = try JXLStream(bytes.buffer, options: options)
        guard stream.isAnimated else { return nil }
        self.stream = stream
        self.options = options
        canvasWidth = stream.width
        canvasHeight = stream.height
        loopCount = stream.loopCount
    }

    /// JPEG XL states no frame count: only decoding tells.
    var frameCount: Int? { nil }

    func nextFrame() throws -> AnimatedImage.Frame? {
        let frame = try stream.nextFrame { index in
            guard index < options.maximumFrameCount else {
                throw ImageError.tooLarge("JPEG XL: more than \(options.maximumFrameCount) frames exceed the limit")
            }
        }
        guard let frame else { return nil }
        return AnimatedImage.Frame(bitmap: ColorConversion.apply(frame.bitmap, profile: stream.dataProfile, options: options), duration: frame.duration)
    }

    func reset() throws {
        stream = try JXLStream(bytes.buffer, options: options)
    }
}
