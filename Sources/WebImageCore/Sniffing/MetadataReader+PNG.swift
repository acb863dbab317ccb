extension MetadataReader {
    /// What the PNG walk has gathered so far.
    private struct PNGWalk {
        var sawImageData = false
        /// APNG's control chunks, judged by the decoder's rules (``APNGChunks``).
        var apng = APNGChunks()
        var hasICCProfile = false
        var orientation: ImageOrientation?
        var sawEXIF = false
        var reachedEnd = false
        /// An APNG chunk after the image data is damaged, which fails the decode: the walk
        /// stops there, as at any damaged structure.
        var damaged = false
    }

    /// PNG and APNG: every chunk from `IHDR` to `IEND`, each skipped by its length (image data
    /// included), so the cost is one step per chunk. `iCCP` counts only before the image data,
    /// as the specification says; `eXIf` counts anywhere, as libpng reads it. APNG's `acTL`,
    /// `fcTL` and `fdAT` go through ``APNGChunks``, the rules the decoder applies, so an APNG
    /// the decoder shows as its still default image is one frame here too.
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
        while !walk.reachedEnd, !walk.damaged {
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
        case FourCC.actl:
            walk.apng.readAnimationControl(data..<(data + length), in: reader.bytes,
                                           crcMatches: PNGCRC.matches(data..<(data + length), in: reader.bytes),
                                           beforeImage: !walk.sawImageData)
        case FourCC.fctl:
            try checkFrameCount(walk.apng.frameCount + 1, "APNG")
            do {
                try walk.apng.readFrameControl(data..<(data + length), in: reader.bytes,
                                               crcMatches: PNGCRC.matches(data..<(data + length), in: reader.bytes),
                                               canvasWidth: header.pixelWidth ?? 0, canvasHeight: header.pixelHeight ?? 0,
                                               beforeImage: !walk.sawImageData)
            } catch {
                walk.damaged = true
            }
        case FourCC.fdat:
            // Frame data is never hashed here (a walk is one step a chunk): its CRC counts as
            // matching, so a damaged fdAT, which fails the decode, is not noticed.
            do {
                try walk.apng.readFrameData(data..<(data + length), in: reader.bytes, crcMatches: true, beforeImage: !walk.sawImageData)
            } catch {
                walk.damaged = true
            }
        default:
            break
        }
    }

    /// The animation, when the file is one as the decoder plays it: ``APNGChunks`` found one
    /// (a valid `acTL`, sequence numbers in order, no fault before the image data, and as many
    /// `fcTL` chunks as `acTL` declares, no more when the file is cut short) of more than one
    /// frame. Otherwise the file shows its default image: one still frame.
    private mutating func finishAPNG(_ walk: PNGWalk) {
        guard header.format == .apng, header.isAnimated == true else { return }
        var apng = walk.apng
        guard let animation = apng.animation(complete: walk.reachedEnd), animation.frames.count > 1 else {
            // A cut-short file whose animation still stands may yet bring its frames.
            if !walk.reachedEnd, apng.ignoredBecause == nil { metadata.isAnimated = nil }
            return
        }
        metadata.isAnimated = true
        metadata.frameCount = animation.frames.count
        metadata.loopCount = animation.plays
        metadata.frameDurations = animation.frames.map(\.duration)
    }
}
