import CCodecShims
import Foundation
import WebImageCore

/// What a JPEG decode needs to know before allocating anything: the stored size and colour
/// model (from libjpeg's header read), the EXIF orientation and ICC profile (from the APP
/// markers libjpeg saved), and the DCT scale to decode at. Shared by the full and the
/// incremental decoder, so both refuse, scale and convert alike.
struct JPEGHeader {
    /// Stored size, before orientation.
    var width: Int
    var height: Int
    var info: wi_jpeg_info
    var orientation: ImageOrientation
    var iccProfile: Data?
    /// Decode at `eighths`/8 of the stored size (8 = full size).
    var eighths: Int

    /// Reads what `decompressor` parsed and checks it against `options`.
    ///
    /// - Throws: ``ImageError/tooLarge(_:)`` past ``ImageDecodingOptions/maximumPixelCount``,
    ///   ``ImageError/unsupportedFormat(_:)`` for a colour model other than grey, RGB, YCbCr,
    ///   CMYK or YCCK, ``ImageError/corruptData(_:)`` for a zero dimension.
    init(_ info: wi_jpeg_info, decompressor: LibJPEGDecompressor, options: ImageDecodingOptions) throws {
        width = Int(info.width)
        height = Int(info.height)
        self.info = info
        guard width > 0, height > 0 else {
            throw ImageError.corruptData("JPEG: the frame header says \(width)×\(height)")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= options.maximumPixelCount else {
            throw ImageError.tooLarge("JPEG of \(width)×\(height) pixels is over the limit of \(options.maximumPixelCount)")
        }
        guard info.color != Int32(WI_JPEG_COLOR_UNKNOWN.rawValue) else {
            throw ImageError.unsupportedFormat("JPEG with \(info.components) colour components in an unknown colour model")
        }
        orientation = decompressor.exifOrientation ?? .up
        iccProfile = decompressor.iccProfile()
        let oriented = options.appliesOrientation && orientation.swapsDimensions
        eighths = Self.eighths(width: oriented ? height : width, height: oriented ? width : height, thumbnail: options.thumbnail)
    }

    /// CMYK and YCCK files go through libjpeg (TurboJPEG 2.1 cannot convert them to RGB).
    var isCMYK: Bool {
        info.color == Int32(WI_JPEG_COLOR_CMYK.rawValue) || info.color == Int32(WI_JPEG_COLOR_YCCK.rawValue)
    }

    /// The output size at `eighths`/8, as libjpeg computes it (rounded up).
    static func scaled(_ dimension: Int, eighths: Int) -> Int {
        (dimension * eighths + 7) / 8
    }

    /// The smallest DCT scale M/8 whose output, in the orientation the caller sees, is at
    /// least the thumbnail size computed on the full oriented size: the decode then never
    /// materialises more than it needs, and the registry's resampling to the exact size only
    /// ever shrinks. Of the scales giving that same output size, the largest, which keeps more
    /// of the DCT (for tiny images several scales round to the same size), and is the one
    /// TurboJPEG picks for an output size.
    static func eighths(width: Int, height: Int, thumbnail: ImageDecodingOptions.Thumbnail?) -> Int {
        guard let thumbnail else { return 8 }
        let target = thumbnail.outputSize(width: width, height: height)
        func size(_ eighths: Int) -> (Int, Int) { (scaled(width, eighths: eighths), scaled(height, eighths: eighths)) }
        var chosen = 8
        for candidate in 1...8 {
            let (w, h) = size(candidate)
            if w >= target.width && h >= target.height {
                chosen = candidate
                break
            }
        }
        while chosen < 8 && size(chosen + 1) == size(chosen) { chosen += 1 }
        return chosen
    }
}
