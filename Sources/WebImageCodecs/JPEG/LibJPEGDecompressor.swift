import CCodecShims
import Foundation
import WebImageCore

/// One libjpeg decompression through the C shim (`wi_jpeg.c`), which owns the `setjmp` that
/// libjpeg's error handling needs. Not `Sendable`: one decode owns it.
///
/// Every failure becomes ``ImageError/corruptData(_:)`` with libjpeg's message (or
/// ``ImageError/unsupportedFormat(_:)`` for a valid variant libjpeg-turbo's 8-bit build cannot
/// decode: 12-bit, lossless, hierarchical); after one, the shim refuses every further call.
final class LibJPEGDecompressor {
    private let decoder: OpaquePointer

    init() throws {
        guard let decoder = wi_jpeg_create() else {
            throw ImageError.tooLarge("JPEG: out of memory creating a decompressor")
        }
        self.decoder = decoder
    }

    deinit {
        wi_jpeg_destroy(decoder)
    }

    /// Decodes from complete bytes the caller keeps alive (and unmoved) while this object is
    /// used: a full decode borrows the `Data`'s storage instead of copying it.
    func borrowInput(_ bytes: UnsafeRawBufferPointer) {
        wi_jpeg_set_input(decoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// Copies the next chunk of an arriving file.
    func append(_ chunk: Data) throws {
        let status = chunk.withUnsafeBytes { bytes in
            wi_jpeg_append(decoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
        _ = try check(status)
    }

    /// No more bytes will come: running out now ends the image.
    func endInput() {
        wi_jpeg_end_input(decoder)
    }

    /// The header, or `nil` when the bytes so far stop before its end.
    func readHeader() throws -> wi_jpeg_info? {
        var info = wi_jpeg_info()
        return try check(wi_jpeg_read_header(decoder, &info)) ? info : nil
    }

    /// Bytes received after the header: 2 or fewer means the file holds no image data at all
    /// (at most an end-of-image marker).
    var scanBytes: Int { wi_jpeg_scan_bytes(decoder) }

    /// Bytes of appended input held because libjpeg has not consumed them yet.
    var bufferedInputBytes: Int { wi_jpeg_buffered_bytes(decoder) }

    /// The orientation from the first APP1 `Exif` segment, if any and valid.
    var exifOrientation: ImageOrientation? {
        var count = 0
        guard let bytes = wi_jpeg_exif(decoder, &count) else { return nil }
        return Exif.orientation(inTIFF: UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The ICC profile reassembled from its APP2 chunks, if present and consistent.
    func iccProfile() -> Data? {
        var count = 0
        guard let bytes = wi_jpeg_copy_icc(decoder, &count) else { return nil }
        defer { wi_jpeg_free(bytes) }
        return count > 0 ? Data(bytes: bytes, count: count) : nil
    }

    /// Block smoothing (on by default) estimates the coefficients a progressive file has not
    /// sent yet; off for a decode of the DC scans alone.
    func setBlockSmoothing(_ enabled: Bool) {
        wi_jpeg_set_block_smoothing(decoder, enabled ? 1 : 0)
    }

    /// Leaves CMYK rows as stored (see `wi_jpeg_set_keeps_cmyk`).
    func keepCMYK() {
        wi_jpeg_set_keeps_cmyk(decoder, 1)
    }

    /// Starts decompressing at `eighths`/8 scale; the output size, or `nil` if suspended.
    func start(eighths: Int, buffered: Bool) throws -> (width: Int, height: Int)? {
        var width: UInt32 = 0, height: UInt32 = 0
        guard try check(wi_jpeg_start(decoder, Int32(eighths), buffered ? 1 : 0, &width, &height)) else { return nil }
        return (Int(width), Int(height))
    }

    /// Non-buffered mode: decodes as many rows as the bytes allow into `rgba`.
    func readRows(into rgba: UnsafeMutableRawBufferPointer, bytesPerRow: Int) throws -> (complete: Bool, rows: Int) {
        var rows: UInt32 = 0
        let complete = try check(wi_jpeg_read_rows(decoder, rgba.baseAddress?.assumingMemoryBound(to: UInt8.self), bytesPerRow, &rows))
        return (complete, Int(rows))
    }

    /// Buffered mode: takes in every byte available.
    func consume() throws -> (completeScans: Int, finished: Bool) {
        var scans: Int32 = 0, finished: Int32 = 0
        _ = try check(wi_jpeg_consume(decoder, &scans, &finished))
        return (Int(scans), finished != 0)
    }

    /// Buffered mode: an output pass showing scans up to `scan` (which must be complete).
    func output(scan: Int, into rgba: UnsafeMutableRawBufferPointer, bytesPerRow: Int) throws {
        let status = wi_jpeg_output(decoder, Int32(scan), rgba.baseAddress?.assumingMemoryBound(to: UInt8.self), bytesPerRow)
        guard try check(status) else {
            throw ImageError.corruptData("JPEG: an output pass ran out of input")
        }
    }

    /// Warnings libjpeg raised: data it decoded past (truncation, corrupt entropy-coded data).
    var warnings: Int { Int(wi_jpeg_warnings(decoder)) }

    var message: String { String(cString: wi_jpeg_message(decoder)) }

    /// `true` for done, `false` for suspended; throws for an error.
    private func check(_ status: wi_jpeg_status) throws -> Bool {
        switch status {
        case WI_JPEG_OK: return true
        case WI_JPEG_SUSPENDED: return false
        default:
            if wi_jpeg_failed_unsupported(decoder) != 0 {
                throw ImageError.unsupportedFormat("JPEG: \(message)")
            }
            throw ImageError.corruptData("JPEG: \(message)")
        }
    }
}
