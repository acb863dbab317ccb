import WebImage

/// thumbor's `convolution(items,columns,normalize)`: every pixel becomes the sum of its
/// neighbours weighted by a kernel of odd width and height centred on it, the edge pixels
/// repeated past the image's sides. As in thumbor, the kernel is divided by the sum of its items
/// when `normalize` is true (and the sum is not 0), alpha is convolved with the colours when the
/// image has it (straight, not premultiplied), and each sum is truncated toward zero, then
/// clamped to 0…255.
struct ThumborConvolution: ImageProcessor, Hashable {
    /// The kernel's items, row by row, as the URL gives them.
    var items: [Double]
    var columns: Int
    var normalizes: Bool

    /// The largest kernel side accepted: a kernel of n × n items costs n² multiplications a
    /// channel and pixel, so a 101 × 101 kernel on a 4096 px output would take minutes.
    static let maximumSide = 15

    var identifier: String {
        "thumbor-convolution(\(items.map { ProxyRequest.text($0) }.joined(separator: ";")),\(columns),\(normalizes))"
    }

    /// The key's words for it.
    var key: String { "conv=" + items.map { ProxyRequest.text($0) }.joined(separator: ";") + ",\(columns),\(normalizes ? 1 : 0)" }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        // Each item of the kernel, for each of four channels.
        try FilterCost.check(image, tapsPerPixel: items.count * 4, name: "convolution")
        return try image.mappingFrames(apply)
    }

    /// The kernel the sums use.
    private var kernel: [Double] {
        let sum = items.reduce(0, +)
        return normalizes && sum != 0 ? items.map { $0 / sum } : items
    }

    /// A sum truncated toward zero and clamped, as thumbor's `(int)` then `ADJUST_COLOR` do.
    private static func level(_ sum: Double) -> UInt8 {
        guard sum > 0 else { return 0 }
        return UInt8(min(255, sum.rounded(.towardZero)))
    }

    /// The convolved copy: straight RGBA when `bitmap` has alpha, else RGB.
    private func apply(_ bitmap: Bitmap) throws -> Bitmap {
        let input = bitmap.straightRGBA8(), kernel = kernel
        let width = bitmap.width, height = bitmap.height, rows = items.count / columns
        let channels = bitmap.pixelFormat.hasAlpha ? 4 : 3
        let (midX, midY) = (columns / 2, rows / 2)
        return try Bitmap(width: width, height: height, pixelFormat: channels == 4 ? .rgba8 : .rgb8, scale: bitmap.scale) { buffer in
            let output = buffer.bindMemory(to: UInt8.self)
            try input.withUnsafeBufferPointer { pixels in
                for y in 0..<height {
                    if y % 64 == 0 { try WorkDeadline.check("convolving row \(y) of \(height)") }
                    for x in 0..<width {
                        var sums = SIMD4<Double>()
                        for ky in 0..<rows {
                            let row = min(max(y + ky - midY, 0), height - 1) * width
                            for kx in 0..<columns {
                                let from = (row + min(max(x + kx - midX, 0), width - 1)) * 4
                                let pixel = SIMD4(Double(pixels[from]), Double(pixels[from + 1]), Double(pixels[from + 2]), Double(pixels[from + 3]))
                                sums += pixel * kernel[ky * columns + kx]
                            }
                        }
                        let to = (y * width + x) * channels
                        for channel in 0..<channels { output[to + channel] = Self.level(sums[channel]) }
                    }
                }
            }
        }
    }
}
