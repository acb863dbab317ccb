extension Bitmap {
    /// The bitmap turned upright from `orientation`: rotated and/or mirrored, so that an image
    /// stored with EXIF orientation 6 comes back as it should be seen.
    ///
    /// ```swift
    /// let upright = photo.oriented(.right)   // width and height swap
    /// ```
    public func oriented(_ orientation: ImageOrientation) -> Bitmap {
        guard orientation != .up else { return self }
        let bpp = pixelFormat.bytesPerPixel
        let (outWidth, outHeight) = orientation.swapsDimensions ? (height, width) : (width, height)
        let outRow = outWidth * bpp
        let w = width, h = height, rowBytes = bytesPerRow
        // For each destination pixel (x, y), the source pixel it comes from.
        let source: (Int, Int) -> (Int, Int) = switch orientation {
        case .up: { x, y in (x, y) }
        case .upMirrored: { x, y in (w - 1 - x, y) }
        case .down: { x, y in (w - 1 - x, h - 1 - y) }
        case .downMirrored: { x, y in (x, h - 1 - y) }
        case .leftMirrored: { x, y in (y, x) }
        case .right: { x, y in (y, h - 1 - x) }
        case .rightMirrored: { x, y in (w - 1 - y, h - 1 - x) }
        case .left: { x, y in (w - 1 - y, x) }
        }
        // Force-try: the dimensions are this bitmap's, swapped, so they are valid.
        return try! Bitmap(width: outWidth, height: outHeight, pixelFormat: pixelFormat, scale: scale) { out in
            pixels.withUnsafeBytes { input in
                for y in 0..<outHeight {
                    var (sx, sy) = source(0, y)
                    // Along a destination row the source moves by a fixed step.
                    let (nx, ny) = outWidth > 1 ? source(1, y) : (sx, sy)
                    let dx = nx - sx, dy = ny - sy
                    var target = y * outRow
                    for _ in 0..<outWidth {
                        let from = sy * rowBytes + sx * bpp
                        for channel in 0..<bpp { out[target + channel] = input[from + channel] }
                        target += bpp
                        sx += dx
                        sy += dy
                    }
                }
            }
        }
    }
}
