import Foundation
import WebImageCore

/// Decodes JPEG XL with libjxl, the format's reference implementation: the bare codestream and
/// the ISO-BMFF container, still and animated, alpha, and samples of any depth.
///
/// - **Limits** come from the header before any pixel is decoded: the size in the basic info
///   is checked against ``ImageDecodingOptions/maximumPixelCount``, and against 33.5 Mpx
///   whatever the options say: libjxl 0.7 needs some 16 bytes a pixel of working memory that no
///   allocator of ours can bound, and stops the process when one of its allocations fails, so
///   larger images are refused with ``ImageError/tooLarge(_:)``. JPEG XL states no frame
///   count, so each frame is checked as libjxl announces it, before its pixels are allocated:
///   the count so far against ``ImageDecodingOptions/maximumFrameCount``, the composed pixels
///   against ``ImageDecodingOptions/maximumAnimationPixels`` and the kept frames' bytes against
///   ``ImageDecodingOptions/maximumAnimationBytes``. The whole file is given to libjxl at once:
///   a file that ends early is an ``ImageError/corruptData(_:)``, never a wait for more.
/// - **Colour**: libjxl outputs the pixels in a colour space it states (for a lossy file, the
///   one it converts its internal XYB to; for a lossless one, the original's); unless that is
///   sRGB, its ICC profile goes through the same lcms2 conversion to sRGB as every decoder's
///   (``ImageDecodingOptions/ColorSpace/sRGB``, the default), or is kept in
///   ``ImageContainer/iccProfile`` with ``ImageDecodingOptions/ColorSpace/preserve``. A grey
///   image decodes to RGB; a grey profile is not converted.
/// - **Depth**: samples of more than 8 bits are asked of libjxl as 16-bit words and reduced with
///   rounding (`(v × 255 + 32767) / 65535`), as for AVIF and HEIC.
/// - **Orientation**: libjxl turns and mirrors the pixels as the file's orientation says, so the
///   returned ``ImageContainer/orientation`` is always ``ImageOrientation/up``.
/// - **Animation**: libjxl composes the frames (blending, zero-duration layers merged) at the
///   image's size; each frame's duration is its ticks of the animation's clock, and the loop
///   count is the file's `num_loops` (0: forever). With ``ImageDecodingOptions/firstFrameOnly`` the decode
///   stops after the first frame.
/// - **Thumbnails**: libjxl has no reduced-size decode here, so each frame is decoded at full
///   size and resampled (Lanczos-3) to the thumbnail size at once.
///
/// ```swift
/// var options = ImageDecodingOptions()
/// options.thumbnail = .maxPixelSize(256)
/// let container = try JXLDecoder().decode(bytes, options: options)
/// ```
public struct JXLDecoder: ImageDecoder {
    public init() {}

    public var formats: Set<ImageFormat> { [.jxl] }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        ColorConversion.apply(try data.withUnsafeBytes { try Self.decode($0, options: options) }, options: options)
    }

    /// Previews of the first frame as the file arrives: libjxl's DC as soon as it is complete,
    /// then the groups decoded since, each time the file has grown by half; a still image's
    /// frame is kept for ``IncrementalImageDecoder/finish()``, an animation decoded whole then.
    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        JXLIncrementalDecoder(options: options)
    }

    /// Animations frame by frame, for ``AnimatedImagePlayer``; `nil` for a still image.
    public func makeAnimationFrameSource(_ data: Data, options: ImageDecodingOptions) throws -> (any AnimationFrameSource)? {
        try JXLFrameSource(data, options: options)
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws -> ImageContainer {
        let stream = try JXLStream(bytes, options: options)
        let kept = options.thumbnail?.outputSize(width: stream.width, height: stream.height) ?? (width: stream.width, height: stream.height)
        var frames: [AnimatedImage.Frame] = []
        let checkFrame = { (index: Int) in
            try Self.checkAnimationWork(frames: index + 1, of: stream, keptSize: kept, options: options)
        }
        while !(options.firstFrameOnly && frames.count == 1), var frame = try stream.nextFrame(checkFrame: checkFrame) {
            try WorkDeadline.check("decoding JPEG XL frame \(frames.count + 1)")
            if kept.width != frame.bitmap.width || kept.height != frame.bitmap.height {
                frame.bitmap = try frame.bitmap.resized(width: kept.width, height: kept.height)
            }
            frames.append(frame)
        }
        guard let first = frames.first else { throw ImageError.corruptData("JPEG XL: the file has no frame") }
        let animation = frames.count > 1 ? AnimatedImage(frames: frames, loopCount: stream.loopCount) : nil
        return ImageContainer(image: first.bitmap, animation: animation, format: .jxl, iccProfile: stream.dataProfile)
    }

    /// Throws ``ImageError/tooLarge(_:)`` when `frames` frames of an animation pass a limit: the
    /// frame count, the pixels composed at the image's size, or the bytes of the frames kept at
    /// `keptSize`. A still image has one frame, which the pixel limit has already bounded.
    static func checkAnimationWork(
        frames: Int, of stream: JXLStream, keptSize: (width: Int, height: Int), options: ImageDecodingOptions
    ) throws {
        guard frames > 1 else { return }
        try options.checkAnimationWork(frameCount: frames, canvasWidth: stream.width, canvasHeight: stream.height, format: "JPEG XL")
        let (frameBytes, overflow1) = (keptSize.width * 4).multipliedReportingOverflow(by: keptSize.height)
        let (totalBytes, overflow2) = frameBytes.multipliedReportingOverflow(by: frames)
        guard !overflow1, !overflow2, totalBytes <= options.maximumAnimationBytes else {
            throw ImageError.tooLarge(
                "JPEG XL animation: \(frames) frames of \(keptSize.width)×\(keptSize.height) exceed the limit of \(options.maximumAnimationBytes) bytes")
        }
    }
}
