import WebImageCore

/// The pixels of a cairo image surface, as the renderers over cairo (librsvg, Poppler) hand
/// them over.
enum CairoPixels {
    /// cairo's ARGB32 (premultiplied, one native-endian 32-bit word a pixel) as straight RGBA bytes.
    static func straightRGBA(from data: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int) throws -> Bitmap {
        try Bitmap(width: width, height: height, pixelFormat: .rgba8) { output in
            let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
            for y in 0..<height {
                let row = UnsafeRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<width {
                    let word = UInt32(littleEndian: row[x])
                    let alpha = word >> 24
                    var red = (word >> 16) & 0xFF, green = (word >> 8) & 0xFF, blue = word & 0xFF
                    if alpha > 0, alpha < 255 {
                        red = (red * 255 + alpha / 2) / alpha
                        green = (green * 255 + alpha / 2) / alpha
                        blue = (blue * 255 + alpha / 2) / alpha
                    }
                    let pixel = out + (y * width + x) * 4
                    pixel[0] = UInt8(min(red, 255))
                    pixel[1] = UInt8(min(green, 255))
                    pixel[2] = UInt8(min(blue, 255))
                    pixel[3] = UInt8(alpha)
                }
            }
        }
    }
}
