extension MetadataReader {
    /// JPEG: the marker segments up to the first scan (``JPEGSegmentWalk``), the ones libjpeg
    /// reads before decoding: the first APP1 `Exif` segment for the orientation, APP2
    /// `ICC_PROFILE` segments for the colour profile, and the frame header for precision and
    /// progressive coding. Entropy-coded data is never read.
    mutating func readJPEG() {
        metadata.frameCount = 1
        var walk = JPEGSegmentWalk(reader)
        var orientation: ImageOrientation?
        var sawEXIF = false
        var hasICCProfile = false
        while let segment = walk.next() {
            switch segment.code {
            case 0xE1 where !sawEXIF && hasPrefix(Self.exifSignature, segment):
                // libjpeg's wi_jpeg_exif takes the first APP1 whose payload starts `Exif\0\0`.
                sawEXIF = true
                let tiff = segment.payloadOffset + Self.exifSignature.count
                let end = min(segment.lengthOffset + segment.length, reader.count)
                if tiff < end {
                    orientation = Exif.orientation(inTIFF: UnsafeRawBufferPointer(rebasing: reader.bytes[tiff..<end]))
                }
            case 0xE2 where hasPrefix(Self.iccSignature, segment):
                hasICCProfile = true
            case let code where HeaderSniffer.isStartOfFrame(code) && metadata.bitDepth == nil:
                if let precision = reader.u8(segment.payloadOffset) { metadata.bitDepth = Int(precision) }
            default:
                break
            }
        }
        // The scan is where libjpeg stops reading markers: every segment before it was seen.
        let complete = walk.stop == .scan
        metadata.isTruncated = !complete
        metadata.orientation = orientation ?? (complete ? .up : nil)
        metadata.hasICCProfile = hasICCProfile ? true : (complete ? false : nil)
    }

    private static let exifSignature = Array("Exif\0\0".utf8)
    private static let iccSignature = Array("ICC_PROFILE\0".utf8)

    /// Whether the segment's payload starts with `signature` (and holds more than it).
    private func hasPrefix(_ signature: [UInt8], _ segment: JPEGSegmentWalk.Segment) -> Bool {
        let start = segment.payloadOffset
        guard segment.payloadLength > signature.count, reader.contains(start, width: signature.count) else { return false }
        return reader.bytes[start..<(start + signature.count)].elementsEqual(signature)
    }
}
