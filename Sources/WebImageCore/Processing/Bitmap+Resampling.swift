import Foundation

extension Bitmap {
    /// The bitmap resampled to `width` × `height` with a Lanczos-3 filter, separable, with
    /// alpha premultiplied while filtering so transparent pixels do not bleed dark fringes.
    ///
    /// ```swift
    /// let thumbnail = try photo.resized(width: 256, height: 160)
    /// ```
    ///
    /// - Throws: ``ImageError/invalidBitmap(_:)`` for a size that is not positive.
    public func resized(width newWidth: Int, height newHeight: Int) throws -> Bitmap {
        guard newWidth > 0, newHeight > 0 else {
            throw ImageError.invalidBitmap("cannot resize to \(newWidth)×\(newHeight)")
        }
        if newWidth == width && newHeight == height { return self }
        return try Resampler.lanczos3(self, width: newWidth, height: newHeight)
    }
}

/// Separable resampling. This is the plain reference implementation (floating point, one pass
/// per axis); it is correct, and the resampling work replaces its inner loops with fast ones.
enum Resampler {
    struct Contributions {
        var start: [Int]
        var count: [Int]
        var weights: [Float]
        var stride: Int
    }

    static func lanczos(_ x: Double) -> Double {
        if x == 0 { return 1 }
        if abs(x) >= 3 { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// For each output position, the input span and normalised weights.
    static func contributions(input: Int, output: Int) -> Contributions {
        let scale = Double(output) / Double(input)
        let support = scale < 1 ? 3 / scale : 3
        let filterScale = scale < 1 ? scale : 1
        let stride = Int(support.rounded(.up)) * 2 + 1
        var result = Contributions(start: [], count: [], weights: [Float](repeating: 0, count: stride * output), stride: stride)
        for position in 0..<output {
            let center = (Double(position) + 0.5) / scale
            let first = max(0, Int((center - support).rounded(.down)))
            let last = min(input - 1, Int((center + support).rounded(.up)))
            var weights: [Double] = []
            for x in first...last {
                weights.append(lanczos((Double(x) + 0.5 - center) * filterScale))
            }
            let total = weights.reduce(0, +)
            let count = min(weights.count, stride)
            for index in 0..<count {
                result.weights[position * stride + index] = Float(weights[index] / (total == 0 ? 1 : total))
            }
            result.start.append(first)
            result.count.append(count)
        }
        return result
    }

    static func lanczos3(_ bitmap: Bitmap, width: Int, height: Int) throws -> Bitmap {
        let channels = bitmap.pixelFormat.bytesPerPixel
        let alphaChannel = bitmap.pixelFormat.alpha == .straight ? channels - 1 : nil
        // Premultiplied float working copy.
        var source = [Float](repeating: 0, count: bitmap.width * bitmap.height * channels)
        bitmap.pixels.withUnsafeBytes { input in
            for y in 0..<bitmap.height {
                for x in 0..<bitmap.width {
                    let from = y * bitmap.bytesPerRow + x * channels
                    let to = (y * bitmap.width + x) * channels
                    let alpha = alphaChannel.map { Float(input[from + $0]) / 255 } ?? 1
                    for channel in 0..<channels {
                        let value = Float(input[from + channel])
                        source[to + channel] = channel == alphaChannel ? value : value * alpha
                    }
                }
            }
        }
        let horizontal = contributions(input: bitmap.width, output: width)
        var middle = [Float](repeating: 0, count: width * bitmap.height * channels)
        for y in 0..<bitmap.height {
            for x in 0..<width {
                for channel in 0..<channels {
                    var sum: Float = 0
                    for k in 0..<horizontal.count[x] {
                        sum += source[(y * bitmap.width + horizontal.start[x] + k) * channels + channel] * horizontal.weights[x * horizontal.stride + k]
                    }
                    middle[(y * width + x) * channels + channel] = sum
                }
            }
        }
        let vertical = contributions(input: bitmap.height, output: height)
        return try Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat, scale: bitmap.scale) { out in
            for y in 0..<height {
                for x in 0..<width {
                    var sums = [Float](repeating: 0, count: channels)
                    for k in 0..<vertical.count[y] {
                        let row = vertical.start[y] + k
                        for channel in 0..<channels {
                            sums[channel] += middle[(row * width + x) * channels + channel] * vertical.weights[y * vertical.stride + k]
                        }
                    }
                    let alpha = alphaChannel.map { min(max(sums[$0], 0), 255) / 255 } ?? 1
                    for channel in 0..<channels {
                        var value = sums[channel]
                        if channel != alphaChannel, alphaChannel != nil { value = alpha > 0 ? value / alpha : 0 }
                        out[(y * width + x) * channels + channel] = UInt8(min(max(value.rounded(), 0), 255))
                    }
                }
            }
        }
    }
}
