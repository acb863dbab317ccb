extension HeaderSniffer {
    /// WebP: `RIFF`, a size, `WEBP`, then the first chunk, whose type names the layout and
    /// whose first bytes hold the size.
    func sniffWebP() -> ImageHeader? {
        guard reader.u32be(0) == FourCC.riff, reader.u32be(8) == FourCC.webp else { return nil }
        var header = ImageHeader(format: .webp)
        guard let chunk = reader.u32be(12) else { return header }
        // The chunk's data starts at 20, after its type and size.
        switch chunk {
        case FourCC.vp8:
            header.webPEncoding = .lossy
            header.isAnimated = false
            header.hasAlpha = false
            // A VP8 key frame: 3-byte frame tag, start code 9D 01 2A, then 14-bit width and
            // height, each with 2 scaling bits above them.
            if reader.u8(23) == 0x9D, reader.u8(24) == 0x01, reader.u8(25) == 0x2A,
               let width = reader.u16le(26), let height = reader.u16le(28) {
                header.pixelWidth = Int(width & 0x3FFF)
                header.pixelHeight = Int(height & 0x3FFF)
            }
        case FourCC.vp8l:
            header.webPEncoding = .lossless
            header.isAnimated = false
            // Signature 0x2F, then 14 bits width - 1, 14 bits height - 1, 1 bit alpha hint.
            if reader.u8(20) == 0x2F, let bits = reader.u32le(21) {
                header.pixelWidth = Int(bits & 0x3FFF) + 1
                header.pixelHeight = Int((bits >> 14) & 0x3FFF) + 1
                header.hasAlpha = (bits >> 28) & 1 != 0
            }
        case FourCC.vp8x:
            header.webPEncoding = .extended
            // Flags (animation 0x02, alpha 0x10), 3 reserved bytes, then the canvas width - 1
            // and height - 1 in 24 bits each.
            if let flags = reader.u8(20) {
                header.isAnimated = flags & 0x02 != 0
                header.hasAlpha = flags & 0x10 != 0
            }
            if let width = reader.u24le(24), let height = reader.u24le(27) {
                header.pixelWidth = Int(width) + 1
                header.pixelHeight = Int(height) + 1
            }
        default:
            break // an unknown first chunk: still a WebP container, but nothing we can read
        }
        return header
    }
}
