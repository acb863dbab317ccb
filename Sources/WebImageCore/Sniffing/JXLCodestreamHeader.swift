/// The facts at the start of a JPEG XL codestream (ISO/IEC 18181-1, D.2 and A.6): the size
/// header and the image metadata up to the sample depth. Read by the sniffer and by
/// ``MetadataReader``, bounded like every walk there: a few dozen bits, and at most
/// ``maximumBoxes`` container boxes to find them.
struct JXLCodestreamHeader {
    /// The size as stored, before the orientation.
    var storedWidth: Int, storedHeight: Int
    /// EXIF's values, 1 to 8.
    var orientation: Int
    var bitDepth: Int
    /// `nil` for a still image; plays of the animation, 0 forever.
    var loopCount: Int?

    /// The size as libjxl decodes it by default, the orientation applied.
    var uprightWidth: Int { orientation >= 5 ? storedHeight : storedWidth }
    var uprightHeight: Int { orientation >= 5 ? storedWidth : storedHeight }

    static let maximumBoxes = 64

    /// The header of the codestream in `reader`'s bytes, a bare one or one in a container;
    /// `nil` when the bytes end first or are not one.
    static func read(_ reader: ByteReader) -> JXLCodestreamHeader? {
        guard let start = codestreamStart(reader), reader.u8(start) == 0xFF, reader.u8(start + 1) == 0x0A else { return nil }
        var bits = JXLBitReader(reader, offset: start + 2)
        return bits.codestreamHeader()
    }

    /// Where the codestream starts: 0 in a bare file; in the container, the payload of the
    /// `jxlc` box, or of the first `jxlp` box after its 4-byte part index.
    private static func codestreamStart(_ reader: ByteReader) -> Int? {
        guard reader.u8(0) != 0xFF else { return 0 }
        var offset = 0
        for _ in 0..<maximumBoxes {
            guard let size32 = reader.u32be(offset), let type = reader.u32be(offset + 4) else { return nil }
            var header = 8
            var size = Int(size32)
            if size32 == 1 {
                // A 64-bit size: only a high word of 0 is a size a file of ours can have.
                guard reader.u32be(offset + 8) == 0, let low = reader.u32be(offset + 12) else { return nil }
                size = Int(low)
                header = 16
            }
            switch type {
            case 0x6A78_6C63: return offset + header // "jxlc"
            case 0x6A78_6C70: return offset + header + 4 // "jxlp"
            default: break
            }
            guard size >= header else { return nil } // 0 (to the end of the file) or damaged
            offset += size
        }
        return nil
    }
}
