import Foundation

/// An image file format, sniffed from the file's first bytes (never from a URL or file name).
///
/// Besides images, two kinds of source decode to a still image through the same pipeline: videos
/// (``mp4``, ``mov``, ``webm``, ``mkv``), whose decode is a poster frame, and PDF documents
/// (``pdf``), whose decode is a page. No encoder writes them: an output is always an image.
///
/// Servers mislabel images and file names lie (a `.png` that is really an APNG, a `.jpg` that
/// is a WebP), so the library decides how to decode from the bytes alone.
///
/// ```swift
/// let format = ImageFormat(sniffing: data)   // .webp
/// print(format?.mimeType ?? "")             // image/webp
/// print(format?.fileExtension ?? "")        // webp
/// ```
///
/// For what the header tells beyond the format (pixel size, animation, alpha), use
/// ``ImageHeader``.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, Sniffable {
    case jpeg, png, apng, gif, webp, tiff, bmp, ico, heic, heif, avif, jxl, svg
    /// An MPEG-4 movie (ISO BMFF with a video brand): H.264, HEVC, AV1 or MJPEG video.
    case mp4
    /// A QuickTime movie (`ftyp` major brand `qt  `).
    case mov
    /// A WebM movie (Matroska with DocType `webm`): VP8, VP9 or AV1 video.
    case webm
    /// A Matroska movie of any other DocType.
    case mkv
    /// A PDF document; its decode is one page.
    case pdf

    /// Sniffs the format from the start of `data`; `nil` when the bytes are no format the
    /// library knows, or too few to tell.
    ///
    /// A prefix is enough: most formats are known from their first 16 bytes. Two need a
    /// little more, and with too few bytes report the family they belong to:
    /// an APNG cut before its first `IDAT` sniffs as ``ImageFormat/png``, and a HEIF whose `ftyp` box is
    /// cut before its compatible brands sniffs as ``ImageFormat/heif`` even if the brands would have
    /// said ``ImageFormat/avif`` or ``ImageFormat/heic``.
    ///
    /// ```swift
    /// let jpeg = ImageFormat(sniffing: [0xFF, 0xD8, 0xFF, 0xE0])   // .jpeg
    /// let none = ImageFormat(sniffing: Data("hello".utf8))         // nil
    /// ```
    public init?(sniffing bytes: UnsafeRawBufferPointer) {
        guard let format = Self.sniff(bytes) else { return nil }
        self = format
    }

    private static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        HeaderSniffer(bytes, wantsDetails: false).sniff()?.format
    }

    /// The media type servers send and browsers expect for the format.
    ///
    /// ```swift
    /// print(ImageFormat.apng.mimeType)   // image/apng
    /// ```
    ///
    /// ICO uses `image/x-icon`, the type browsers sniff and servers send, rather than the
    /// registered but rarely seen `image/vnd.microsoft.icon`.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .apng: "image/apng"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .tiff: "image/tiff"
        case .bmp: "image/bmp"
        case .ico: "image/x-icon"
        case .heic: "image/heic"
        case .heif: "image/heif"
        case .avif: "image/avif"
        case .jxl: "image/jxl"
        case .svg: "image/svg+xml"
        case .mp4: "video/mp4"
        case .mov: "video/quicktime"
        case .webm: "video/webm"
        case .mkv: "video/x-matroska"
        case .pdf: "application/pdf"
        }
    }

    /// The usual file name extension, without the dot: what a file saved in this format
    /// should be called.
    ///
    /// ```swift
    /// print(ImageFormat.apng.fileExtension)   // png: APNG files keep the PNG extension
    /// ```
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png, .apng: "png"
        case .gif: "gif"
        case .webp: "webp"
        case .tiff: "tif"
        case .bmp: "bmp"
        case .ico: "ico"
        case .heic: "heic"
        case .heif: "heif"
        case .avif: "avif"
        case .jxl: "jxl"
        case .svg: "svg"
        case .mp4: "mp4"
        case .mov: "mov"
        case .webm: "webm"
        case .mkv: "mkv"
        case .pdf: "pdf"
        }
    }

    /// Whether the format is a movie, whose decode is a poster frame.
    package var isVideo: Bool {
        switch self {
        case .mp4, .mov, .webm, .mkv: true
        default: false
        }
    }
}
