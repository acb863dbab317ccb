import CCodecShims
import CTurboJPEG
import Foundation
import WebImageCore

/// Decodes JPEG with libjpeg-turbo: baseline, extended (12-bit quantisation tables) and
/// progressive; grey, RGB, YCbCr, and CMYK or YCCK (converted to RGB).
///
/// The result is ``PixelFormat/rgba8`` with alpha 255. The EXIF orientation (APP1) is
/// reported in ``ImageContainer/orientation`` and the ICC profile (APP2 chunks, reassembled)
/// in ``ImageContainer/iccProfile``. By default (``ImageDecodingOptions/colorSpace`` `.sRGB`)
/// the pixels are converted from an RGB profile to sRGB and the profile is dropped; with
/// `.preserve` they are left as stored and the profile is carried. With ``ImageDecodingOptions/thumbnail``, the decode itself
/// shrinks by the DCT (a scale of M/8) to the smallest size not below the thumbnail, so a
/// 256-pixel thumbnail of a 5120×2880 photo decodes 640×360 pixels, never the full bitmap;
/// at 1/8 a progressive file's AC scans are not even read (see `JPEGScanFilter`).
///
/// CMYK: four-channel files are read as Adobe's inverted CMYK (0 is full ink), which Photoshop
/// and nearly every CMYK JPEG writes, and converted with `R = C·K/255` (likewise G, B): the
/// reading of Chrome, Firefox and Pillow, applied whether or not the Adobe APP14 marker is
/// present, so an image looks as it does in a browser. The marker's transform flag tells
/// YCCK (2) from CMYK (0). A file with a CMYK profile is converted through it instead (lcms2,
/// perceptual intent), as Photoshop and Pillow's ImageCms do, unless `.preserve` keeps the
/// stored values: then the naive conversion's pixels come with the profile, as before.
///
/// Damaged files: a file that ends early, or whose compressed data is corrupt past the
/// header, decodes as far as its data goes, the rest mid-grey, as browsers show it (libjpeg
/// reports this as a warning), with ``ImageContainer/isComplete`` `false`. A file whose header cannot be read, or that ends before any
/// image data, throws ``ImageError/corruptData(_:)``.
///
/// ```swift
/// let registry = CoderRegistry(decoders: [JPEGDecoder()])
/// var options = ImageDecodingOptions()
/// options.thumbnail = .maxPixelSize(256)
/// let thumbnail = try registry.decode(bytes, options: options)   // upright, 256 px
/// ```
public struct JPEGDecoder: ImageDecoder {
    /// Which libjpeg-turbo interface decodes a full (non-incremental) file. Internal: tests
    /// force the libjpeg path to check both agree.
    enum Engine: Sendable {
        /// TurboJPEG for grey, RGB and YCbCr; libjpeg for CMYK and YCCK.
        case automatic
        /// libjpeg for everything.
        case libjpeg
    }

    /// Convert the pixels from the embedded ICC profile to sRGB even when the options ask to
    /// preserve them: what the deprecated `convertsToSRGB` set (Deprecations.swift).
    var alwaysConvertsToSRGB = false

    var engine: Engine = .automatic

    public var formats: Set<ImageFormat> { [.jpeg] }

