import Foundation
import WebImageCore

/// Decodes PNG and APNG files with libpng.
///
/// Every colour type and bit depth decodes to ``PixelFormat/rgba8``: palettes and `tRNS`
/// expanded, grey replicated to RGB, 16-bit samples rounded to 8 bits (`v × 255 / 65535`), Adam7
/// interlacing undone. The colour space is the file's `cICP` code points, else its `iCCP`
/// profile, else (without `sRGB`) its `cHRM` primaries with its `gAMA` curve, as a profile in
/// ``ImageContainer/iccProfile`` that the decode converts to sRGB by default; a `gAMA` alone is
/// not applied (the samples are taken as sRGB). An `eXIf` orientation is returned in
/// ``ImageContainer/orientation``.
///
/// APNG frames are composed onto the full canvas with their dispose ops (none, background,
/// previous) and blend ops (source, over); each frame's ``AnimatedImage/Frame/duration`` is
/// `delay_num / delay_den` seconds (a zero denominator means 100), and the loop count is
/// `num_plays` (0 forever). When the default image is not part of the animation (no `fcTL`
/// before `IDAT`), it is skipped, as the APNG specification says. A one-frame APNG is a still
/// image. The control chunks are judged as Chromium judges them (`APNGChunks`): an APNG
/// whose `acTL` is invalid or duplicated, whose sequence numbers skip, repeat or go back, or
/// whose `fcTL` count differs from `acTL`'s frame count is the still image its `IDAT` makes.
///
/// A still, non-interlaced file of at most 8 bits per sample is inflated with libdeflate and
/// unfiltered row by row. With ``ImageDecodingOptions/thumbnail``, one that shrinks by 6× or
/// more is not decoded in full: each row, once unfiltered, is added into the blocks that
/// ``Bitmap/resized(width:height:)`` would average first, so only the reduced bitmap is made
/// (its block reduction tells the registry how to finish it). 16-bit, interlaced
/// and APNG files, and files that path finds damaged, take libpng's decode.
///
/// Hostile input: IHDR's size is checked against ``ImageDecodingOptions/maximumPixelCount``
/// and an APNG's frame count times its canvas against
/// ``ImageDecodingOptions/maximumAnimationBytes`` before anything is allocated; frames must lie
/// inside the canvas; text chunks are never inflated by libpng, and a compressed text chunk
/// that would inflate past 1 MiB (or all of them past 8 MiB) is
/// reported as ``ImageError/tooLarge(_:)``, the way Pillow rejects such zlib bombs. A file
/// truncated inside its image data is ``ImageError/corruptData(_:)``; the incremental decoder
/// shows what did arrive.
///
/// ```swift
/// let container = try PNGDecoder().decode(bytes, options: .init())
/// let pixelFormat = container.image.pixelFormat   // .rgba8
/// let loops = container.animation?.loopCount        // APNG num_plays, 0 = forever
/// ```
public struct PNGDecoder: ImageDecoder {
    /// The most bytes one compressed text chunk (`zTXt`, `iTXt`) may inflate to: 1 MiB, the
    /// limit Pillow applies (`MAX_TEXT_CHUNK`). Text is never kept; it is inflated into a
    /// small scratch buffer only to count it.
    package static let textChunkLimit = 1 << 20
    /// The most bytes all compressed text chunks together may inflate to: 8 MiB.
    package static let totalTextLimit = 8 << 20
    /// The largest ICC profile returned: 16 MiB (real profiles are rarely above 1 MB); a
    /// larger or malformed one is left out, as metadata never stops a decode.
    package static let iccProfileLimit = 16 << 20

    public init() {}

