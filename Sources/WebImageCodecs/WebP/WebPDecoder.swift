import CWebP
import Foundation
import WebImageCore

/// Decodes WebP with libwebp: lossy (`VP8 `), lossless (`VP8L`), lossy with an alpha plane, the
/// extended layout (`VP8X`) with its `ICCP` and `EXIF` chunks, and animations.
///
/// - Still images decode straight into the returned bitmap's storage (libwebp's advanced API
///   with external memory): no intermediate buffer, no copy.
/// - With ``ImageDecodingOptions/thumbnail`` a still image decodes at the thumbnail size through
///   libwebp's built-in scaler (an area-averaging rescaler that runs as rows are decoded), so
///   the full-size bitmap never exists.
/// - Animations are composed on the canvas by libwebp's `WebPAnimDecoder` (straight-alpha RGBA,
///   transparent background, the `ANIM` background colour ignored as the specification allows).
///   Each frame's ``AnimatedImage/Frame/duration`` is the milliseconds the file stores, and
///   ``AnimatedImage/loopCount`` is the `ANIM` loop count, which WebP defines as the number of
///   plays with 0 meaning forever, exactly this library's convention. With a thumbnail, each
///   frame is decoded at canvas size (libwebp's animation decoder cannot scale) and resampled
///   (Lanczos-3) as soon as it is composed, so no full-size frame is kept; the
///   ``ImageDecodingOptions/maximumAnimationBytes`` budget then applies to the thumbnail frames,
///   and ``ImageDecodingOptions/maximumAnimationPixels`` to the canvases composed. The frame
///   count is bounded by ``ImageDecodingOptions/maximumFrameCount`` before any frame is
///   decoded: libwebp finds frame *i* by walking its frame list from the start, so the time
///   grows with the square of the count.
/// - The stored EXIF orientation is reported in ``ImageContainer/orientation``, not applied;
///   the ICC profile in ``ImageContainer/iccProfile``.
/// - A file cut short fails with ``ImageError/corruptData(_:)``; no partial image is returned
///   (the incremental decoder gives previews of partial files).
///
/// ```swift
/// var options = ImageDecodingOptions()
/// options.thumbnail = .maxPixelSize(256)    // libwebp scales while decoding
/// let container = try WebPDecoder().decode(bytes, options: options)
/// ```
public struct WebPDecoder: ImageDecoder {
    public init() {}

    public var formats: Set<ImageFormat> { [.webp] }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        ColorConversion.apply(try data.withUnsafeBytes { try Self.decode($0, options: options) }, options: options)
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws -> ImageContainer {
        let file = try WebPFile(bytes, options: options)
        let size = WebPFile.decodeSize(width: file.width, height: file.height, orientation: file.orientation, options: options)
        if file.isAnimated {
            return try decodeAnimation(bytes, file: file, size: size, options: options)
        }
        let image = try decodeStill(bytes, width: size?.width ?? file.width, height: size?.height ?? file.height, scaled: size != nil)
        return ImageContainer(image: image, format: .webp, orientation: file.orientation, iccProfile: file.iccProfile)
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        WebPIncrementalDecoder(options: options)
    }

    /// Animations frame by frame through libwebp's `WebPAnimDecoder`; `nil` for a still image.
    public func makeAnimationFrameSource(_ data: Data, options: ImageDecodingOptions) throws -> (any AnimationFrameSource)? {
        try WebPFrameSource(data, options: options)
    }

    /// Decodes a still image into a new bitmap of `width` × `height`, scaling when `scaled`.
    static func decodeStill(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int, scaled: Bool) throws -> Bitmap {
        try Bitmap(width: width, height: height, pixelFormat: .rgba8) { pixels in
            var config = try makeConfig(output: pixels, width: width, height: height, scaled: scaled)
            let status = WebPDecode(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &config)
            // External memory: this frees nothing of ours, only what libwebp may have attached.
            WebPFreeDecBuffer(&config.output)
            guard status == VP8_STATUS_OK else { throw WebPStatus.error(status, "decoding the image") }
        }
    }

