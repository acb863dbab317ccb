import Foundation
import WebImage

extension RecipeCanvas {
    /// thumbor's `fill(blur)` background: the image (as it is after the rest of the work) blurred
    /// as thumbor's `blur(50)` blurs it, at the image's own size, then stretched over the whole
    /// canvas, whatever its aspect ratio.
    ///
    /// thumbor's blur of radius 50 is a Gaussian of σ 50 cut off at ±50 pixels and normalised,
    /// with the edge pixels repeated past the edges; both matter (the repeated edge colours the
    /// bands nearest it), so this kernel is the same. Unlike thumbor's it weighs colour by alpha,
    /// so that transparent pixels do not darken their neighbours. Its cost grows with the radius:
    /// an image longer than ``backdropWorkingSide`` is blurred at that size, with the kernel
    /// scaled alike (the result is stretched and featureless anyway).
    static func backdrop(of bitmap: Bitmap, width: Int, height: Int) throws -> Bitmap {
        let longest = max(bitmap.width, bitmap.height)
        let scale = min(1, Double(backdropWorkingSide) / Double(longest))
        let small = scale < 1
            ? try bitmap.resized(width: max(1, Int((Double(bitmap.width) * scale).rounded())), height: max(1, Int((Double(bitmap.height) * scale).rounded())))
            : bitmap
        let blurred = try blur(small, radius: max(1, Int((backdropRadius * scale).rounded())), sigma: backdropRadius * scale)
        return try blurred.resized(width: width, height: height)
    }

    /// thumbor's `fill(blur)` radius (and sigma), in pixels of the image.
    static let backdropRadius = 50.0
    /// The longest side the backdrop is blurred at: 101 taps a pixel and axis on 400 × 400 is
    /// about 0.1 s.
    static let backdropWorkingSide = 400

    /// `bitmap` convolved with the normalised Gaussian of `sigma` over ±`radius` pixels, rows
    /// then columns, edges repeated, on alpha-weighted colour; straight RGBA (RGB when opaque) out.
    private static func blur(_ bitmap: Bitmap, radius: Int, sigma: Double) throws -> Bitmap {
        let width = bitmap.width, height = bitmap.height
        var weights = (-radius...radius).map { Float(exp(-Double($0 * $0) / (2 * sigma * sigma))) }
        let total = weights.reduce(0, +)
        weights = weights.map { $0 / total }
        var plane = [SIMD4<Float>](repeating: .zero, count: width * height)
        bitmap.pixels.withUnsafeBufferPointer { input in
            for row in 0..<height {
                for column in 0..<width {
                    let pixel = bitmap.straightPixel(input, column, row)
                    let alpha = Float(pixel[3])
                    plane[row * width + column] = SIMD4(Float(pixel[0]) * alpha, Float(pixel[1]) * alpha, Float(pixel[2]) * alpha, alpha * 255) / 255
                }
            }
        }
        var line = [SIMD4<Float>](repeating: .zero, count: max(width, height))
        for row in 0..<height {
            let base = row * width
            for x in 0..<width {
                var sum = SIMD4<Float>.zero
                for tap in -radius...radius { sum += plane[base + min(width - 1, max(0, x + tap))] * weights[tap + radius] }
                line[x] = sum
            }
            for x in 0..<width { plane[base + x] = line[x] }
        }
        for column in 0..<width {
            for y in 0..<height {
                var sum = SIMD4<Float>.zero
                for tap in -radius...radius { sum += plane[min(height - 1, max(0, y + tap)) * width + column] * weights[tap + radius] }
                line[y] = sum
            }
            for y in 0..<height { plane[y * width + column] = line[y] }
        }
        let opaque = !bitmap.pixelFormat.hasAlpha
        let format: PixelFormat = opaque ? .rgb8 : .rgba8
        let step = format.bytesPerPixel
        return try Bitmap(width: width, height: height, pixelFormat: format, scale: bitmap.scale) { buffer in
            let out = buffer.bindMemory(to: UInt8.self)
            for index in 0..<(width * height) {
                let value = plane[index], alpha = value[3]
                for channel in 0..<3 {
                    // Back to straight colour (thumbor truncates its sums; so does this).
                    let colour = alpha > 0 ? value[channel] * 255 / alpha : 0
                    out[index * step + channel] = UInt8(min(255, max(0, colour)))
                }
                if !opaque { out[index * step + 3] = UInt8(min(255, max(0, alpha))) }
            }
        }
    }
}
