import WebImageCore

/// Decodes the frames of an APNG and composes them onto its canvas.
///
/// libpng 1.6 as shipped by Debian has no APNG support, so each frame is decoded by handing
/// libpng a PNG stream made for it: the signature, an `IHDR` with the frame's size, the shared
/// `PLTE` and `tRNS` chunks, the frame's `fdAT` payloads renamed `IDAT`, and `IEND`. The CRCs
/// of the original chunks were checked during the chunk walk, so libpng is told to skip CRCs on
/// these streams rather than have them recomputed.
struct APNGRenderer {
    let file: PNGFile
    let animation: PNGFile.Animation
    let bytes: UnsafeRawBufferPointer
    let options: ImageDecodingOptions

    mutating func render() throws -> ImageContainer {
        let width = file.header.width, height = file.header.height
        var frames = Array(animation.frames.prefix(animation.declaredFrameCount))
        if options.firstFrameOnly { frames = Array(frames.prefix(1)) }
        try options.checkAnimationWork(frameCount: frames.count, canvasWidth: width, canvasHeight: height, format: "APNG")
        let kept = options.keptFrameSize(canvasWidth: width, canvasHeight: height)
        if frames.count > 1 {
            try options.checkKeptAnimationBytes(frameCount: frames.count, kept: kept, format: "APNG")
        }

        let canvas = FrameCanvas(width: width, height: height)
        let scratch = Self.makeScratch(for: frames)
        defer { scratch.deallocate() }

        var composed: [AnimatedImage.Frame] = []
        composed.reserveCapacity(frames.count)
        for (index, frame) in frames.enumerated() {
            try WorkDeadline.check("composing APNG frame \(index + 1) of \(frames.count)")
            guard var composedFrame = try compose(frame, index: index, onto: canvas, scratch: scratch) else { break }
            // Kept at the size asked for, as the animation limit counts it.
            if frames.count > 1, kept.width != composedFrame.bitmap.width || kept.height != composedFrame.bitmap.height {
                composedFrame.bitmap = try composedFrame.bitmap.resized(width: kept.width, height: kept.height)
            }
            composed.append(composedFrame)
        }
        guard let first = composed.first else {
            throw ImageError.corruptData("APNG: no frame could be decoded")
        }
        let animation = composed.count > 1 ? AnimatedImage(frames: composed, loopCount: self.animation.plays) : nil
        var container = ImageContainer(image: first.bitmap, animation: animation, format: .apng)
        // A file cut short keeps the frames that arrived whole.
        container.isComplete = composed.count == frames.count
        return container
    }

    /// A buffer for the pixels of the largest of `frames`, before they are composed.
    static func makeScratch(for frames: [PNGFile.Frame]) -> UnsafeMutableRawBufferPointer {
        let largest = frames.map { $0.width * $0.height }.max() ?? 0
        return UnsafeMutableRawBufferPointer.allocate(byteCount: max(largest * 4, 1), alignment: 16)
    }

