/// PNG's chunk CRC (CRC-32, ISO 3309: the polynomial zlib's `crc32` uses), for the metadata
/// walk's checks of the small APNG control chunks (`acTL`, `fcTL`) the decoder checks too: the
/// decoder sets a damaged one aside, so the walk must see the same damage to count the same
/// frames. A byte at a time: the chunks it is asked about are 8 and 26 bytes.
enum PNGCRC {
    private static let table: [UInt32] = (UInt32(0)..<256).map { index -> UInt32 in
        var value = index
        for _ in 0..<8 {
            value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1
        }
        return value
    }

    /// The CRC of `bytes[range]`.
    static func checksum(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for index in range {
            crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// Whether the CRC stored after the chunk data at `data` matches the chunk's type and
    /// data. The caller has checked that the 4 bytes of type before and CRC after are there.
    static func matches(_ data: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Bool {
        let stored = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: data.upperBound, as: UInt32.self))
        return checksum(bytes, (data.lowerBound - 4)..<data.upperBound) == stored
    }
}
