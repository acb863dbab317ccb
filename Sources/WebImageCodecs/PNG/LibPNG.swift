import CCodecShims
// Imported for its module map's link lines (libpng16 and zlib), which the C in CCodecShims needs.
import CPNG
import Foundation
import WebImageCore

/// Swift's side of `wi_png.h`: libpng and zlib calls with their failures turned into
/// ``ImageError``s.
enum LibPNG {
    /// Decodes a complete PNG datastream into `pixels` (`height` rows of `stride` bytes) as
    /// 8-bit straight-alpha RGBA. `width` and `height` must be what IHDR says.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, width: Int, height: Int,
        into pixels: UnsafeMutableRawBufferPointer, stride: Int, ignoringCRC: Bool = false
    ) throws {
        precondition(pixels.count >= stride * height && stride >= width * 4)
        var job = wi_png_decode_job()
        job.data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        job.size = bytes.count
        job.pixels = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
        job.stride = stride
        job.width = UInt32(width)
        job.height = UInt32(height)
        job.ignore_crc = ignoringCRC ? 1 : 0
        let status = wi_png_decode(&job)
        guard status != WI_PNG_OK else { return }
        let message = withUnsafeBytes(of: &job.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        throw error(status, "PNG: \(message)")
    }

    /// Decodes a non-interlaced PNG of at most 8 bits per sample into a box-reduced 8-bit
    /// straight-alpha RGBA `pixels` (`ceil(height / reduction.y)` rows of `stride` bytes, each
    /// `ceil(width / reduction.x)` pixels), never making the full-size bitmap; see
    /// `wi_png_decode_reduced`. The header values must be IHDR's.
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` when the image data does not inflate to exactly
    ///   the scanlines IHDR describes, ``ImageError/tooLarge(_:)`` when memory runs out.
    static func decodeReduced(
        _ bytes: UnsafeRawBufferPointer, header: PNGFile.Header, reduction: (x: Int, y: Int),
        into pixels: UnsafeMutableRawBufferPointer, stride: Int
    ) throws {
        let outputWidth = (header.width + reduction.x - 1) / reduction.x
        let outputHeight = (header.height + reduction.y - 1) / reduction.y
        precondition(pixels.count >= stride * outputHeight && stride >= outputWidth * 4)
        var job = wi_png_reduce_job()
        job.data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        job.size = bytes.count
        job.width = UInt32(header.width)
        job.height = UInt32(header.height)
        job.bit_depth = header.bitDepth
        job.color_type = header.colorType
        job.reduce_x = UInt32(reduction.x)
        job.reduce_y = UInt32(reduction.y)
        job.pixels = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
        job.stride = stride
        let status = wi_png_decode_reduced(&job)
        guard status != WI_PNG_OK else { return }
        let message = withUnsafeBytes(of: &job.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        throw error(status, "PNG: \(message)")
    }

    /// Inflates the zlib stream in `range` of `bytes`, up to `limit` bytes of output.
    ///
    /// - Throws: ``ImageError/tooLarge(_:)`` past `limit`, ``ImageError/corruptData(_:)`` for a
    ///   bad stream.
    static func inflate(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, limit: Int, what: String) throws -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = wi_png_inflate(pointer(bytes, range.lowerBound), range.count, limit, &output, &size)
        guard status == WI_PNG_OK, let output else {
            throw error(status, status == WI_PNG_TOO_LARGE ? "PNG: \(what) inflates to more than \(limit) bytes" : "PNG: \(what) is not a valid zlib stream")
        }
        defer { wi_png_free(output) }
        return Data(bytes: output, count: size)
    }

    /// How many bytes the zlib stream in `range` inflates to, counted without keeping them.
    ///
    /// - Throws: ``ImageError/tooLarge(_:)`` past `limit`, ``ImageError/corruptData(_:)``.
    static func inflatedSize(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, limit: Int, what: String) throws -> Int {
        var size = 0
        let status = wi_png_inflate(pointer(bytes, range.lowerBound), range.count, limit, nil, &size)
        guard status == WI_PNG_OK else {
            throw error(status, status == WI_PNG_TOO_LARGE ? "PNG: \(what) inflates to more than \(limit) bytes, a decompression bomb" : "PNG: \(what) is not a valid zlib stream")
        }
        return size
    }

    /// The CRC-32 of `range` of `bytes`.
    static func crc32(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt32 {
        wi_png_crc32(0, pointer(bytes, range.lowerBound), range.count)
    }

    static func crc32(_ bytes: [UInt8], from start: Int, count: Int) -> UInt32 {
        bytes.withUnsafeBytes { wi_png_crc32(0, pointer($0, start), count) }
    }

    static func error(_ status: wi_png_status, _ message: String) -> ImageError {
        switch status {
        case WI_PNG_TOO_LARGE: .tooLarge(message)
        case WI_PNG_NO_MEMORY: .tooLarge("\(message) (out of memory)")
        default: .corruptData(message)
        }
    }

    @inline(__always)
    private static func pointer(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UnsafePointer<UInt8>? {
        bytes.baseAddress.map { ($0 + offset).assumingMemoryBound(to: UInt8.self) }
    }
}
