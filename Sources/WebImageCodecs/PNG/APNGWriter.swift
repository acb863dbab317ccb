import Foundation
import WebImageCore

/// Writes an APNG from composed frames: each frame is encoded as a PNG by ``PNGEncoder``, and
/// its image data is moved into the animation, `IDAT` for the first frame (which is also the
/// default image) and `fdAT` for the others.
struct APNGWriter {
    let encoder: PNGEncoder

    func write(_ animation: AnimatedImage, profile: Data?) throws -> Data {
        let frames = try animation.frames.map { try PNGEncoder.straight($0.bitmap) }
        let width = frames[0].width, height = frames[0].height
        guard frames.allSatisfy({ $0.width == width && $0.height == height }) else {
            throw ImageError.unsupportedFormat("APNG: the frames of an animation must share one size")
        }
        guard animation.frames.count <= 0x7FFF_FFFF, animation.loopCount >= 0, animation.loopCount <= 0x7FFF_FFFF else {
            throw ImageError.unsupportedFormat("APNG: \(animation.frames.count) frames or \(animation.loopCount) plays do not fit")
        }
        // One colour type for every frame: alpha if any frame needs it, colour likewise.
        var needsAlpha = false, needsColour = false
        for frame in frames {
            let channels = PNGEncoder.reducedChannels(frame)
            needsAlpha = needsAlpha || channels == 2 || channels == 4
            needsColour = needsColour || channels >= 3
        }
        let channels = (needsColour ? 3 : 1) + (needsAlpha ? 1 : 0)

        var output = PNGFile.signature
        var sequence = 0
        for (index, frame) in frames.enumerated() {
            try WorkDeadline.check("encoding APNG frame \(index + 1) of \(frames.count)")
            let png = [UInt8](try encoder.encode(frame, profile: index == 0 ? profile : nil, channels: channels))
            let chunks = Self.chunks(of: png)
            if index == 0 {
                for chunk in chunks where chunk.type != PNGFile.Chunk.idat && chunk.type != PNGFile.Chunk.iend {
                    output += png[chunk.whole]
                }
                output += Self.chunk(PNGFile.Chunk.actl, Self.be32(frames.count) + Self.be32(animation.loopCount))
            }
            output += Self.chunk(PNGFile.Chunk.fctl, Self.frameControl(sequence: sequence, width: width, height: height,
                                                                     duration: animation.frames[index].duration))
            sequence += 1
            for chunk in chunks where chunk.type == PNGFile.Chunk.idat {
                if index == 0 {
                    output += png[chunk.whole]
                } else {
                    output += Self.chunk(PNGFile.Chunk.fdat, Self.be32(sequence) + png[chunk.data])
                    sequence += 1
                }
            }
        }
        output += Self.chunk(PNGFile.Chunk.iend, [])
        return Data(output)
    }

    /// fcTL: the whole canvas, dispose op none, blend op source.
    static func frameControl(sequence: Int, width: Int, height: Int, duration: Duration) -> [UInt8] {
        let (numerator, denominator) = delay(duration)
        return be32(sequence) + be32(width) + be32(height) + be32(0) + be32(0)
            + be16(numerator) + be16(denominator) + [0, 0]
    }

    /// A duration as APNG's 16-bit fraction of a second: milliseconds up to 65.535 s, whole
    /// seconds beyond (up to 65 535 s).
    static func delay(_ duration: Duration) -> (numerator: Int, denominator: Int) {
        let (seconds, attoseconds) = duration.components
        // Clamped first, so that no duration, however long, overflows the arithmetic.
        let milliseconds = max(0, min(seconds, 100_000_000) * 1000 + (attoseconds + 500_000_000_000_000) / 1_000_000_000_000_000)
        if milliseconds <= 65535 { return (Int(milliseconds), 1000) }
        return (Int(min(65535, (milliseconds + 500) / 1000)), 1)
    }

    /// The chunks of a PNG this encoder wrote (well-formed by construction).
    static func chunks(of png: [UInt8]) -> [(type: UInt32, whole: Range<Int>, data: Range<Int>)] {
        var chunks: [(type: UInt32, whole: Range<Int>, data: Range<Int>)] = []
        var offset = 8
        while offset + 12 <= png.count {
            let length = Int(readBE32(png, offset)), type = readBE32(png, offset + 4)
            chunks.append((type, offset..<(offset + 12 + length), (offset + 8)..<(offset + 8 + length)))
            offset += 12 + length
        }
        return chunks
    }

    static func chunk<Bytes: Collection<UInt8>>(_ type: UInt32, _ data: Bytes) -> [UInt8] {
        let body = be32(Int(type)) + data
        return be32(data.count) + body + be32(Int(LibPNG.crc32(body, from: 0, count: body.count)))
    }

    static func readBE32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    static func be32(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    static func be16(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
