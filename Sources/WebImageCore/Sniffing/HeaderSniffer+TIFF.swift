extension HeaderSniffer {
    /// Entries of the first image file directory read before giving up. Real directories
    /// hold 10 to 30; the count field allows 65 535.
    static let tiffMaxEntries = 512

    /// TIFF: `II*\0` (little-endian) or `MM\0*` (big-endian); BigTIFF (`+` for `*`) is
    /// recognised but not read further. Size and alpha come from the first image file
    /// directory, when the bytes reach it (writers may put it at the end of the file).
    func sniffTIFF() -> ImageHeader? {
        let bigEndian: Bool
        switch reader.u32be(0) {
        case 0x4949_2A00: bigEndian = false
        case 0x4D4D_002A: bigEndian = true
        case 0x4949_2B00, 0x4D4D_002B: return ImageHeader(format: .tiff)
        default: return nil
        }
        var header = ImageHeader(format: .tiff)
        guard wantsDetails,
              let directory = reader.u32(4, bigEndian: bigEndian),
              let entryCount = reader.u16(Int(directory), bigEndian: bigEndian)
        else { return header }

        var width: Int?, height: Int?, extraSamples: UInt16?
        var hasExtraSamples = false
        var walkedAll = true
        for index in 0..<min(Int(entryCount), Self.tiffMaxEntries) {
            // Each entry: tag (2), type (2), value count (4), value or offset (4).
            let entry = Int(directory) + 2 + 12 * index
            guard let tag = reader.u16(entry, bigEndian: bigEndian),
                  let type = reader.u16(entry + 2, bigEndian: bigEndian)
            else { walkedAll = false; break }
            guard tag == 256 || tag == 257 || tag == 338 else { continue }
            switch (tag, type) {
            // ImageWidth and ImageLength: one SHORT or LONG, held in the entry itself.
            case (256, 3): width = reader.u16(entry + 8, bigEndian: bigEndian).map(Int.init)
            case (256, 4): width = reader.u32(entry + 8, bigEndian: bigEndian).map(Int.init)
            case (257, 3): height = reader.u16(entry + 8, bigEndian: bigEndian).map(Int.init)
            case (257, 4): height = reader.u32(entry + 8, bigEndian: bigEndian).map(Int.init)
            // ExtraSamples: SHORTs, in the entry when there are at most two, else at an
            // offset. The first says what the first extra channel is: 1 or 2 is alpha.
            case (338, _):
                hasExtraSamples = true
                guard type == 3 else { break }
                guard let count = reader.u32(entry + 4, bigEndian: bigEndian) else { break }
                if count <= 2 {
                    extraSamples = reader.u16(entry + 8, bigEndian: bigEndian)
                } else if let offset = reader.u32(entry + 8, bigEndian: bigEndian) {
                    extraSamples = reader.u16(Int(offset), bigEndian: bigEndian)
                }
            default: break
            }
        }
        if let width, let height {
            header.pixelWidth = width
            header.pixelHeight = height
        }
        if let extraSamples {
            header.hasAlpha = extraSamples == 1 || extraSamples == 2
        } else if !hasExtraSamples, walkedAll, Int(entryCount) <= Self.tiffMaxEntries {
            header.hasAlpha = false
        }
        return header
    }
}
