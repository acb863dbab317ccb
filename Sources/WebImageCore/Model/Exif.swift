import Foundation

/// Reads the one EXIF fact an image loader needs, the orientation, from a TIFF-structured EXIF
/// block (what follows `Exif\0\0` in a JPEG's APP1 segment, or a WebP's `EXIF` chunk).
///
/// Bounded and safe on hostile input: every offset is checked, and only IFD0 is read.
///
/// ```swift
/// let orientation = Exif.orientation(inTIFF: exifPayload) ?? .up   // the APP1 bytes after "Exif\0\0"
/// ```
package enum Exif {
    /// The orientation tag of IFD0, or `nil` when there is none, or it is out of range, or the
    /// block is malformed.
    package static func orientation(inTIFF bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        guard bytes.count >= 8 else { return nil }
        let littleEndian: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ offset: Int) -> Int? {
            guard offset >= 0, offset + 2 <= bytes.count else { return nil }
            let a = Int(bytes[offset]), b = Int(bytes[offset + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        func u32(_ offset: Int) -> Int? {
            guard let low = u16(littleEndian ? offset : offset + 2), let high = u16(littleEndian ? offset + 2 : offset) else { return nil }
            return low | high << 16
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for index in 0..<min(count, 512) {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            if tag == 0x0112 {
                guard let type = u16(entry + 2), type == 3, let value = u16(entry + 8) else { return nil }
                return ImageOrientation(exifValue: value)
            }
        }
        return nil
    }

    /// The orientation in an EXIF block stored on its own (PNG's `eXIf` chunk, WebP's `EXIF`
    /// chunk). Both specifications say the block is the TIFF structure itself, but some writers
    /// (older ExifTool, some phone software) copy the JPEG APP1 payload with its `Exif\0\0`
    /// prefix; both are accepted.
    ///
    /// ```swift
    /// let orientation = exifChunk.withUnsafeBytes { Exif.orientation(inExifChunk: $0) } ?? .up
    /// ```
    package static func orientation(inExifChunk bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        let prefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0] // "Exif\0\0"
        if bytes.count >= prefix.count, bytes.prefix(prefix.count).elementsEqual(prefix) {
            return orientation(inTIFF: UnsafeRawBufferPointer(rebasing: bytes.dropFirst(prefix.count)))
        }
        return orientation(inTIFF: bytes)
    }

    /// The same, from `Data` or `[UInt8]`.
    package static func orientation(inTIFF bytes: some ContiguousBytes) -> ImageOrientation? {
        bytes.withUnsafeBytes { orientation(inTIFF: $0) }
    }
}