    public init() {}

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        try data.withUnsafeBytes { bytes in
            guard bytes.count > 0 else { throw ImageError.corruptData("JPEG: no bytes") }
            let decompressor = try LibJPEGDecompressor()
            decompressor.borrowInput(bytes)
            // Complete input never suspends: running out inserts an end-of-image marker.
            guard let info = try decompressor.readHeader() else {
                throw ImageError.corruptData("JPEG: the header is incomplete")
            }
            let header = try JPEGHeader(info, decompressor: decompressor, options: options)
            guard decompressor.scanBytes > 2 else {
                throw ImageError.corruptData("JPEG: the file ends before any image data")
            }
            let bitmap: Bitmap, complete: Bool
            let cmyk = Self.cmykTransform(header, options: options, always: alwaysConvertsToSRGB)
            if header.eighths == 1, header.info.progressive != 0, engine == .automatic,
               let dcScans = JPEGScanFilter.dcScansOnly(bytes) {
                (bitmap, complete) = try Self.decodeDCScans(dcScans, header: header, cmyk: cmyk)
            } else if header.isCMYK || engine == .libjpeg {
                bitmap = try Self.decodeWithLibJPEG(decompressor, header: header, cmyk: cmyk)
                complete = decompressor.warnings == 0
            } else if let undamaged = try Self.decodeWithTurboJPEG(bytes, header: header) {
                (bitmap, complete) = (undamaged, true)
            } else {
                // Damaged data: libjpeg's own loop knows which rows it wrote (see decodeWithTurboJPEG).
                bitmap = try Self.decodeWithLibJPEG(decompressor, header: header)
                complete = decompressor.warnings == 0
            }
            var container = ImageContainer(
                image: bitmap,
                format: .jpeg,
                orientation: header.orientation,
                iccProfile: header.iccProfile
            )
            container.isComplete = complete
            return ColorConversion.apply(container, options: options, always: alwaysConvertsToSRGB)
        }
    }

    /// Progressive JPEG through libjpeg's buffered-image mode, previews each time a scan
    /// completes; single-scan JPEG row by row.
    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        JPEGIncrementalDecoder(options: options, convertsToSRGB: alwaysConvertsToSRGB)
    }

    /// The transform through a CMYK file's own profile, when the decode converts to sRGB and
    /// the file has one; `nil` for the naive conversion.
    static func cmykTransform(_ header: JPEGHeader, options: ImageDecodingOptions, always: Bool) -> SRGBTransform? {
        guard header.isCMYK, options.colorSpace == .sRGB || always else { return nil }
        return SRGBTransform.cmyk(profile: header.iccProfile)
    }

    /// The whole file at the header's scale, through the libjpeg decompressor that read it;
    /// CMYK through `cmyk` when given.
    static func decodeWithLibJPEG(_ decompressor: LibJPEGDecompressor, header: JPEGHeader, cmyk: SRGBTransform? = nil) throws -> Bitmap {
        if cmyk != nil { decompressor.keepCMYK() }
        guard let (width, height) = try decompressor.start(eighths: header.eighths, buffered: false) else {
            throw ImageError.corruptData("JPEG: decompression could not start")
        }
        let bitmap = try Bitmap(width: width, height: height, pixelFormat: .rgba8) { pixels in
            let (complete, _) = try decompressor.readRows(into: pixels, bytesPerRow: width * 4)
            guard complete else { throw ImageError.corruptData("JPEG: decompression stopped early") }
        }
        return cmyk?.apply(bitmap) ?? bitmap
    }

    /// A 1/8-scale decode of a progressive file's DC scans alone (see `JPEGScanFilter`), and
    /// whether it met no damage.
    static func decodeDCScans(_ data: Data, header: JPEGHeader, cmyk: SRGBTransform?) throws -> (Bitmap, complete: Bool) {
        try data.withUnsafeBytes { bytes in
            let decompressor = try LibJPEGDecompressor()
            decompressor.borrowInput(bytes)
            guard try decompressor.readHeader() != nil else {
                throw ImageError.corruptData("JPEG: the header is incomplete")
            }
            decompressor.setBlockSmoothing(false)
            return (try decodeWithLibJPEG(decompressor, header: header, cmyk: cmyk), decompressor.warnings == 0)
        }
    }

    /// Grey, RGB and YCbCr through TurboJPEG straight into the bitmap, or `nil` when libjpeg
    /// reported anything, a warning included. TurboJPEG reads the header again (cheap); scaling
    /// is chosen by giving it the scaled size.
    ///
    /// Damage is left to the libjpeg path because TurboJPEG cannot say which rows it wrote: once
    /// a warning has been raised, `tjGetErrorCode` answers `TJERR_WARNING` even for a fatal error
    /// after it, which stopped the decode with rows never written. Fuzz finding #12: a
    /// progressive file with stray bytes before one scan (a warning) and impossible parameters
    /// in the next (fatal) came back as a whole bitmap of uninitialised memory, whatever the
    /// heap held, served as an image.
    static func decodeWithTurboJPEG(_ bytes: UnsafeRawBufferPointer, header: JPEGHeader) throws -> Bitmap? {
        guard let handle = tjInitDecompress() else {
            throw ImageError.tooLarge("JPEG: out of memory creating a TurboJPEG decompressor")
        }
        defer { tjDestroy(handle) }
        let width = JPEGHeader.scaled(header.width, eighths: header.eighths)
        let height = JPEGHeader.scaled(header.height, eighths: header.eighths)
        var clean = true
        let bitmap = try Bitmap(width: width, height: height, pixelFormat: .rgba8) { pixels in
            let result = tjDecompress2(
                handle,
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt(bytes.count),
                pixels.baseAddress?.assumingMemoryBound(to: UInt8.self),
                Int32(width), Int32(width * 4), Int32(height),
                Int32(TJPF_RGBA.rawValue),
                // TJFLAG_LIMITSCANS: refuse more than 500 progressive scans, as the libjpeg path does.
                TJFLAG_LIMITSCANS
            )
            if result != 0 {
                // Not a warning at all: no second decode can do better.
                if tjGetErrorCode(handle) != Int32(TJERR_WARNING.rawValue) {
                    throw ImageError.corruptData("JPEG: \(String(cString: tjGetErrorStr2(handle)))")
                }
                // The buffer is dropped; zeroed so that it is initialised as `Bitmap` requires.
                pixels.initializeMemory(as: UInt8.self, repeating: 0)
                clean = false
            }
        }
        return clean ? bitmap : nil
    }
}