    /// Decodes `frame`, the `index`th, composes it onto `canvas` (which holds what the frames
    /// before it left, disposal applied), returns the composed frame and applies the frame's
    /// own disposal; `nil` when the file ends inside the frame (after the first).
    func compose(
        _ frame: PNGFile.Frame, index: Int, onto canvas: FrameCanvas, scratch: UnsafeMutableRawBufferPointer
    ) throws -> AnimatedImage.Frame? {
        do {
            try decodePixels(of: frame, index: index, into: scratch)
        } catch let error as ImageError where file.truncated && index > 0 {
            // The file ends inside this frame: keep the frames that arrived whole.
            _ = error
            return nil
        }
        let region = canvas.clip(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
        // Dispose "previous" on the first frame means "background" (the APNG spec).
        let disposeOp = index == 0 && frame.disposeOp == 2 ? 1 : frame.disposeOp
        let saved = disposeOp == 2 ? canvas.save(region) : []
        // The first frame replaces the transparent canvas whatever its blend op says.
        Self.compose(UnsafeRawBufferPointer(scratch), onto: canvas, at: region, over: frame.blendOp == 1 && index > 0)
        let composed = AnimatedImage.Frame(bitmap: try canvas.snapshot(), duration: frame.duration)
        switch disposeOp {
        case 1: canvas.fill(region)
        case 2: canvas.restore(region, from: saved)
        default: break
        }
        return composed
    }

    private func decodePixels(of frame: PNGFile.Frame, index: Int, into scratch: UnsafeMutableRawBufferPointer) throws {
        let stride = frame.width * 4
        if frame.usesDefaultImage {
            try LibPNG.decode(bytes, width: frame.width, height: frame.height, into: scratch, stride: stride)
            return
        }
        guard !frame.data.isEmpty else {
            throw ImageError.corruptData("APNG: frame \(index) has no fdAT data")
        }
        let stream = synthesizedStream(for: frame)
        try stream.withUnsafeBytes { stream in
            try LibPNG.decode(stream, width: frame.width, height: frame.height, into: scratch, stride: stride, ignoringCRC: true)
        }
    }

    /// A PNG datastream of one frame (see the type's documentation). CRC fields are zero.
    private func synthesizedStream(for frame: PNGFile.Frame) -> [UInt8] {
        let shared = file.sharedChunks.reduce(0) { $0 + $1.count }
        let data = frame.data.reduce(0) { $0 + $1.count + 12 }
        var stream: [UInt8] = []
        stream.reserveCapacity(8 + 25 + shared + data + 12)
        stream += PNGFile.signature
        func appendChunk(_ type: UInt32, length: Int) {
            Self.appendBigEndian(UInt32(length), to: &stream)
            Self.appendBigEndian(type, to: &stream)
        }
        appendChunk(PNGFile.Chunk.ihdr, length: 13)
        Self.appendBigEndian(UInt32(frame.width), to: &stream)
        Self.appendBigEndian(UInt32(frame.height), to: &stream)
        stream += file.header.bytes[8..<13]
        Self.appendBigEndian(0, to: &stream)
        for chunk in file.sharedChunks { stream += bytes[chunk] }
        for payload in frame.data {
            appendChunk(PNGFile.Chunk.idat, length: payload.count)
            stream += bytes[payload]
            Self.appendBigEndian(0, to: &stream)
        }
        appendChunk(PNGFile.Chunk.iend, length: 0)
        Self.appendBigEndian(0, to: &stream)
        return stream
    }

    private static func appendBigEndian(_ value: UInt32, to stream: inout [UInt8]) {
        stream += [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    /// Writes a frame's pixels (`region.width * 4` bytes per row) into `region` of the canvas:
    /// replacing what is there ("source"), or composited over it with straight alpha ("over").
    static func compose(_ source: UnsafeRawBufferPointer, onto canvas: FrameCanvas, at region: FrameCanvas.Region, over: Bool) {
        let rowBytes = region.width * 4
        let from = source.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for row in 0..<region.height {
            let target = canvas.pixels + ((region.y + row) * canvas.width + region.x) * 4
            let pixels = from + row * rowBytes
            if !over {
                target.update(from: pixels, count: rowBytes)
                continue
            }
            for offset in stride(from: 0, to: rowBytes, by: 4) {
                blendOver(pixels + offset, target + offset)
            }
        }
    }

    /// Porter–Duff "over" for straight (non-premultiplied) alpha, rounded to nearest:
    /// αo = αs + αd(1 − αs), Co = (Cs·αs + Cd·αd(1 − αs)) / αo.
    @inline(__always)
    static func blendOver(_ source: UnsafePointer<UInt8>, _ target: UnsafeMutablePointer<UInt8>) {
        let sourceAlpha = UInt32(source[3])
        if sourceAlpha == 255 {
            target.update(from: source, count: 4)
            return
        }
        if sourceAlpha == 0 { return }
        let targetAlpha = UInt32(target[3])
        if targetAlpha == 0 {
            target.update(from: source, count: 4)
            return
        }
        // Weights in units of 1/65025 (255 × 255).
        let sourceWeight = sourceAlpha * 255
        let targetWeight = targetAlpha * (255 - sourceAlpha)
        let total = sourceWeight + targetWeight
        for channel in 0..<3 {
            let value = UInt32(source[channel]) * sourceWeight + UInt32(target[channel]) * targetWeight
            target[channel] = UInt8((value + total / 2) / total)
        }
        target[3] = UInt8((total + 127) / 255)
    }
}
