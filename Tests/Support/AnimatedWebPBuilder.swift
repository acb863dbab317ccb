import Foundation

/// Builds animated WebP files chunk by chunk (`RIFF`, `VP8X`, `ANIM`, `ANMF`), for tests that need
/// shapes no encoder would choose: a huge canvas with thousands of tiny frames, or hundreds of
/// thousands of frames in a few megabytes. Every frame is the same 1×1 lossless red pixel
/// placed at the canvas's top-left corner, which libwebp decodes as valid.
public enum AnimatedWebPBuilder {
    /// The `VP8L` chunk of a 1×1 opaque red image, as libwebp 1.2.4's
    /// `WebPEncodeLosslessRGBA` writes it (15 bytes of bitstream and one byte of padding).
    static let redPixelChunk: [UInt8] = [
        0x56, 0x50, 0x38, 0x4C, 0x0F, 0x00, 0x00, 0x00,
        0x2F, 0x00, 0x00, 0x00, 0x00, 0x07, 0x10, 0xFD, 0x8F, 0xFE, 0x07, 0x22, 0xA2, 0xFF, 0x01, 0x00,
    ]

    /// An animation of `frameCount` frames of 1×1 pixel on a `width` × `height` canvas, each
    /// shown for `duration` milliseconds, looping forever.
    public static func file(width: Int, height: Int, frameCount: Int, duration: Int = 40) -> Data {
        var frame = le24(0) + le24(0) + le24(0) + le24(0) + le24(duration) + [0x02]  // no blend, no dispose
        frame += redPixelChunk
        let anmf = chunk("ANMF", frame)
        var body: [UInt8] = Array("WEBP".utf8)
        body += chunk("VP8X", [0x02, 0, 0, 0] + le24(width - 1) + le24(height - 1))  // animation flag
        body += chunk("ANIM", [0, 0, 0, 0, 0, 0])
        var data = Data(capacity: 8 + body.count + anmf.count * frameCount)
        data.append(contentsOf: Array("RIFF".utf8) + le32(body.count + anmf.count * frameCount))
        data.append(contentsOf: body)
        for _ in 0..<frameCount { data.append(contentsOf: anmf) }
        return data
    }

    static func chunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
        Array(fourCC.utf8) + le32(payload.count) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    static func le24(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16)]
    }

    static func le32(_ value: Int) -> [UInt8] { le24(value) + [UInt8(truncatingIfNeeded: value >> 24)] }
}
