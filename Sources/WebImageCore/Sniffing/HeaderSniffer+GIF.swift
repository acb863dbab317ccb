extension HeaderSniffer {
    /// Blocks and data sub-blocks walked before giving up. A sub-block holds at most 255 bytes,
    /// so this covers the first 16 MB of a file: every still GIF on the web and the first two
    /// frames of any animation.
    static let gifMaxBlocks = 1 << 16

    /// GIF: `GIF87a` or `GIF89a`. The size is the logical screen. Whether it is animated is
    /// not in any header: the walk skips the first image's data (hopping over sub-blocks by
    /// their lengths, without decoding) and looks for a second image.
    func sniffGIF() -> ImageHeader? {
        guard reader.u32be(0) == 0x4749_4638, // "GIF8"
              let version = reader.u8(4), version == UInt8(ascii: "7") || version == UInt8(ascii: "9"),
              reader.u8(5) == UInt8(ascii: "a")
        else { return nil }
        var header = ImageHeader(format: .gif)
        guard wantsDetails, let width = reader.u16le(6), let height = reader.u16le(8) else { return header }
        // The logical screen, not the largest frame: a frame may claim to reach far past it
        // (a decompression bomb does), and decoders must check each frame on its own.
        header.pixelWidth = Int(width)
        header.pixelHeight = Int(height)
        guard let screenFlags = reader.u8(10) else { return header }

        var offset = 13 + Self.gifColourTableSize(screenFlags)
        var images = 0
        var transparent = false
        var budget = Self.gifMaxBlocks
        walk: while budget > 0 {
            budget -= 1
            guard let introducer = reader.u8(offset) else { break }
            switch introducer {
            case 0x21: // extension: label, then sub-blocks
                guard let label = reader.u8(offset + 1) else { break walk }
                // A graphic control extension (F9, 4 data bytes) flags a transparent index.
                if label == 0xF9, reader.u8(offset + 2) == 4, let packed = reader.u8(offset + 3), packed & 1 != 0 {
                    transparent = true
                }
                offset += 2
                guard skipGIFSubBlocks(&offset, budget: &budget) else { break walk }
            case 0x2C: // image descriptor: 9 bytes, colour table, LZW code size, sub-blocks
                images += 1
                if images == 2 {
                    header.isAnimated = true
                    break walk
                }
                guard let imageFlags = reader.u8(offset + 9) else { break walk }
                offset += 10 + Self.gifColourTableSize(imageFlags) + 1
                guard skipGIFSubBlocks(&offset, budget: &budget) else { break walk }
            case 0x3B: // trailer: the whole file has been seen
                header.isAnimated = false
                header.hasAlpha = transparent
                break walk
            default:
                break walk // not a GIF block: corrupt from here on
            }
        }
        if transparent { header.hasAlpha = true }
        return header
    }

    /// Bytes of the colour table that follows a screen or image descriptor with these flags.
    static func gifColourTableSize(_ flags: UInt8) -> Int {
        flags & 0x80 == 0 ? 0 : 3 << (Int(flags & 0x07) + 1)
    }

    /// Moves `offset` past a run of data sub-blocks and its zero terminator; `false` when the
    /// bytes end or the budget runs out first.
    private func skipGIFSubBlocks(_ offset: inout Int, budget: inout Int) -> Bool {
        while budget > 0 {
            budget -= 1
            guard let size = reader.u8(offset) else { return false }
            offset += 1 + Int(size)
            if size == 0 { return true }
        }
        return false
    }
}
