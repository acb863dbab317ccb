import Foundation
import WebImage

/// thumbor's `round_corner(a|b,r,g,b[,transparent])`: each corner cut to a quarter ellipse of
/// `a` pixels across and `b` down (each at most half its side, as thumbor clamps them), and
/// what lies outside painted in the colour, or made transparent. The arc is anti-aliased by
/// the share of each edge pixel that lies inside (from its centre's distance to the arc).
///
/// As in thumbor, a painted corner keeps the pixel's own alpha (an already transparent corner
/// stays so), and `transparent` gives the output an alpha channel. Where thumbor's arc darkens
/// the edge pixels of a transparent corner (it scales their colour, not their alpha), here
/// their alpha is scaled, so the edge fades to the background instead of to black.
struct ThumborRoundCorner: ImageProcessor, Hashable {
    var horizontalRadius: Int
    var verticalRadius: Int
    /// Red, green and blue of the corners.
    var colour: [UInt8]
    var transparent: Bool

    var identifier: String {
        "thumbor-round-corner(\(horizontalRadius)|\(verticalRadius),\(colour.map(String.init).joined(separator: ",")),\(transparent))"
    }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        try image.mappingFrames(apply)
    }

    /// How much of the pixel at (`x`, `y`) of the top-left corner lies inside the ellipse
    /// centred on (`a`, `b`) (pixel edges as coordinates): 1 inside, 0 outside.
    static func coverage(x: Int, y: Int, a: Double, b: Double) -> Double {
        let dx = a - (Double(x) + 0.5), dy = b - (Double(y) + 0.5)
        guard dx > 0, dy > 0 else { return 1 }
        let (u, v) = (dx / a, dy / b)
        let d = (u * u + v * v).squareRoot()
        // The distance to the arc in pixels, to first order: (d − 1) over d's gradient.
        let gradient = ((u / a) * (u / a) + (v / b) * (v / b)).squareRoot() / d
        return min(1, max(0, 0.5 - (d - 1) / gradient))
    }

    private func apply(_ bitmap: Bitmap) throws -> Bitmap {
        let a = min(horizontalRadius, bitmap.width / 2), b = min(verticalRadius, bitmap.height / 2)
        let input = bitmap.pixelFormat, inputStep = input.bytesPerPixel
        let greyInput = input.channels == .gray || input.channels == .grayAlpha
        let greyOutput = greyInput && colour[0] == colour[1] && colour[1] == colour[2]
        let alpha = input.hasAlpha || transparent
        let output: PixelFormat = greyOutput ? (alpha ? .grayAlpha8 : .gray8) : (alpha ? .rgba8 : .rgb8)
        let step = output.bytesPerPixel, colours = greyOutput ? 1 : 3
        // The coverage of the top-left corner's pixels, mirrored to the other three.
        var mask = [Double](repeating: 1, count: a * b)
        for y in 0..<b {
            for x in 0..<a { mask[y * a + x] = Self.coverage(x: x, y: y, a: Double(a), b: Double(b)) }
        }
        return try Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: output, scale: bitmap.scale) { buffer in
            let out = buffer.bindMemory(to: UInt8.self)
            for row in 0..<bitmap.height {
                let cornerRow = row < b ? row : bitmap.height - 1 - row < b ? bitmap.height - 1 - row : nil
                for column in 0..<bitmap.width {
                    let source = row * bitmap.bytesPerRow + column * inputStep, target = (row * bitmap.width + column) * step
                    var pixel = SIMD4<Int>(0, 0, 0, 255)
                    for channel in 0..<3 { pixel[channel] = Int(bitmap.pixels[source + (greyInput ? 0 : channel)]) }
                    if input.hasAlpha { pixel[3] = Int(bitmap.pixels[source + inputStep - 1]) }
                    if input.alpha == .premultiplied, pixel[3] > 0, pixel[3] < 255 {
                        for channel in 0..<3 { pixel[channel] = min(255, (pixel[channel] * 255 + pixel[3] / 2) / pixel[3]) }
                    }
                    if let cornerRow {
                        let cornerColumn = column < a ? column : bitmap.width - 1 - column < a ? bitmap.width - 1 - column : nil
                        if let cornerColumn {
                            let inside = mask[cornerRow * a + cornerColumn]
                            if transparent {
                                pixel[3] = Int((Double(pixel[3]) * inside).rounded())
                                if pixel[3] == 0 { pixel[0] = Int(colour[0]); pixel[1] = Int(colour[1]); pixel[2] = Int(colour[2]) }
                            } else {
                                for channel in 0..<3 {
                                    pixel[channel] = Int((Double(pixel[channel]) * inside + Double(colour[channel]) * (1 - inside)).rounded())
                                }
                            }
                        }
                    }
                    for channel in 0..<colours { out[target + channel] = UInt8(pixel[channel]) }
                    if alpha { out[target + step - 1] = UInt8(pixel[3]) }
                }
            }
        }
    }
}
