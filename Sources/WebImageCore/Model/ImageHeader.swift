import Foundation

/// What an image's header says beyond its format, read without decoding a single pixel.
///
/// Sniffing reads only fixed-size headers and, where the format puts a fact behind a short
/// list, walks that list with a small cap: PNG chunks up to the first `IDAT`, JPEG markers up
/// to the frame header, GIF blocks up to the second frame. It is cheap enough to run on every
/// load, and it lets a decoder refuse a 60 000 × 60 000 image before allocating for it.
///
/// Every fact is optional: `nil` means the header does not say, or the bytes stop before it
/// does. Values are as stored, so a corrupt file can report a width of 0; the decoder is
/// what rejects it.
///
/// ```swift
/// guard let header = ImageHeader(sniffing: data) else { throw ImageError.unsupportedFormat("unknown") }
/// if let pixels = header.pixelCount, pixels > 100_000_000 {
///     throw ImageError.tooLarge("\(header.pixelWidth!)×\(header.pixelHeight!) pixels")
/// }
/// ```
public struct ImageHeader: Sendable, Hashable, Sniffable {
    /// How a WebP file stores its image: the first chunk after the RIFF header.
    package enum WebPEncoding: String, Sendable, Hashable, CaseIterable {
        /// A single `VP8 ` chunk: lossy, no alpha, not animated.
        case lossy
        /// A single `VP8L` chunk: lossless, possibly with alpha.
        case lossless
        /// A `VP8X` header followed by other chunks: alpha, ICC profile, metadata, animation.
        case extended
    }

    /// The file format.
    public var format: ImageFormat
    /// For WebP, which of the three layouts the file uses; `nil` for other formats.
    package var webPEncoding: WebPEncoding?
    /// Whether the file holds an animation. Known for APNG (`acTL` frame count), WebP (the
    /// `VP8X` animation flag), GIF (a second image in the file), JPEG XL (its codestream
    /// header) and still-only formats (JPEG, BMP, ICO); `nil` when the header does not say
    /// (TIFF pages, HEIF, SVG) or the bytes stop first.
    public var isAnimated: Bool?
    /// Whether the file declares transparency: an alpha channel (PNG, WebP, BMP bit masks,
    /// TIFF extra samples) or a transparent colour (PNG `tRNS`, GIF). Declared is not used:
    /// the pixels may all be opaque.
    public var hasAlpha: Bool?
    /// The stored width in pixels, before any EXIF orientation is applied. For GIF, the
    /// logical screen; for ICO, the largest icon in the directory; for JPEG XL, whose decoder
    /// turns the pixels itself, the upright size.
    public var pixelWidth: Int?
    /// The stored height in pixels, before any EXIF orientation is applied.
    public var pixelHeight: Int?
    /// For JPEG, whether the frame is progressive (SOF2, SOF6, SOF10 or SOF14): its decoder
    /// then keeps every DCT coefficient of the image until the last scan. `nil` for other
    /// formats, or when the bytes stop before the frame header.
    public var isProgressive: Bool?
    /// For HEIF and AVIF, the most tiles one derived image (a grid) of the file is made of: each
    /// is decoded on its own, and libavif 0.11 keeps an AV1 decoder for each. `nil` for other
    /// formats, files without a grid of two tiles or more (libheif's encoder writes even a small
    /// image as a grid of one), or item boxes that cannot be read.
    package var tileCount: Int?

    package init(
        format: ImageFormat,
        webPEncoding: WebPEncoding? = nil,
        isAnimated: Bool? = nil,
        hasAlpha: Bool? = nil,
        pixelWidth: Int? = nil,
        pixelHeight: Int? = nil,
        isProgressive: Bool? = nil
    ) {
        self.format = format
        self.webPEncoding = webPEncoding
        self.isAnimated = isAnimated
        self.hasAlpha = hasAlpha
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.isProgressive = isProgressive
    }

    /// Sniffs the format and header facts from the start of `data`; `nil` when the bytes are
    /// no format the library knows.
    ///
    /// A prefix is enough for the format (see ``ImageFormat``);
    /// facts behind the end of the prefix come back `nil`.
    ///
    /// ```swift
    /// let header = bytes.withUnsafeBytes { ImageHeader(sniffing: $0) }
    /// print(header?.format ?? "-")       // png
    /// print(header?.pixelWidth ?? 0)     // 1600
    /// print(header?.hasAlpha ?? false)   // true
    /// ```
    public init?(sniffing bytes: UnsafeRawBufferPointer) {
        guard let header = HeaderSniffer(bytes, wantsDetails: true).sniff() else { return nil }
        self = header
    }

    /// Width times height, when both are known; saturates at `Int.max` instead of overflowing,
    /// so a limit check on a lying header still refuses it.
    ///
    /// ```swift
    /// let header = ImageHeader(sniffing: bytes)
    /// let tooLarge = header?.pixelCount.map { $0 > 50_000_000 } ?? false   // refuse to decode?
    /// ```
    public var pixelCount: Int? {
        guard let pixelWidth, let pixelHeight else { return nil }
        let (product, overflow) = pixelWidth.multipliedReportingOverflow(by: pixelHeight)
        return overflow ? .max : product
    }
}
