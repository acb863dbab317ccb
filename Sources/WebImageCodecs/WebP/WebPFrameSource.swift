import CWebP
import Foundation
import WebImageCore

/// An animated WebP decoded a frame at a time by libwebp's `WebPAnimDecoder`, which keeps the
/// canvas and each frame's blend and dispose state itself: each ``nextFrame()`` is one
/// `WebPAnimDecoderGetNext`, and ``reset()`` is `WebPAnimDecoderReset`. The frames equal
/// ``WebPDecoder``'s (the same decoder options, the same colour conversion).
final class WebPFrameSource: AnimationFrameSource {
    private let bytes: StableBytes
    private let decoder: OpaquePointer
    private let file: WebPFile
    private let options: ImageDecodingOptions
    /// The timestamp at which the last frame returned ended: libwebp reports when each frame
    /// ends, not how long it lasts.
    private var previousEnd: Int32 = 0
    private var returned = 0

    /// `nil` for a still image.
    init?(_ data: Data, options: ImageDecodingOptions) throws {
        bytes = StableBytes(data)
        file = try WebPFile(bytes.buffer, options: options)
        guard file.isAnimated else { return nil }
        // libwebp walks its frame list from the start for every frame: bounded like a decode.
        guard file.frameCount <= options.maximumFrameCount else {
            throw ImageError.tooLarge("WebP: \(file.frameCount) frames exceed the limit of \(options.maximumFrameCount)")
        }
        self.options = options
        var decoderOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&decoderOptions) != 0 else {
            throw ImageError.unsupportedFormat("WebP: libwebp's demux ABI does not match its headers")
        }
        decoderOptions.color_mode = MODE_RGBA  // straight alpha, as WebPDecoder
        decoderOptions.use_threads = 0
        var webPData = WebPData(bytes: bytes.buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.buffer.count)
        guard let decoder = WebPAnimDecoderNew(&webPData, &decoderOptions) else {
            throw ImageError.corruptData("WebP: the animation does not parse")
        }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0,
              Int(info.canvas_width) == file.width, Int(info.canvas_height) == file.height else {
            WebPAnimDecoderDelete(decoder)
            throw ImageError.corruptData("WebP: the animation's canvas does not match its header")
        }
        self.decoder = decoder
    }

    deinit {
        WebPAnimDecoderDelete(decoder)
    }

    var canvasWidth: Int { file.width }
    var canvasHeight: Int { file.height }
    var frameCount: Int? { file.frameCount }
    var loopCount: Int { file.loopCount }
    var orientation: ImageOrientation { file.orientation }

    func nextFrame() throws -> AnimatedImage.Frame? {
        guard WebPAnimDecoderHasMoreFrames(decoder) != 0 else {
            guard returned == file.frameCount else {
                throw ImageError.corruptData("WebP: the animation has \(returned) of its \(file.frameCount) frames")
            }
            return nil
        }
        var canvas: UnsafeMutablePointer<UInt8>?
        var end: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &canvas, &end) != 0, let canvas else {
            throw ImageError.corruptData("WebP: frame \(returned + 1) of \(file.frameCount) does not decode")
        }
        // The canvas belongs to the decoder and is overwritten by the next frame: copy it.
        let byteCount = file.width * 4 * file.height
        let bitmap = try Bitmap(width: file.width, height: file.height, pixelFormat: .rgba8) { pixels in
            pixels.baseAddress!.copyMemory(from: canvas, byteCount: byteCount)
        }
        let duration = Duration.milliseconds(max(0, end - previousEnd))
        previousEnd = end
        returned += 1
        return AnimatedImage.Frame(bitmap: ColorConversion.apply(bitmap, profile: file.iccProfile, options: options), duration: duration)
    }

    func reset() {
        WebPAnimDecoderReset(decoder)
        previousEnd = 0
        returned = 0
    }
}