    /// A decoder configuration that writes straight-alpha RGBA into `output`, rows of
    /// `width * 4` bytes, rescaling to `width` × `height` when `scaled`. Threads stay off: the
    /// caller's decode executor decides the parallelism, and libwebp's extra thread only
    /// overlaps the loop filter.
    static func makeConfig(output: UnsafeMutableRawBufferPointer, width: Int, height: Int, scaled: Bool) throws -> WebPDecoderConfig {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw ImageError.unsupportedFormat("WebP: libwebp's decoder ABI does not match its headers")
        }
        config.output.colorspace = MODE_RGBA
        config.output.is_external_memory = 1
        config.output.u.RGBA.rgba = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        config.output.u.RGBA.stride = Int32(width * 4)
        config.output.u.RGBA.size = output.count
        if scaled {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(width)
            config.options.scaled_height = Int32(height)
        }
        return config
    }

    /// Decodes every frame (or the first) through `WebPAnimDecoder`, which composes each onto
    /// the canvas with the frame's blend and dispose methods.
    static func decodeAnimation(
        _ bytes: UnsafeRawBufferPointer, file: WebPFile, size: (width: Int, height: Int)?, options: ImageDecodingOptions
    ) throws -> ImageContainer {
        let frameCount = options.firstFrameOnly ? 1 : file.frameCount
        let outputWidth = size?.width ?? file.width, outputHeight = size?.height ?? file.height
        // Every frame is composed at canvas size, whatever the output: the work, before any.
        try options.checkAnimationWork(frameCount: frameCount, canvasWidth: file.width, canvasHeight: file.height, format: "WebP")
        // The frames this decode keeps, checked before libwebp allocates its canvas.
        let (frameBytes, overflow1) = (outputWidth * 4).multipliedReportingOverflow(by: outputHeight)
        let (totalBytes, overflow2) = frameBytes.multipliedReportingOverflow(by: frameCount)
        guard !overflow1, !overflow2, totalBytes <= options.maximumAnimationBytes else {
            throw ImageError.tooLarge(
                "WebP animation: \(frameCount) frames of \(outputWidth)×\(outputHeight) exceed the limit of \(options.maximumAnimationBytes) bytes")
        }

        var decoderOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&decoderOptions) != 0 else {
            throw ImageError.unsupportedFormat("WebP: libwebp's demux ABI does not match its headers")
        }
        decoderOptions.color_mode = MODE_RGBA  // straight alpha, not MODE_rgbA
        decoderOptions.use_threads = 0
        var data = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        guard let decoder = WebPAnimDecoderNew(&data, &decoderOptions) else {
            throw ImageError.corruptData("WebP: the animation does not parse")
        }
        defer { WebPAnimDecoderDelete(decoder) }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0,
              Int(info.canvas_width) == file.width, Int(info.canvas_height) == file.height else {
            throw ImageError.corruptData("WebP: the animation's canvas does not match its header")
        }

        var frames: [AnimatedImage.Frame] = []
        frames.reserveCapacity(frameCount)
        var previousEnd: Int32 = 0
        let canvasBytes = file.width * 4 * file.height
        while frames.count < frameCount, WebPAnimDecoderHasMoreFrames(decoder) != 0 {
            try WorkDeadline.check("decoding WebP frame \(frames.count + 1) of \(frameCount)")
            var canvas: UnsafeMutablePointer<UInt8>?
            // The timestamp is when the frame ends: the sum of its duration and all before it.
            var end: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &canvas, &end) != 0, let canvas else {
                throw ImageError.corruptData("WebP: frame \(frames.count + 1) of \(file.frameCount) does not decode")
            }
            // The canvas belongs to the decoder and is overwritten by the next frame: copy it.
            var bitmap = try Bitmap(width: file.width, height: file.height, pixelFormat: .rgba8) { pixels in
                pixels.baseAddress!.copyMemory(from: canvas, byteCount: canvasBytes)
            }
            if outputWidth != file.width || outputHeight != file.height {
                bitmap = try bitmap.resized(width: outputWidth, height: outputHeight)
            }
            frames.append(.init(bitmap: bitmap, duration: .milliseconds(max(0, end - previousEnd))))
            previousEnd = end
        }
        guard let first = frames.first, frames.count == frameCount else {
            throw ImageError.corruptData("WebP: the animation has \(frames.count) of its \(frameCount) frames")
        }
        let animation = options.firstFrameOnly ? nil : AnimatedImage(frames: frames, loopCount: Int(info.loop_count))
        return ImageContainer(
            image: first.bitmap, animation: animation, format: .webp,
            orientation: file.orientation, iccProfile: file.iccProfile)
    }
}
