import WebImage

extension Bitmap {
    /// The pixels as straight (not premultiplied) RGBA, 4 bytes a pixel, rows packed: grey
    /// repeated into red, green and blue, alpha 255 where the format has none. The one reading
    /// of every pixel format that the proxy's drawing steps (``RecipeCanvas``,
    /// ``WatermarkOverlay``) start from.
    func straightRGBA8() -> [UInt8] {
        let format = pixelFormat, step = format.bytesPerPixel
        return [UInt8](unsafeUninitializedCapacity: width * height * 4) { output, count in
            pixels.withUnsafeBufferPointer { input in
                for row in 0..<height {
                    for column in 0..<width {
                        let from = row * bytesPerRow + column * step, to = (row * width + column) * 4
                        var (r, g, b, a): (Int, Int, Int, Int)
                        switch format.channels {
                        case .gray: (r, g, b, a) = (Int(input[from]), Int(input[from]), Int(input[from]), 255)
                        case .grayAlpha: (r, g, b, a) = (Int(input[from]), Int(input[from]), Int(input[from]), Int(input[from + 1]))
                        case .rgb: (r, g, b, a) = (Int(input[from]), Int(input[from + 1]), Int(input[from + 2]), 255)
                        case .rgba: (r, g, b, a) = (Int(input[from]), Int(input[from + 1]), Int(input[from + 2]), Int(input[from + 3]))
                        }
                        if format.alpha == .premultiplied, a > 0, a < 255 {
                            r = min(255, (r * 255 + a / 2) / a); g = min(255, (g * 255 + a / 2) / a); b = min(255, (b * 255 + a / 2) / a)
                        }
                        output[to] = UInt8(r); output[to + 1] = UInt8(g); output[to + 2] = UInt8(b); output[to + 3] = UInt8(a)
                    }
                }
            }
            count = width * height * 4
        }
    }
}
