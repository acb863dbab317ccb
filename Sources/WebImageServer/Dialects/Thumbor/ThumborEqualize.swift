import WebImage

/// thumbor's `equalize()`: histogram equalisation of each colour channel on its own, so that
/// each channel's levels spread over 0–255 in proportion to how many pixels have them. A level
/// *v* becomes `(cdf(v) − cdf(min)) / (pixels − cdf(min)) · 255`, truncated, where `cdf` counts
/// the pixels at or below a level and `min` is the channel's lowest level, as thumbor computes
/// it. Every pixel counts, transparent or not (thumbor's too); alpha is left alone; grey stays
/// grey.
///
/// Two departures, both where thumbor's arithmetic is wrong: thumbor takes `cdf(min)` only for
/// the channels whose lowest level is the lowest of all three (it stops looking at the first
/// level any channel has) and uses 0 for the others, so their darkest level does not become 0;
/// and it divides by zero on a channel of one level, which is left as it is here.
struct ThumborEqualize: ImageProcessor, Hashable {
    var identifier: String { "thumbor-equalize" }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        try image.mappingFrames(apply)
    }

    private func apply(_ bitmap: Bitmap) throws -> Bitmap {
        let format = bitmap.pixelFormat, step = format.bytesPerPixel
        let colours = format.channels == .gray || format.channels == .grayAlpha ? 1 : 3
        var histograms = [[Int]](repeating: [Int](repeating: 0, count: 256), count: colours)
        for row in 0..<bitmap.height {
            var offset = row * bitmap.bytesPerRow
            for _ in 0..<bitmap.width {
                for channel in 0..<colours { histograms[channel][Int(bitmap.pixels[offset + channel])] += 1 }
                offset += step
            }
        }
        let area = bitmap.width * bitmap.height
        let tables: [[UInt8]] = histograms.map { histogram in
            var table = [UInt8](0...255), cumulative = 0, lowest: Int?
            for level in 0..<256 where histogram[level] > 0 {
                cumulative += histogram[level]
                if lowest == nil { lowest = cumulative }
                guard let lowest, area > lowest else { continue }
                // Single precision and truncation, as thumbor's.
                table[level] = UInt8(Float(cumulative - lowest) / Float(area - lowest) * 255)
            }
            return table
        }
        return try Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: format, bytesPerRow: bitmap.bytesPerRow, scale: bitmap.scale) { buffer in
            let out = buffer.bindMemory(to: UInt8.self)
            _ = out.initialize(from: bitmap.pixels)
            for row in 0..<bitmap.height {
                var offset = row * bitmap.bytesPerRow
                for _ in 0..<bitmap.width {
                    // Premultiplied colour may not exceed its alpha.
                    let ceiling = format.alpha == .premultiplied ? out[offset + step - 1] : 255
                    for channel in 0..<colours { out[offset + channel] = min(ceiling, tables[channel][Int(out[offset + channel])]) }
                    offset += step
                }
            }
        }
    }
}
