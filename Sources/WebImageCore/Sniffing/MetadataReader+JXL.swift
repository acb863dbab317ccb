extension MetadataReader {
    /// JPEG XL: the codestream's header (``JXLCodestreamHeader``) as libjxl presents it by
    /// default, the orientation applied: the sniffer's size is the upright one and the
    /// orientation `.up`, as ``JXLDecoder``'s bitmap and container say. Frames are not walked
    /// (their headers are bit-packed behind the whole metadata), so an animation's frame count
    /// and durations stay unknown; a still image has one frame.
    mutating func readJXL() {
        guard let header = JXLCodestreamHeader.read(reader) else {
            metadata.isTruncated = true
            return
        }
        metadata.orientation = .up
        metadata.bitDepth = header.bitDepth
        metadata.isProgressive = false
        if let loopCount = header.loopCount {
            metadata.loopCount = loopCount
        } else {
            metadata.frameCount = 1
        }
    }
}
