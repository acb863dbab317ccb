/// Reads an ``ImageMetadata``: starts from what ``HeaderSniffer`` found, then walks the file's
/// structure for the rest (MetadataReader+GIF, +PNG, +JPEG, +WebP, +JXL, +ISOBMFF).
///
/// The rules every walk follows, on top of the sniffer's (bounds-checked reads through
/// ``ByteReader``, nothing traps):
/// - Every step moves forward by at least one byte, so time is linear in the file's length
///   whatever its lengths and counts claim; no step caps are needed beyond that.
/// - Nothing is allocated from a size the file claims: the only growing storage is one
///   duration per frame actually walked, and frames are refused past ``maximumFrameCount``.
/// - Cut-short or damaged structure ends the walk with ``ImageMetadata/isTruncated`` set; it
///   never throws. Only the frame cap throws (``ImageError/tooLarge(_:)``).
struct MetadataReader {
    let reader: ByteReader
    let header: ImageHeader
    let maximumFrameCount: Int
    var metadata: ImageMetadata

    init(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, maximumFrameCount: Int) {
        self.reader = ByteReader(bytes)
        self.header = header
        self.maximumFrameCount = maximumFrameCount
        metadata = ImageMetadata(
            format: header.format, pixelWidth: header.pixelWidth, pixelHeight: header.pixelHeight,
            hasAlpha: header.hasAlpha, isAnimated: header.isAnimated, isProgressive: header.isProgressive)
    }

    mutating func read() throws(ImageError) -> ImageMetadata {
        switch header.format {
        case .jpeg: readJPEG()
        case .png, .apng: try readPNG()
        case .gif: try readGIF()
        case .webp: try readWebP()
        case .tiff: readTIFF()
        case .bmp, .ico, .svg:
            // Formats without orientation or animation (an ICO's images are sizes, not frames).
            metadata.orientation = .up
            metadata.frameCount = 1
            metadata.isAnimated = false
        case .jxl: readJXL()
        case .heic, .heif, .avif: try readISOBMFF()
        case .mp4, .mov, .webm, .mkv, .pdf:
            // Their decoders apply the container's rotation or the page's own: as stored is upright.
            metadata.orientation = .up
        }
        return metadata
    }

    /// Refuses a frame count past the cap, before its duration is stored.
    func checkFrameCount(_ count: Int, _ format: String) throws(ImageError) {
        guard count <= maximumFrameCount else {
            throw .tooLarge("\(format): more than the \(maximumFrameCount)-frame limit")
        }
    }

    /// TIFF keeps its orientation in IFD0, the same structure an EXIF block has. Pages are not
    /// counted: ``ImageMetadata/frameCount`` stays `nil`, as in ``ImageHeader/isAnimated``.
    private mutating func readTIFF() {
        let orientation = Exif.orientation(inTIFF: reader.bytes)
        // No tag in a directory the sniffer could read is upright; an unreadable one says nothing.
        metadata.orientation = orientation ?? (header.pixelWidth != nil ? .up : nil)
    }
}
