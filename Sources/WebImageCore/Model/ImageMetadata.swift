import Foundation

/// What an image file says about itself: size, orientation, frames, loop count, frame
/// durations, colour profile, progressive storage and bit depth, read from its headers and a
/// walk over its chunks or blocks, without decoding a single pixel.
///
/// Where ``ImageHeader`` reads a capped prefix on every load, this walks the whole structure
/// once: every GIF block (skipping each frame's LZW data by its sub-block lengths), every PNG
/// chunk, every WebP chunk, the JPEG segments up to the first scan. It costs time linear in the
/// file's length and memory linear in its frame count, never in anything the file claims.
///
/// Per format:
/// - **JPEG**: orientation from the first APP1 `Exif` segment, the ICC profile from APP2
///   `ICC_PROFILE`, progressive from SOF2/6/10/14, the bit depth from the frame's precision.
/// - **PNG and APNG**: bit depth and Adam7 interlacing from `IHDR`, `iCCP`, orientation from
///   `eXIf`; for an APNG, frames and durations from its `fcTL` chunks and the loop count from
///   `acTL`. CRCs are not checked, and an animation whose `fcTL` count differs from `acTL`'s
///   counts as the still default image, as ``ImageDecoder``s show it.
/// - **GIF**: frames counted by walking every block, durations from graphic control
///   extensions, the loop count from the first NETSCAPE2.0 extension (its repeat count + 1, so
///   0 stays forever), interlacing from the first frame.
/// - **WebP**: alpha, animation and ICC profile from the `VP8X` flags, the loop count from
///   `ANIM`, frames and durations from `ANMF` chunks, orientation from `EXIF`.
/// - **TIFF**: orientation from IFD0. **BMP, ICO, SVG**: what ``ImageHeader`` knows, upright
///   and one frame. **HEIF, AVIF**: what ``ImageHeader`` knows; the rest `nil`.
/// - **JPEG XL**: the size, sample depth, animation flag and loop count from the codestream's
///   header (bare or in the container's `jxlc`/`jxlp` box), as libjxl decodes it: the size
///   upright and the orientation `.up`; an animation's frames are not counted (their headers
///   are bit-packed behind the metadata).
///
/// Values follow the decoders' conventions (``AnimatedImage``): a loop count is plays with 0
/// meaning forever; durations are as stored, before ``AnimatedImage/Frame/displayDuration``'s
/// browser rule.
///
/// ```swift
/// let metadata = try ImageMetadata(reading: data)
/// print(metadata.format)                            // gif
/// print(metadata.frameCount ?? 0)                   // 42, without decoding one frame
/// print(metadata.loopCount ?? 0)                    // 0: forever
/// print(metadata.frameDurations.first ?? .zero)     // 0.07 seconds
/// print(metadata.orientedWidth ?? 0)                // the width as displayed
/// ```
public struct ImageMetadata: Sendable, Hashable {
    /// The file format, sniffed from the bytes.
    public var format: ImageFormat
    /// The stored width in pixels, before orientation (for GIF, the logical screen).
    public var pixelWidth: Int?
    /// The stored height in pixels, before orientation.
    public var pixelHeight: Int?
    /// How the stored pixels must be turned to be seen upright; `.up` when the file stores
    /// none, `nil` when the format may store one that is not read here (HEIF).
    public var orientation: ImageOrientation?
    /// Whether the file declares transparency (see ``ImageHeader/hasAlpha``); for GIF, a
    /// transparent colour in any frame.
    public var hasAlpha: Bool?
    /// Whether the file is an animation as decoders play it: more than one frame for GIF and
    /// APNG, the `VP8X` animation flag for WebP.
    public var isAnimated: Bool?
    /// Frames in the file: 1 for a still image, `nil` when the format does not say (TIFF
    /// pages, HEIF, a JPEG XL animation). When ``isTruncated`` is true, a lower bound.
    public var frameCount: Int?
    /// Plays of an animation, 0 meaning forever (an AVIF sequence's from its edit list, forever
    /// without one); `nil` for a still image, or a WebP animation without its `ANIM` chunk.
    public var loopCount: Int?
    /// Each frame's delay as stored, in order; empty for a still image.
    public var frameDurations: [Duration]
    /// Whether the file carries an ICC colour profile (JPEG APP2, PNG `iCCP`, WebP `ICCP`);
    /// present is not valid: a decoder may still drop a damaged one.
    public var hasICCProfile: Bool?
    /// Whether a partial download shows the whole picture coarsely: a progressive JPEG, an
    /// Adam7-interlaced PNG, a GIF whose first frame is interlaced. `false` for WebP, which has
    /// no such mode.
    public var isProgressive: Bool?
    /// Bits per stored sample: JPEG's precision (8 or 12), PNG's `IHDR` bit depth (per palette
    /// index for a palette image), 8 for GIF and WebP, whose colours are always 8-bit, JPEG XL's
    /// stated depth, and for HEIF and AVIF the primary image's `pixi` property or codec
    /// configuration (8, 10 or 12).
    public var bitDepth: Int?
    /// Whether the walk stopped before the end of the structure it reads, because the bytes
    /// ended, a length in the file points past them, or (APNG) a control chunk after the image
    /// data is damaged, which fails the decode: facts after that point are `nil` (or, for
    /// ``frameCount`` and ``frameDurations``, only those seen).
    public var isTruncated: Bool

