import WebImageCore

extension Bitmap {
    /// The R, G, B of the pixel at (`x`, `y`).
    public func rgb(_ x: Int, _ y: Int) -> [Double] {
        let offset = y * bytesPerRow + x * pixelFormat.bytesPerPixel
        return (0..<3).map { Double(pixels[offset + $0]) }
    }

    /// R, G, B interpolated at (`u`, `v`) in pixel coordinates (0 is the first pixel's centre),
    /// clamped to the edges: what a screen shows of a small picture drawn larger.
    public func bilinear(_ u: Double, _ v: Double) -> [Double] {
        let u = min(max(u, 0), Double(width - 1)), v = min(max(v, 0), Double(height - 1))
        let x0 = Int(u), y0 = Int(v), x1 = min(x0 + 1, width - 1), y1 = min(y0 + 1, height - 1)
        let fx = u - Double(x0), fy = v - Double(y0)
        let (a, b, c, d) = (rgb(x0, y0), rgb(x1, y0), rgb(x0, y1), rgb(x1, y1))
        return (0..<3).map { channel in
            (a[channel] * (1 - fx) + b[channel] * fx) * (1 - fy) + (c[channel] * (1 - fx) + d[channel] * fx) * fy
        }
    }
}
