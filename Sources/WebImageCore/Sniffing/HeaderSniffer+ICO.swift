extension HeaderSniffer {
    /// Directory entries read looking for the largest icon; real icons have up to a dozen.
    static let icoMaxEntries = 256

    /// ICO and CUR: a zero word, type 1 (icon) or 2 (cursor), and a non-zero image count.
    ///
    /// A cursor sniffs as ``ImageFormat/ico``: it is the same container with hot-spot
    /// coordinates where an icon stores planes and bit depth, decoders read both alike, and
    /// browsers sniff both as `image/x-icon`.
    ///
    /// The size is that of the largest entry in the directory, the one a decoder shows by
    /// default; a width or height byte of 0 means 256.
    func sniffICO() -> ImageHeader? {
        guard reader.u16be(0) == 0, let type = reader.u16le(2), type == 1 || type == 2,
              let count = reader.u16le(4), count > 0
        else { return nil }
        var header = ImageHeader(format: .ico, isAnimated: false)
        guard wantsDetails else { return header }
        // Report a size only when every entry was read: the largest of a cut-off directory
        // could be the wrong one.
        let entries = Int(count)
        guard entries <= Self.icoMaxEntries, reader.contains(6, width: 16 * entries) else { return header }
        var largest = (width: 0, height: 0)
        for index in 0..<entries {
            let entry = 6 + 16 * index
            let width = Int(reader.bytes[entry]), height = Int(reader.bytes[entry + 1])
            let size = (width: width == 0 ? 256 : width, height: height == 0 ? 256 : height)
            if size.width * size.height > largest.width * largest.height { largest = size }
        }
        header.pixelWidth = largest.width
        header.pixelHeight = largest.height
        return header
    }
}
