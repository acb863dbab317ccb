/// The marker segments of a JPEG file, from just after SOI up to the first scan, read one at a
/// time without touching entropy-coded data.
///
/// Shared by the header sniffer (which stops at the frame header) and ``ImageMetadata`` (which
/// also reads the APP1 EXIF and APP2 ICC segments on the way). Bounded whatever the file says:
/// every pass reads a marker (counted against ``HeaderSniffer/jpegMaxSegments``) or skips a
/// stray byte (counted against ``HeaderSniffer/jpegMaxStrayBytes``), and each segment moves the
/// walk forward by its length, at least 2 bytes.
///
/// ```swift
/// var walk = JPEGSegmentWalk(reader)
/// while let segment = walk.next() {
///     if segment.code == 0xE1 { /* APP1 at segment.payloadOffset */ }
/// }
/// walk.stop   // .scan: the first SOS was reached, every header segment seen
/// ```
struct JPEGSegmentWalk {
    /// One segment that has a length: its marker code and where its length field starts.
    struct Segment {
        var code: UInt8
        /// The offset of the 2-byte length, which counts itself: the payload is the
        /// `length - 2` bytes after it.
        var lengthOffset: Int
        /// The segment's length field (at least 2).
        var length: Int

        /// The first byte after the length field.
        var payloadOffset: Int { lengthOffset + 2 }
        var payloadLength: Int { length - 2 }
    }

    /// Why the walk ended.
    enum Stop: Equatable {
        /// The first SOS marker: the scan data starts, and every header segment has been seen.
        case scan
        /// EOI before any scan.
        case endOfImage
        /// The bytes ended, a length was impossible, or a cap was reached: segments may have
        /// been missed.
        case incomplete
    }

    private let reader: ByteReader
    private var offset = 2
    private var segments = 0
    private var stray = 0
    /// `nil` while the walk can go on.
    private(set) var stop: Stop?

    init(_ reader: ByteReader) {
        self.reader = reader
    }

    /// The next segment with a length, or `nil` when the walk has stopped (see ``stop``).
    mutating func next() -> Segment? {
        while stop == nil {
            guard segments < HeaderSniffer.jpegMaxSegments, stray <= HeaderSniffer.jpegMaxStrayBytes,
                  let code = nextMarker()
            else { return end(.incomplete) }
            switch code {
            case 0x00:
                stray += 2 // a stuffed 0xFF inside stray data, not a marker
                continue
            case 0x01, 0xD0...0xD8:
                segments += 1 // TEM, RSTn, SOI: markers without a length
                continue
            case 0xD9:
                return end(.endOfImage)
            case 0xDA:
                return end(.scan)
            default:
                segments += 1
            }
            guard let length = reader.u16be(offset), length >= 2 else { return end(.incomplete) }
            let segment = Segment(code: code, lengthOffset: offset, length: Int(length))
            offset += Int(length)
            return segment
        }
        return nil
    }

    /// The code after the next 0xFF (and any 0xFF fill bytes), skipping stray bytes before it;
    /// `nil` when the bytes or the stray budget run out. A code of 0x00 is returned as such.
    private mutating func nextMarker() -> UInt8? {
        // A marker is 0xFF, any number of 0xFF fill bytes, then a code other than 0x00.
        // Anything else here is stray data, skipped byte by byte.
        while stray <= HeaderSniffer.jpegMaxStrayBytes {
            guard let byte = reader.u8(offset) else { return nil }
            offset += 1
            guard byte == 0xFF else {
                stray += 1
                continue
            }
            guard var code = reader.u8(offset) else { return nil }
            offset += 1
            while code == 0xFF {
                stray += 1
                guard stray <= HeaderSniffer.jpegMaxStrayBytes, let next = reader.u8(offset) else { return nil }
                offset += 1
                code = next
            }
            return code
        }
        return nil
    }

    private mutating func end(_ reason: Stop) -> Segment? {
        stop = reason
        return nil
    }
}