    public var formats: Set<ImageFormat> { [.png, .apng] }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        ColorConversion.apply(try data.withUnsafeBytes { try Self.decode($0, options: options) }, options: options)
    }

    /// Row-by-row previews for plain and interlaced PNG.
    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        PNGIncrementalDecoder(options: options)
    }

    /// APNG frame by frame; `nil` for a still image.
    public func makeAnimationFrameSource(_ data: Data, options: ImageDecodingOptions) throws -> (any AnimationFrameSource)? {
        try APNGFrameSource(data, options: options)
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws -> ImageContainer {
        let file = try PNGFile(bytes)
        try checkLimits(file, bytes, options: options)
        let metadata = Metadata(file, bytes)
        if let animation = file.animation, animation.declaredFrameCount > 0 {
            var renderer = APNGRenderer(file: file, animation: animation, bytes: bytes, options: options)
            var container = try renderer.render()
            container.orientation = metadata.orientation
            container.iccProfile = metadata.iccProfile
            return container
        }
        let header = file.header
        guard file.imageDataBytes >= file.minimumImageDataBytes else {
            // Refused before the bitmap is allocated: a few bytes claiming a huge image.
            throw ImageError.corruptData("PNG: \(file.imageDataBytes) bytes of image data cannot hold \(header.width)×\(header.height) pixels\(file.truncated ? " (the file is truncated)" : "")")
        }
        if let reduction = libdeflateReduction(file, orientation: metadata.orientation, options: options) {
            do {
                let width = (header.width + reduction.x - 1) / reduction.x
                let height = (header.height + reduction.y - 1) / reduction.y
                let image = try Bitmap(width: width, height: height, pixelFormat: .rgba8) { pixels in
                    try LibPNG.decodeReduced(bytes, header: header, reduction: reduction, into: pixels, stride: width * 4)
                }
                var container = ImageContainer(image: image, format: .png, orientation: metadata.orientation, iccProfile: metadata.iccProfile)
                if reduction != (1, 1) {
                    container.blockReduction = BlockReduction(sourceWidth: header.width, sourceHeight: header.height, x: reduction.x, y: reduction.y)
                }
                return container
            } catch ImageError.corruptData {
                // libpng has the last word on damaged files: it tolerates some damage (extra
                // image data, a bad Adler-32) and reports the rest in its own words.
            }
        }
        let image = try Bitmap(width: header.width, height: header.height, pixelFormat: .rgba8) { pixels in
            try LibPNG.decode(bytes, width: header.width, height: header.height, into: pixels, stride: header.width * 4)
        }
        return ImageContainer(image: image, format: .png, orientation: metadata.orientation, iccProfile: metadata.iccProfile)
    }

    /// The box reduction of a decode through libdeflate
    /// (``LibPNG/decodeReduced(_:header:reduction:into:stride:)``), for a still, non-interlaced
    /// image of at most 8 bits per sample; `nil` for the others (16-bit, interlaced and APNG
    /// files), which libpng decodes. A thumbnail shrunk by more than the resampler's Lanczos gap
    /// is reduced by the factors ``Bitmap/resized(width:height:)`` would apply to the full image
    /// on the way to its size, so the result keeps its quality; any other decode is (1, 1), the
    /// full image: libdeflate inflates it two to three times as fast as libpng's zlib.
    static func libdeflateReduction(_ file: PNGFile, orientation: ImageOrientation, options: ImageDecodingOptions) -> (x: Int, y: Int)? {
        let header = file.header
        guard !header.interlaced, header.bitDepth <= 8, !file.declaresAnimation else { return nil }
        guard let thumbnail = options.thumbnail else { return (1, 1) }
        let swaps = options.appliesOrientation && orientation.swapsDimensions
        let oriented = swaps ? (width: header.height, height: header.width) : (width: header.width, height: header.height)
        let size = thumbnail.outputSize(width: oriented.width, height: oriented.height)
        let stored = swaps ? (width: size.height, height: size.width) : size
        var reduction = (x: Bitmap.boxReduction(from: header.width, to: stored.width),
                         y: Bitmap.boxReduction(from: header.height, to: stored.height))
        // The C sums are 32-bit: at most 65536 pixels a block (a 256×256 block), far past any
        // photo's reduction; the Lanczos filter does what remains.
        reduction.x = min(reduction.x, 256)
        reduction.y = min(reduction.y, 256)
        return reduction
    }

    /// The pixel limit, from IHDR, and the zlib bombs hidden in text chunks.
    static func checkLimits(_ file: PNGFile, _ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws {
        let header = file.header
        guard header.width * header.height <= options.maximumPixelCount else {
            throw ImageError.tooLarge("PNG: \(header.width)×\(header.height) is more than the \(options.maximumPixelCount)-pixel limit")
        }
        var total = 0
        for text in file.compressedTexts {
            total += try LibPNG.inflatedSize(bytes, text, limit: textChunkLimit, what: "a compressed text chunk")
            guard total <= totalTextLimit else {
                throw ImageError.tooLarge("PNG: the text chunks inflate to more than \(totalTextLimit) bytes, a decompression bomb")
            }
        }
    }

    /// What the decoder reports besides pixels. Metadata never fails a decode: a malformed
    /// profile or EXIF block is left out.
    struct Metadata {
        var iccProfile: Data?
        var orientation: ImageOrientation = .up

        init(_ file: PNGFile, _ bytes: UnsafeRawBufferPointer) {
            // PNG's order of precedence: cICP, iCCP, sRGB, then cHRM with gAMA.
            if let coded = file.colorChunks.codePoints {
                iccProfile = CodedColorSpace.iccProfile(primaries: coded.primaries, transfer: coded.transfer)
            } else if let profile = file.iccProfile {
                iccProfile = try? LibPNG.inflate(bytes, profile, limit: PNGDecoder.iccProfileLimit, what: "the iCCP profile")
            } else {
                iccProfile = file.colorChunks.profileFromGammaAndChromaticities()
            }
            if let exif = file.exif {
                // Exif.orientation(inExifChunk:) also takes the JPEG "Exif\0\0" prefix some writers keep.
                orientation = Exif.orientation(inExifChunk: UnsafeRawBufferPointer(rebasing: bytes[exif])) ?? .up
            }
        }
    }
}
