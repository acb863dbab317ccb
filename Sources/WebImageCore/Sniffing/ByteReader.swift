/// Bounds-checked reads of fixed-width integers from borrowed bytes.
///
/// Every read takes an absolute offset and returns `nil` when any byte of the value lies
/// outside the buffer, so the sniffers can follow offsets and lengths taken from hostile input
/// without a separate check per step. Offsets may be negative or far past the end; the
/// comparisons are written as `offset <= count - width` so they cannot overflow.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var count: Int { bytes.count }

    /// Whether `width` bytes starting at `offset` are all inside the buffer.
    @inline(__always)
    func contains(_ offset: Int, width: Int) -> Bool {
        offset >= 0 && width >= 0 && offset <= count - width
    }

    @inline(__always)
    func u8(_ offset: Int) -> UInt8? {
        contains(offset, width: 1) ? bytes[offset] : nil
    }

    @inline(__always)
    func u16be(_ offset: Int) -> UInt16? {
        contains(offset, width: 2) ? UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) : nil
    }

    @inline(__always)
    func u16le(_ offset: Int) -> UInt16? {
        contains(offset, width: 2) ? UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) : nil
    }

    @inline(__always)
    func u24le(_ offset: Int) -> UInt32? {
        guard contains(offset, width: 3) else { return nil }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
    }

    @inline(__always)
    func u32be(_ offset: Int) -> UInt32? {
        contains(offset, width: 4) ? UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) : nil
    }

    @inline(__always)
    func u32le(_ offset: Int) -> UInt32? {
        contains(offset, width: 4) ? UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) : nil
    }

    /// Reads a 16- or 32-bit value in the byte order a TIFF file declares.
    @inline(__always)
    func u16(_ offset: Int, bigEndian: Bool) -> UInt16? {
        bigEndian ? u16be(offset) : u16le(offset)
    }

    @inline(__always)
    func u32(_ offset: Int, bigEndian: Bool) -> UInt32? {
        bigEndian ? u32be(offset) : u32le(offset)
    }
}

/// Four-character codes (PNG chunk types, RIFF and ISO-BMFF box types, brands) as the
/// big-endian `UInt32` they read as, so matching one is a single integer comparison.
enum FourCC {
    static let ihdr: UInt32 = 0x4948_4452 // "IHDR"
    static let idat: UInt32 = 0x4944_4154 // "IDAT"
    static let iend: UInt32 = 0x4945_4E44 // "IEND"
    static let actl: UInt32 = 0x6163_544C // "acTL"
    static let trns: UInt32 = 0x7452_4E53 // "tRNS"
    static let iccp: UInt32 = 0x6943_4350 // "iCCP"
    static let exif: UInt32 = 0x6558_4966 // "eXIf"
    static let fctl: UInt32 = 0x6663_544C // "fcTL"
    static let fdat: UInt32 = 0x6664_4154 // "fdAT"
    static let riff: UInt32 = 0x5249_4646 // "RIFF"
    static let webp: UInt32 = 0x5745_4250 // "WEBP"
    static let vp8: UInt32 = 0x5650_3820 // "VP8 "
    static let vp8l: UInt32 = 0x5650_384C // "VP8L"
    static let vp8x: UInt32 = 0x5650_3858 // "VP8X"
    static let ftyp: UInt32 = 0x6674_7970 // "ftyp"
    static let jxl: UInt32 = 0x4A58_4C20 // "JXL "
}
