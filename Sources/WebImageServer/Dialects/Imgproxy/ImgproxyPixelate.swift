import WebImage

/// imgproxy's `pixelate:%size`/`pix:%size`: the image as blocks of `size` × `size` pixels, each
/// of one colour, the mean of the pixels it covers, as imgproxy makes them (libvips' shrink by
/// `size`, then zoom back). The blocks start at the top-left corner; those cut by the right and
/// bottom edges average as if the edge pixels went on (imgproxy first extends the image to whole
/// blocks by repeating them). Colour is averaged weighted by alpha, so transparent pixels lend
/// a block no colour; the format is kept.
struct ImgproxyPixelate: ImageProcessor, Hashable {
    var size: Int

    var identifier: String { "imgproxy-pixelate(\(size))" }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        guard size > 1 else { return image }
        return try image.mappingFrames(apply)
    }

    private func apply(_ bitmap: Bitmap) throws -> Bitmap {
        let format = bitmap.pixelFormat, step = format.bytesPerPixel
        let colours = format.channels == .gray || format.channels == .grayAlpha ? 1 : 3
        // Straight alpha is weighted into the colour; premultiplied already is.
        let weighs = format.alpha == .straight
        return try Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: format, bytesPerRow: bitmap.bytesPerRow, scale: bitmap.scale) { buffer in
            let out = buffer.bindMemory(to: UInt8.self)
            _ = out.initialize(from: bitmap.pixels)
            for top in stride(from: 0, to: bitmap.height, by: size) {
                let bottom = min(bitmap.height, top + size)
                for left in stride(from: 0, to: bitmap.width, by: size) {
                    let right = min(bitmap.width, left + size)
                    var sums = SIMD4<Int>.zero
                    // The whole block, the edge pixels standing in for what lies past the edges:
                    // the last row and column of the image count as often as they are repeated.
                    for row in top..<bottom {
                        let rowWeight = row == bitmap.height - 1 ? top + size - row : 1
                        for column in left..<right {
                            let weight = rowWeight * (column == bitmap.width - 1 ? left + size - column : 1)
                            let offset = row * bitmap.bytesPerRow + column * step
                            let alpha = format.hasAlpha ? Int(bitmap.pixels[offset + step - 1]) : 255
                            for channel in 0..<colours {
                                sums[channel] += Int(bitmap.pixels[offset + channel]) * (weighs ? alpha : 1) * weight
                            }
                            sums[3] += alpha * weight
                        }
                    }
                    let count = size * size
                    var block = SIMD4<Int>.zero
                    for channel in 0..<colours {
                        let divisor = weighs ? sums[3] : count
                        block[channel] = divisor == 0 ? 0 : (sums[channel] + divisor / 2) / divisor
                    }
                    block[3] = (sums[3] + count / 2) / count
                    for row in top..<bottom {
                        for column in left..<right {
                            let offset = row * bitmap.bytesPerRow + column * step
                            for channel in 0..<colours { out[offset + channel] = UInt8(block[channel]) }
                            if format.hasAlpha { out[offset + step - 1] = UInt8(block[3]) }
                        }
                    }
                }
            }
        }
    }
}
