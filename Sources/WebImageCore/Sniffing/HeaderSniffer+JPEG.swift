extension HeaderSniffer {
    /// Segments walked before giving up on finding the frame header. Real files have a
    /// handful to a few dozen (APPn metadata, an ICC profile split over APP2 segments,
    /// tables); 1024 leaves room for a 60 MB profile while bounding a file of empty segments.
    static let jpegMaxSegments = 1024
    /// Bytes skipped between segments, looking for the next marker, before giving up. Some
    /// writers leave a few stray bytes after a segment (a comment longer than its length says);
    /// libjpeg skips them with a warning, and so do we, up to this many.
    static let jpegMaxStrayBytes = 64 * 1024

    /// JPEG: `FF D8 FF`. The size comes from the frame header (SOFn), found by walking the
    /// marker segments from the start of the file.
    func sniffJPEG() -> ImageHeader? {
        guard reader.u8(1) == 0xD8, reader.u8(2) == 0xFF else { return nil }
        // JPEG has no alpha channel and no animation (an MPO's extra pictures are stereo
        // views or previews, not frames).
        var header = ImageHeader(format: .jpeg, isAnimated: false, hasAlpha: false)
        if wantsDetails, let (width, height, code) = jpegFrameHeader() {
            header.pixelWidth = width
            header.pixelHeight = height
            // SOF2, SOF6, SOF10, SOF14: progressive (Huffman or arithmetic, sequential or
            // differential).
            header.isProgressive = code & 0x03 == 0x02
        }
        return header
    }

    /// The width, height and marker code of the first SOFn segment before the scan data, or
    /// `nil` when the bytes end first, a length is impossible, or a cap is reached.
    private func jpegFrameHeader() -> (Int, Int, UInt8)? {
        var walk = JPEGSegmentWalk(reader)
        while let segment = walk.next() {
            guard Self.isStartOfFrame(segment.code) else { continue }
            // precision (1), height (2), width (2), component count (1)
            guard segment.length >= 8,
                  let height = reader.u16be(segment.payloadOffset + 1),
                  let width = reader.u16be(segment.payloadOffset + 3)
            else { return nil }
            return (Int(width), Int(height), segment.code)
        }
        return nil
    }

    /// SOF0–SOF15, less the three codes in that range that are not frame headers: DHT (C4),
    /// JPG (C8) and DAC (CC).
    static func isStartOfFrame(_ code: UInt8) -> Bool {
        (0xC0...0xCF).contains(code) && code != 0xC4 && code != 0xC8 && code != 0xCC
    }
}