    /// The width as displayed: ``pixelHeight`` when the orientation turns the image by 90°.
    public var orientedWidth: Int? {
        orientation?.swapsDimensions == true ? pixelHeight : pixelWidth
    }

    /// The height as displayed.
    public var orientedHeight: Int? {
        orientation?.swapsDimensions == true ? pixelWidth : pixelHeight
    }

    package init(
        format: ImageFormat,
        pixelWidth: Int? = nil,
        pixelHeight: Int? = nil,
        orientation: ImageOrientation? = nil,
        hasAlpha: Bool? = nil,
        isAnimated: Bool? = nil,
        frameCount: Int? = nil,
        loopCount: Int? = nil,
        frameDurations: [Duration] = [],
        hasICCProfile: Bool? = nil,
        isProgressive: Bool? = nil,
        bitDepth: Int? = nil,
        isTruncated: Bool = false
    ) {
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.orientation = orientation
        self.hasAlpha = hasAlpha
        self.isAnimated = isAnimated
        self.frameCount = frameCount
        self.loopCount = loopCount
        self.frameDurations = frameDurations
        self.hasICCProfile = hasICCProfile
        self.isProgressive = isProgressive
        self.bitDepth = bitDepth
        self.isTruncated = isTruncated
    }

    /// Reads the metadata of a whole file (or as much of one as has arrived: see
    /// ``isTruncated``).
    ///
    /// - Parameter maximumFrameCount: the most frames counted before giving up, by default
    ///   ``ImageDecodingOptions/maximumFrameCount``: a file with more would not decode either.
    /// - Throws: ``ImageError/unsupportedFormat(_:)`` when the bytes are no format the library
    ///   knows; ``ImageError/tooLarge(_:)`` when the file has more than `maximumFrameCount`
    ///   frames. Damaged or cut-short files do not throw: what was read is returned.
    ///
    /// ```swift
    /// let metadata = try ImageMetadata(reading: bytes)
    /// if metadata.isAnimated == true { print(metadata.frameCount!, "frames") }
    /// ```
    package init(reading bytes: UnsafeRawBufferPointer, maximumFrameCount: Int = ImageDecodingOptions().maximumFrameCount) throws {
        guard let header = HeaderSniffer(bytes, wantsDetails: true).sniff() else {
            throw ImageError.unsupportedFormat("\(bytes.count) bytes in no image format the library knows")
        }
        var reader = MetadataReader(bytes, header: header, maximumFrameCount: maximumFrameCount)
        self = try reader.read()
    }

    /// Reads the metadata of the file in `data`, in place (a `Data`, an `[UInt8]`); the same rules as for a
    /// raw buffer.
    ///
    /// ```swift
    /// let metadata = try ImageMetadata(reading: Data(contentsOf: url, options: .mappedIfSafe))
    /// ```
    public init(reading data: some ContiguousBytes, maximumFrameCount: Int = ImageDecodingOptions().maximumFrameCount) throws {
        self = try data.withUnsafeBytes { try ImageMetadata(reading: $0, maximumFrameCount: maximumFrameCount) }
    }
}
