import WebImage

/// thumbor's per-pixel colour filters, with its integer arithmetic, so that the same URL gives
/// the same pixels: `brightness(n)` adds n % of 255, `contrast(n)` scales the distance from 128
/// by ((n + 100)² / 100) %, `rgb(r,g,b)` adds each channel's percentage of 255, and
/// `saturation(x)` moves each channel away from the pixel's perceived brightness
/// (√(0.299 R² + 0.587 G² + 0.114 B²)) by the factor x, `colorize(r,g,b,fill)` blends each
/// channel towards the fill colour's by its percentage, and `curve(…)` looks the channels up in
/// tone curves (``ThumborCurve``). Alpha is left alone, as thumbor does.
struct ThumborColorFilter: ImageProcessor, Hashable {
    enum Operation: Hashable, Sendable {
        case brightness(Int)
        case contrast(Int)
        case rgb(Int, Int, Int)
        case saturation(Double)
        /// Each channel's percentage of the fill colour (red, green, blue).
        case colorize(Int, Int, Int, fill: [UInt8])
        case curve(ThumborCurve)

        var key: String {
            switch self {
            case .brightness(let delta): "b\(delta)"
            case .contrast(let delta): "c\(delta)"
            case .rgb(let r, let g, let b): "rgb\(r):\(g):\(b)"
            case .saturation(let change): "s\(ProxyRequest.text(change))"
            case .colorize(let r, let g, let b, let fill): "col\(r):\(g):\(b):" + fill.map(String.init).joined(separator: ":")
            case .curve(let curve): curve.key
            }
        }
    }

    var operations: [Operation]

    var identifier: String { "thumbor-color(" + operations.map(\.key).joined(separator: ",") + ")" }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        try image.mappingFrames(apply)
    }

    /// The filtered copy: RGB stays RGB, everything else becomes straight RGBA (grey replicated,
    /// premultiplied colour divided by its alpha first, as thumbor's filters see straight colour).
    private func apply(_ bitmap: Bitmap) throws -> Bitmap {
        let output: PixelFormat = bitmap.pixelFormat == .rgb8 ? .rgb8 : .rgba8
        let step = output.bytesPerPixel, rowBytes = bitmap.width * step
        return try Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: output) { buffer in
            let pixels = buffer.bindMemory(to: UInt8.self)
            bitmap.pixels.withUnsafeBufferPointer { input in
                for row in 0..<bitmap.height {
                    for x in 0..<bitmap.width {
                        let pixel = bitmap.straightPixel(input, x, row), target = row * rowBytes + x * step
                        for channel in 0..<step { pixels[target + channel] = UInt8(pixel[channel]) }
                        for operation in operations { Self.apply(operation, to: pixels, at: target) }
                    }
                }
            }
        }
    }

    /// One pixel's R, G and B at `offset`, changed in place.
    private static func apply(_ operation: Operation, to pixels: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        let r = Int(pixels[offset]), g = Int(pixels[offset + 1]), b = Int(pixels[offset + 2])
        let result: (Int, Int, Int)
        switch operation {
        case .brightness(let percent):
            let delta = 255 * percent / 100
            result = (r + delta, g + delta, b + delta)
        case .contrast(let percent):
            let factor = (percent + 100) * (percent + 100) / 100
            result = (factor * (r - 128) / 100 + 128, factor * (g - 128) / 100 + 128, factor * (b - 128) / 100 + 128)
        case .rgb(let dr, let dg, let db):
            result = (r + 255 * dr / 100, g + 255 * dg / 100, b + 255 * db / 100)
        case .saturation(let change):
            // thumbor computes in single precision and truncates toward zero.
            let p = Float(Double(r * r) * 0.299 + Double(g * g) * 0.587 + Double(b * b) * 0.114).squareRoot()
            let factor = Float(change)
            result = (Int(p + (Float(r) - p) * factor), Int(p + (Float(g) - p) * factor), Int(p + (Float(b) - p) * factor))
        case .colorize(let percentR, let percentG, let percentB, let fill):
            // In double precision, truncated toward zero, as thumbor's C does.
            func blend(_ value: Int, _ percent: Int, _ fill: UInt8) -> Int {
                Int((Double(value) * (100 - Double(percent)) + Double(fill) * Double(percent)) / 100)
            }
            result = (blend(r, percentR, fill[0]), blend(g, percentG, fill[1]), blend(b, percentB, fill[2]))
        case .curve(let curve):
            result = curve.apply(r, g, b)
        }
        pixels[offset] = UInt8(clamping: result.0)
        pixels[offset + 1] = UInt8(clamping: result.1)
        pixels[offset + 2] = UInt8(clamping: result.2)
    }
}
