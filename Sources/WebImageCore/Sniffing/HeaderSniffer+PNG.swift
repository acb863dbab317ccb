extension HeaderSniffer {
    /// Chunks walked looking for `acTL` before the first `IDAT`. Encoders put `acTL` right
    /// after `IHDR`; only text and metadata chunks come between, rarely more than a dozen.
    static let pngMaxChunks = 1024

    /// PNG and APNG: the 8-byte PNG signature, then a chunk list. An APNG is a PNG with an
    /// `acTL` chunk before its first `IDAT`; one after it is ignored, as the APNG spec says.
    /// It is animated when its only `acTL` before `IDAT` is 8 bytes long and declares 2 to
    /// 2³¹ − 1 frames and at most 2³¹ − 1 plays, the checks the decoder makes there (as
    /// Chromium does). Faults after the image data (sequence numbers, an `fcTL` count that
    /// differs from `acTL`'s) are beyond a sniff: the decoder finds them and shows the still
    /// default image, so a decoded ``ImageContainer/isAnimated`` is the final word, and
    /// ``ImageMetadata/isAnimated``, whose walk applies the decoder's rules (`APNGChunks`).
    ///
    /// The signature alone makes the file a PNG, even if no valid `IHDR` follows: the decoder
    /// then reports corrupt data, which is more useful than "unsupported format".
    func sniffPNG() -> ImageHeader? {
        guard reader.u32be(0) == 0x8950_4E47, reader.u32be(4) == 0x0D0A_1A0A else { return nil }
        var header = ImageHeader(format: .png)
        var knowsColourType = false
        if reader.u32be(8) == 13, reader.u32be(12) == FourCC.ihdr,
           let width = reader.u32be(16), let height = reader.u32be(20), let colourType = reader.u8(25) {
            header.pixelWidth = Int(width)
            header.pixelHeight = Int(height)
            knowsColourType = true
            // Colour types 4 (grey + alpha) and 6 (RGBA) carry alpha; others only via tRNS.
            if colourType & 4 != 0 { header.hasAlpha = true }
        }

        var offset = 8
        var controls = 0
        for _ in 0..<Self.pngMaxChunks {
            guard let length = reader.u32be(offset), let type = reader.u32be(offset + 4),
                  length <= 0x7FFF_FFFF // the spec's limit; a longer chunk is corrupt
            else { break }
            switch type {
            case FourCC.actl:
                header.format = .apng
                controls += 1
                // A one-frame APNG is still an APNG (its decoder reads `fcTL`), but not animated;
                // nor is one whose acTL the decoder sets aside (see `APNGChunks`).
                if let frames = reader.u32be(offset + 8), let plays = reader.u32be(offset + 12) {
                    header.isAnimated = controls == 1 && length == 8 && frames > 1 && frames <= 0x7FFF_FFFF && plays <= 0x7FFF_FFFF
                }
                if !wantsDetails { return header }
            case FourCC.trns:
                header.hasAlpha = true
            case FourCC.idat, FourCC.iend:
                // Everything that decides animation and transparency precedes the image data.
                if header.format == .png { header.isAnimated = false }
                if knowsColourType, header.hasAlpha == nil { header.hasAlpha = false }
                return header
            default:
                break
            }
            offset += 12 + Int(length) // length, type, data, CRC
        }
        // The bytes ended, a length lied, or the cap was reached: what we saw stands.
        return header
    }
}
