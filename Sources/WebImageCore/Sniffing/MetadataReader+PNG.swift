extension MetadataReader {
    /// What the PNG walk has gathered so far.
    private struct PNGWalk {
        var sawImageData = false
        /// `acTL`'s frame count and plays, from the first one before the image data.
        var control: (frames: Int, plays: Int)?
        /// One duration per `fcTL` chunk, in file order.
        var durations: [Duration] = []
        var hasICCProfile = false
        var orientation: ImageOrientation?
        var sawEXIF = false
        var reachedEnd = false
    }

    /// PNG and APNG: every chunk from `IHDR` to `IEND`, each skipped by its length (image data
    /// included), so the cost is one step per chunk. `iCCP` and `acTL` count only before the
    /// image data, as the specifications say; `eXIf` counts anywhere, as libpng reads it.
    mutating func readPNG() throws(ImageError) {
        metadata.frameCount = 1
        metadata.isAnimated = false
        if reader.u32be(8) == 13, reader.u32be(12) == FourCC.ihdr, let depth = reader.u8(24), let interlace = reader.u8(28) {
            metadata.bitDepth = Int(depth)
            metadata.isProgressive = interlace == 1
        }
        var walk = PNGWalk()
        var offset = 8
        // Each chunk is at least 12 bytes (length, type, CRC), so the walk is linear in the file.
        while !walk.reachedEnd {
            guard let length = reader.u32be(offset), let type = reader.u32be(offset + 4),
                  length <= 0x7FFF_FFFF, // the spec's limit; a longer chunk is corrupt
                  reader.contains(offset + 8, width: Int(length) + 4)
            else { break }
            try readPNGChunk(type, data: offset + 8, length: Int(length), &walk)
            offset += 12 + Int(length)
        }
        metadata.isTruncated = !walk.reachedEnd
        // Both belong before the image data (libpng still reads a late eXIf): past its start,
        // a missing one is missing.
        metadata.hasICCProfile = walk.hasICCProfile ? true : (walk.sawImageData ? false : nil)
        metadata.orientation = walk.orientation ?? (walk.sawImageData ? .up : nil)
        finishAPNG(walk)
    }

    private func readPNGChunk(_ type: UInt32, data: Int, length: Int, _ walk: inout PNGWalk) throws(ImageError) {
        switch type {
        case FourCC.idat:
            walk.sawImageData = true
        case FourCC.iend:
            walk.reachedEnd = true
        case FourCC.iccp where !walk.sawImageData:
            walk.hasICCProfile = true
        case FourCC.exif where !walk.sawEXIF:
            walk.sawEXIF = true
            walk.orientation = Exif.orientation(inExifChunk: UnsafeRawBufferPointer(rebasing: reader.bytes[data..<(data + length)]))
        case FourCC.actl where !walk.sawImageData && walk.control == nil:
            // Validity (one acTL, 8 bytes, frames and plays in range) is the sniffer's judgement:
            // ImageHeader.isAnimated.
            if let frames = reader.u32be(data), let plays = reader.u32be(data + 4) {
                walk.control = (Int(frames), Int(plays))
            }
        case FourCC.fctl where length >= 26:
            try checkFrameCount(walk.durations.count + 1, "APNG")
            // sequence (4), width, height, x, y (4 each), delay numerator and denominator (2 each)
            if let numerator = reader.u16be(data + 20), let denominator = reader.u16be(data + 22) {
                // A zero denominator means hundredths of a second (the APNG spec).
                let perSecond = Int64(denominator == 0 ? 100 : denominator)
                walk.durations.append(.nanoseconds(Int64(numerator) * 1_000_000_000 / perSecond))
            }
        default:
            break
        }
    }

    /// The animation, when the file is one as decoders play it: a valid `acTL` (the sniffer's
    /// ``ImageHeader/isAnimated``) and as many `fcTL` chunks as it declares (no more, when the
    /// file is cut short). Otherwise the file shows its default image: one still frame.
    private mutating func finishAPNG(_ walk: PNGWalk) {
        guard header.format == .apng, header.isAnimated == true, let control = walk.control else { return }
        let frames = walk.durations.count
        let consistent = walk.reachedEnd ? frames == control.frames : frames <= control.frames
        guard consistent, frames > 1 else {
            // A cut-short file may yet bring its frames.
            if !walk.reachedEnd, consistent { metadata.isAnimated = nil }
            return
        }
        metadata.isAnimated = true
        metadata.frameCount = frames
        metadata.loopCount = control.plays
        metadata.frameDurations = walk.durations
    }
}
