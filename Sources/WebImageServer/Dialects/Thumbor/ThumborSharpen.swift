import Foundation
import WebImage

/// thumbor's `sharpen(amount,radius,luminance_only)`: a wavelet sharpen, so that the same URL
/// gives thumbor's pixels. Each colour plane (or, with `luminanceOnly`, the luma of Y′CbCr) is
/// split by five levels of the à trous transform (the [1 2 1]/4 "hat" filter with holes of
/// 1, 2, 4, 8 and 16 pixels, edges mirrored); the detail of level *l* is amplified by
/// `amount · e^(−(l − radius)² / 1.5) + 1`, so `radius` picks the scale of detail that gains
/// most, and the levels are summed back onto the coarsest one. Values are clamped and
/// truncated to bytes, as thumbor does. Alpha is left alone; grey stays grey (its one plane
/// is its luma), other formats keep their layout.
///
/// thumbor's hat filter reads past the image when a hole is larger than the image (a side
/// under 17 pixels); here the mirror folds as often as needed instead.
struct ThumborSharpen: ImageProcessor, Hashable {
    var amount: Double
    var radius: Double
    var luminanceOnly: Bool

    var identifier: String {
        "thumbor-sharpen(\(ProxyRequest.text(amount)),\(ProxyRequest.text(radius)),\(luminanceOnly ? "luma" : "rgb"))"
    }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        // Five levels of a separable three-tap filter, rows and columns, on three planes.
        try FilterCost.check(image, tapsPerPixel: 5 * 2 * 3 * 3, name: "sharpen")
        return try image.mappingFrames(apply)
    }

    private func apply(_ bitmap: Bitmap) throws -> Bitmap {
        let format = bitmap.pixelFormat, step = format.bytesPerPixel
        let width = bitmap.width, height = bitmap.height, area = width * height
        let grey = format.channels == .gray || format.channels == .grayAlpha
        let colours = grey ? 1 : 3
        // One plane per colour channel, in the channel's own units (0–255).
        var planes = [[Float]](repeating: [Float](repeating: 0, count: area), count: colours)
        for row in 0..<height {
            for column in 0..<width {
                let offset = row * bitmap.bytesPerRow + column * step, index = row * width + column
                for channel in 0..<colours { planes[channel][index] = Float(bitmap.pixels[offset + channel]) }
            }
        }
        let luma = luminanceOnly && !grey
        if luma {
            for index in 0..<area {
                let (r, g, b) = (planes[0][index], planes[1][index], planes[2][index])
                planes[0][index] = 0.299 * r + 0.587 * g + 0.114 * b
                planes[1][index] = -0.1687 * r - 0.3313 * g + 0.5 * b + 128
                planes[2][index] = 0.5 * r - 0.4187 * g - 0.0813 * b + 128
            }
        }
        for channel in 0..<(luma ? 1 : colours) {
            try sharpen(&planes[channel], width: width, height: height)
        }
        if luma {
            for index in 0..<area {
                let (y, cb, cr) = (planes[0][index], planes[1][index] - 128, planes[2][index] - 128)
                planes[0][index] = y + 1.402 * cr
                planes[1][index] = y - 0.34414 * cb - 0.71414 * cr
                planes[2][index] = y + 1.772 * cb
            }
        }
        return try Bitmap(width: width, height: height, pixelFormat: format, bytesPerRow: bitmap.bytesPerRow, scale: bitmap.scale) { buffer in
            let out = buffer.bindMemory(to: UInt8.self)
            // Row padding and alpha as they were; the colour channels replaced below.
            _ = out.initialize(from: bitmap.pixels)
            for row in 0..<height {
                for column in 0..<width {
                    let offset = row * bitmap.bytesPerRow + column * step, index = row * width + column
                    // Premultiplied colour may not exceed its alpha.
                    let ceiling = format.alpha == .premultiplied ? Float(bitmap.pixels[offset + step - 1]) : 255
                    for channel in 0..<colours {
                        let value = planes[channel][index]
                        // Clamped, then truncated toward zero, as thumbor stores them.
                        out[offset + channel] = value >= ceiling ? UInt8(ceiling) : value <= 0 ? 0 : UInt8(value)
                    }
                }
            }
        }
    }

    /// Sharpens one plane in place: the sum of its five amplified detail levels and what is left.
    private func sharpen(_ plane: inout [Float], width: Int, height: Int) throws {
        var coarse = plane, smooth = plane
        var line = [Float](repeating: 0, count: max(width, height))
        for index in plane.indices { plane[index] = 0 }
        for level in 0..<5 {
            try WorkDeadline.check("sharpening level \(level + 1) of 5")
            let hole = 1 << level
            Self.hat(coarse, into: &smooth, width: width, height: height, hole: hole, line: &line)
            let distance = Double(level) - radius
            let gain = Float(amount * exp(-distance * distance / 1.5) + 1)
            for index in plane.indices { plane[index] += (coarse[index] - smooth[index]) * gain }
            swap(&coarse, &smooth)
        }
        for index in plane.indices { plane[index] += coarse[index] }
    }

    /// `source` smoothed by the separable hat filter (¼, ½, ¼ at −`hole`, 0, +`hole`), rows
    /// then columns, into `target`.
    private static func hat(_ source: [Float], into target: inout [Float], width: Int, height: Int, hole: Int, line: inout [Float]) {
        for row in 0..<height {
            let base = row * width
            for x in 0..<width {
                line[x] = 0.5 * source[base + x]
                    + 0.25 * (source[base + mirror(x - hole, width)] + source[base + mirror(x + hole, width)])
            }
            for x in 0..<width { target[base + x] = line[x] }
        }
        for column in 0..<width {
            for y in 0..<height {
                line[y] = 0.5 * target[y * width + column]
                    + 0.25 * (target[mirror(y - hole, height) * width + column] + target[mirror(y + hole, height) * width + column])
            }
            for y in 0..<height { target[y * width + column] = line[y] }
        }
    }

    /// `index` reflected into `0..<count` about the end pixels (which are not repeated).
    static func mirror(_ index: Int, _ count: Int) -> Int {
        guard count > 1 else { return 0 }
        let period = 2 * (count - 1)
        let folded = ((index % period) + period) % period
        return folded < count ? folded : period - folded
    }
}
