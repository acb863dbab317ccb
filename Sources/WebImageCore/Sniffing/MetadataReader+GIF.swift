extension MetadataReader {
    /// What the GIF walk has gathered so far.
    private struct GIFWalk {
        var frames = 0
        /// Hundredths of a second per complete frame, in order.
        var delays: [Int] = []
        /// The graphic control extension's delay waiting for the next image; each image takes
        /// the one before it and no other, so it resets after every image.
        var pendingDelay = 0
        var transparent = false
        /// The first NETSCAPE2.0 / ANIMEXTS1.0 value: repeats after the first play, 0 forever.
        var loopValue: Int?
        var firstInterlaced: Bool?
        /// The trailer was reached, or a byte that starts no GIF block (where decoders stop
        /// too): the whole file has been seen.
        var complete = false
    }

    /// GIF: every block from the screen descriptor to the trailer. An image's LZW data is
    /// skipped by its sub-block lengths, never decompressed, so a 42-frame file costs one pass
    /// over its bytes. The rules are the decoder's: a frame cut short counts only when it is the
    /// first (its rows that arrived still make a picture), the first loop extension counts, and
    /// a graphic control extension belongs to the image right after it.
    mutating func readGIF() throws(ImageError) {
        metadata.orientation = .up
        metadata.bitDepth = 8
        var walk = GIFWalk()
        var offset = 13 + (reader.u8(10).map(HeaderSniffer.gifColourTableSize) ?? 0)
        blocks: while let introducer = reader.u8(offset) {
            switch introducer {
            case 0x21:
                guard readGIFExtension(at: &offset, &walk) else { break blocks }
            case 0x2C:
                guard try readGIFImage(at: &offset, &walk) else { break blocks }
            default:
                // 0x3B, the trailer, or a byte that starts no block: decoders stop here too.
                walk.complete = true
                break blocks
            }
        }
        finishGIF(walk)
    }

    /// Reads an extension (label, then sub-blocks) and moves past it; `false` when the bytes
    /// end first.
    private func readGIFExtension(at offset: inout Int, _ walk: inout GIFWalk) -> Bool {
        let start = offset
        guard let label = reader.u8(start + 1), let end = skipGIFSubBlocks(from: start + 2) else { return false }
        offset = end
        guard let firstSize = reader.u8(start + 2) else { return true }
        if label == 0xF9, firstSize >= 4, let packed = reader.u8(start + 3), let delay = reader.u16le(start + 4) {
            // Graphic control: packed fields (transparency in bit 0), delay, transparent index.
            walk.pendingDelay = Int(delay)
            if packed & 1 != 0 { walk.transparent = true }
        } else if label == 0xFF, firstSize == 11, walk.loopValue == nil, isGIFLoopApplication(start + 3),
                  reader.u8(start + 14).map({ $0 >= 3 }) == true, reader.u8(start + 15) == 1,
                  let loops = reader.u16le(start + 16) {
            // Application: 11-byte identifier, then a sub-block [1, loop count (LE16)].
            walk.loopValue = Int(loops)
        }
        return true
    }

    /// Whether the 11 bytes at `offset` are `NETSCAPE2.0` or `ANIMEXTS1.0`.
    private func isGIFLoopApplication(_ offset: Int) -> Bool {
        guard reader.contains(offset, width: 11) else { return false }
        let identifier = UnsafeRawBufferPointer(rebasing: reader.bytes[offset..<(offset + 11)])
        return identifier.elementsEqual("NETSCAPE2.0".utf8) || identifier.elementsEqual("ANIMEXTS1.0".utf8)
    }

    /// Reads an image descriptor, skips its colour table and data, and counts it; `false` when
    /// the bytes end first (a first frame cut short still counts).
    private func readGIFImage(at offset: inout Int, _ walk: inout GIFWalk) throws(ImageError) -> Bool {
        // Descriptor: position (4), size (4), flags (1); then the local colour table, the LZW
        // minimum code size (1) and the data sub-blocks.
        guard let flags = reader.u8(offset + 9) else { return false }
        let data = offset + 10 + HeaderSniffer.gifColourTableSize(flags) + 1
        if walk.firstInterlaced == nil { walk.firstInterlaced = flags & 0x40 != 0 }
        let end = reader.contains(data - 1, width: 1) ? skipGIFSubBlocks(from: data) : nil
        guard let end else {
            if walk.frames == 0 { walk.frames = 1 }
            return false
        }
        walk.frames += 1
        try checkFrameCount(walk.frames, "GIF")
        walk.delays.append(walk.pendingDelay)
        walk.pendingDelay = 0
        offset = end
        return true
    }

    /// The offset just past the zero-length terminator of the sub-blocks starting at `start`,
    /// or `nil` when the bytes end first. Each step moves at least one byte.
    private func skipGIFSubBlocks(from start: Int) -> Int? {
        var position = start
        while let size = reader.u8(position) {
            position += 1 + Int(size)
            if size == 0 { return position }
        }
        return nil
    }

    private mutating func finishGIF(_ walk: GIFWalk) {
        metadata.isTruncated = !walk.complete
        metadata.frameCount = walk.frames
        metadata.isProgressive = walk.firstInterlaced
        // A cut-short file with one frame so far may yet hold more.
        metadata.isAnimated = walk.frames > 1 ? true : (walk.complete ? false : nil)
        if walk.transparent {
            metadata.hasAlpha = true
        } else if walk.complete {
            metadata.hasAlpha = false
        }
        guard metadata.isAnimated == true else { return }
        // NETSCAPE2.0 counts repeats after the first play; plays is one more, and 0 stays forever.
        metadata.loopCount = walk.loopValue.map { $0 == 0 ? 0 : $0 + 1 } ?? 1
        metadata.frameDurations = walk.delays.map { .milliseconds($0 * 10) }
    }
}
