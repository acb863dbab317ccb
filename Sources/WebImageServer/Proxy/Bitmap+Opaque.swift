import WebImage

extension Bitmap {
    /// Whether every pixel is fully opaque: no alpha channel, or every alpha sample 255.
    var isOpaque: Bool {
        guard pixelFormat.hasAlpha else { return true }
        let step = pixelFormat.bytesPerPixel, alphaOffset = step - 1
        return pixels.withUnsafeBufferPointer { samples in
            for row in 0..<height {
                let start = row * bytesPerRow
                for x in stride(from: start + alphaOffset, to: start + width * step, by: step) where samples[x] != 255 {
                    return false
                }
            }
            return true
        }
    }
}
