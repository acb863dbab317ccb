import Foundation

/// What a caller asks of a decode: limits, frames, orientation, and a size to decode to.
///
/// ```swift
/// var options = ImageDecodingOptions()
/// options.thumbnail = .maxPixelSize(256)   // longest side 256 px; a JPEG decodes at 1/8 scale
/// options.firstFrameOnly = true
/// let container = try registry.decode(bytes, options: options)
/// ```
public struct ImageDecodingOptions: Sendable, Hashable {
    /// The largest image (width × height of the stored canvas) a decode accepts, checked from
    /// the header before any pixel buffer is allocated. Default: 100 megapixels (400 MB as RGBA),
    /// far above any photo a camera takes and well below what a 32-bit size could overflow.
    public var maximumPixelCount: Int = 100_000_000
    /// The most bytes all decoded frames of an animation may take together; decoding stops with
    /// ``ImageError/tooLarge(_:)`` past it. Default: 512 MiB.
    public var maximumAnimationBytes: Int = 512 << 20
    /// The most work an animation decode may do, as canvas pixels composed: the canvas's width
    /// × height × the frames composed. Decoders compose every frame at canvas size whatever the
    /// output size, so a thumbnail of a large canvas with thousands of frames is small to keep
    /// but costly to make; this bounds the time, as ``maximumAnimationBytes`` bounds the
    /// memory. Checked before the first frame is composed wherever the file states its frame
    /// count, else frame by frame. Default: 2^29 (about 537 million pixels: 256 frames of a
    /// 1080p canvas, a few seconds of one core).
    public var maximumAnimationPixels: Int = 1 << 29
    /// The most frames an animation decode composes; a file with more fails with
    /// ``ImageError/tooLarge(_:)``. Frame bookkeeping costs time even for 1×1 frames (libwebp
    /// looks each frame up from the start of its list), so the frame count is bounded on its
    /// own. Default: 10,000 (over five minutes at 30 frames a second).
    public var maximumFrameCount: Int = 10_000
    /// The most coded images (tiles) one derived image of a HEIF or AVIF file may be made of;
    /// a grid with more fails with ``ImageError/tooLarge(_:)`` before any tile is decoded. Each
    /// tile costs a decode of its own (and libavif 0.11 keeps an AV1 decoder per tile, about
    /// half a megabyte each), whatever the canvas's size. Default: 256 (a 48-megapixel phone
    /// photo has 192 tiles of 512 × 512).
    public var maximumTileCount: Int = 256
    /// Decode only the first frame of an animated image.
    public var firstFrameOnly = false
    /// Turn the pixels upright according to the stored EXIF orientation (the default). When
    /// `false`, the pixels are returned as stored and ``ImageContainer/orientation`` says how to
    /// turn them.
    public var appliesOrientation = true
    /// Decode to a smaller size: coders that can scale while decoding (JPEG's DCT scaling,
    /// WebP's scaler) never materialise the full-size bitmap. Sizes are after orientation.
    /// Never upscales.
    public var thumbnail: Thumbnail?
    /// What a decode does with a source's own colour space: convert to sRGB, the web's default,
    /// so that the pixels mean what they say and an output needs no profile (the default), or
    /// keep the stored values and carry the profile in ``ImageContainer/iccProfile``.
    public var colorSpace: ColorSpace = .sRGB
    /// For a video, the time of the frame to decode, in seconds from the start: the frame a
    /// player shows at that time (the last frame that starts at or before it), not the nearest
    /// key frame. Default 0: the first frame. Past the end, the last frame.
    ///
    /// ```swift
    /// var options = ImageDecodingOptions()
    /// options.videoTime = 12.5
    /// let poster = try CoderRegistry.system().decode(bytes, options: options)
    /// ```
    public var videoTime: TimeInterval = 0
    /// For a video, an animated preview from ``videoTime`` instead of one frame (see
    /// ``VideoClip``); `nil` (the default) decodes the poster. Ignored with ``firstFrameOnly``.
    public var videoClip: VideoClip?
    /// For a PDF, the page to draw, counting from 1 (the default).
    public var page = 1
    /// For a PDF, whether the page is drawn on white, as viewers show it (the default); `false`
    /// leaves transparent what the page does not paint.
    public var drawsPageBackground = true
    /// The longest video a decode accepts, as its container or stream states it; a longer one
    /// (or one that claims more frames than this at 60 a second) fails with
    /// ``ImageError/tooLarge(_:)`` before any frame is decoded. Default: 4 hours. The work of a
    /// poster is bounded besides by ``maximumFrameCount``: the most frames decoded to reach
    /// ``videoTime`` from the key frame before it.
    public var maximumVideoDuration: TimeInterval = 4 * 3600
    /// The most pages a PDF may have; a document with more fails with
    /// ``ImageError/tooLarge(_:)``. Default: 10,000.
    public var maximumPageCount = 10_000

    public init() {}

    /// The colour space decoded pixels are in.
    ///
    /// ```swift
    /// var options = ImageDecodingOptions()
    /// options.colorSpace = .preserve   // the stored values, and the profile to embed again
    /// ```
    public struct ColorSpace: Sendable, Hashable, CustomStringConvertible {
        private let name: String

        /// Pixels converted from the source's ICC profile to sRGB; the result carries no
        /// profile, so encoders write none. Sources without a profile are sRGB already.
        public static let sRGB = ColorSpace(name: "sRGB")
        /// Pixels as stored; the source's ICC profile is carried in
        /// ``ImageContainer/iccProfile``, and encoders embed it again.
        public static let preserve = ColorSpace(name: "preserve")

        public var description: String { name }
    }

    /// A size to decode to.
    public enum Thumbnail: Sendable, Hashable {
        /// The longest side at most this many pixels, keeping the aspect ratio.
        case maxPixelSize(Int)
        /// Fit in, fill, or stretch to a box, per the content mode.
        case size(width: Int, height: Int, contentMode: ContentMode)

        /// The size the source is scaled to for a source of `width` × `height` (after
        /// orientation), never larger than the source and never smaller than 1×1. For
        /// ``ContentMode/fill`` this covers the box, and the decode then crops it to the box.
        package func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
            let scale: Double
            switch self {
            case .maxPixelSize(let side):
                scale = min(1, Double(max(side, 1)) / Double(max(width, height)))
                return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
            case .size(let boxWidth, let boxHeight, let mode):
                let sx = Double(max(boxWidth, 1)) / Double(width)
                let sy = Double(max(boxHeight, 1)) / Double(height)
                switch mode {
                case .stretch:
                    return (min(width, max(boxWidth, 1)), min(height, max(boxHeight, 1)))
                case .fit:
                    scale = min(1, min(sx, sy))
                case .fill:
                    scale = min(1, max(sx, sy))
                }
                return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
            }
        }
    }
}

/// How an image is fitted to a box.
public enum ContentMode: String, Sendable, Hashable, CaseIterable {
    /// Scale to fit inside the box, keeping the aspect ratio ("contain").
    case fit
    /// Scale to cover the box, keeping the aspect ratio ("cover"), then crop what overflows it,
    /// centred: a thumbnail of `.size(w, h, .fill)` is exactly w × h (unless the image is
    /// smaller: it is never upscaled).
    case fill
    /// Scale each axis to the box, distorting the aspect ratio ("fill" in CSS).
    case stretch
}
