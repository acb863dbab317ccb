extension MetadataReader {
    /// WebP chunk types read here beyond ``FourCC``'s.
    private enum WebPChunk {
        static let anim: UInt32 = 0x414E_494D // "ANIM"
        static let anmf: UInt32 = 0x414E_4D46 // "ANMF"
        static let iccp: UInt32 = 0x4943_4350 // "ICCP"
        static let exif: UInt32 = 0x4558_4946 // "EXIF"
    }

    /// `VP8X` flags.
    private enum WebPFlag {
        static let icc: UInt8 = 0x20
        static let exif: UInt8 = 0x08
        static let animation: UInt8 = 0x02
    }

    /// WebP: every chunk of the RIFF container, each skipped by its (padded) size; the RIFF
    /// size bounds the walk when it is shorter than the bytes, and a RIFF size past them makes
    /// the file cut short. As in libwebp's demuxer, `ICCP` and `EXIF` count only when `VP8X`
    /// flags them, and frames are `ANMF` chunks only in a file flagged as animated.
    mutating func readWebP() throws(ImageError) {
        metadata.bitDepth = 8
        metadata.isProgressive = false
        let flags = header.webPEncoding == .extended ? reader.u8(20) ?? 0 : 0
        let animated = flags & WebPFlag.animation != 0
        let declaredEnd = reader.u32le(4).map { 8 + Int($0) } ?? reader.count
        let end = min(declaredEnd, reader.count)
        var frames = 0
        var durations: [Duration] = []
        var sawICCP = false
        var offset = 12
        // Each chunk is at least 8 bytes (type, size), so the walk is linear in the file.
        while offset + 8 <= end, let type = reader.u32be(offset), let size = reader.u32le(offset + 4).map(Int.init) {
            let data = offset + 8
            guard size <= end - data else { break } // the chunk runs past the bytes: cut short
            switch type {
            case WebPChunk.anim where animated && metadata.loopCount == nil:
                // Background colour (4), loop count (LE16): plays, 0 forever.
                metadata.loopCount = reader.u16le(data + 4).map(Int.init)
            case WebPChunk.anmf where animated:
                frames += 1
                try checkFrameCount(frames, "WebP")
                // X, Y, width − 1, height − 1 (3 bytes each), then the duration in ms (LE24).
                durations.append(.milliseconds(Int(reader.u24le(data + 12) ?? 0)))
            case WebPChunk.iccp:
                sawICCP = true
            case WebPChunk.exif where flags & WebPFlag.exif != 0 && metadata.orientation == nil:
                metadata.orientation = Exif.orientation(inExifChunk: UnsafeRawBufferPointer(rebasing: reader.bytes[data..<(data + size)])) ?? .up
            default:
                break
            }
            offset = data + size + (size & 1) // chunks are padded to an even size
        }
        let complete = offset >= declaredEnd
        finishWebP(complete: complete, animated: animated, frames: frames, durations: durations, hasICCProfile: sawICCP && flags & WebPFlag.icc != 0)
    }

    private mutating func finishWebP(complete: Bool, animated: Bool, frames: Int, durations: [Duration], hasICCProfile: Bool) {
        metadata.isTruncated = !complete
        // Only the extended layout has metadata chunks: a simple file is upright and profile-free
        // even when cut short.
        let sawAllChunks = complete || header.webPEncoding == .lossy || header.webPEncoding == .lossless
        if metadata.orientation == nil, sawAllChunks { metadata.orientation = .up }
        metadata.hasICCProfile = hasICCProfile ? true : (sawAllChunks ? false : nil)
        guard animated else {
            metadata.frameCount = 1
            metadata.isAnimated = header.webPEncoding == nil ? nil : false
            return
        }
        metadata.isAnimated = true
        metadata.frameCount = frames
        metadata.frameDurations = durations
    }
}
