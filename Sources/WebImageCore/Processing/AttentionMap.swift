import Foundation

/// Where an image draws the eye: the point a content-aware crop centres on, found the way
/// libvips' "attention" strategy finds it (re-created from its description, on a reduced copy so
/// that its cost is a small fraction of a decode).
///
/// 1. The image is averaged over blocks so that its longest side is at most ``workingSide``
///    pixels (premultiplied by alpha, so transparent content does not count).
/// 2. Each pixel scores three things, in CIE XYZ (Y from 0 to 100): detail, five times the
///    magnitude of the Laplacian of Y (rounded to whole units); skin, 100 − 100 × the distance of
///    the pixel's XYZ direction from a skin tone's (0.78, 0.57, 0.44); and saturation, its CIE LCh
///    chroma. Skin and saturation count only where Y > 5.
/// 3. The sum is averaged into a 32 × 32 grid (whatever the image's shape), blurred with a
///    Gaussian whose σ is a tenth of the crop's diagonal in grid cells, and the best cell wins:
///    the crop is centred on its top-left corner, as libvips centres it.
///
/// On the 27 JPEG and PNG photos of the corpus, square crops of the shorter side placed this
/// way overlap libvips 8.18's (pyvips) by an intersection-over-union of at least 0.6 on 23.
struct AttentionMap {
    /// The longest side the scores are computed on.
    static let workingSide = 640
    /// The grid the scores are gathered into.
    static let gridSide = 32

    /// The grid cell that wins, and the image's size.
    let best: (column: Int, row: Int)
    let width: Int
    let height: Int

    init(_ bitmap: Bitmap, cropWidth: Int, cropHeight: Int) {
        width = bitmap.width
        height = bitmap.height
        let block = max(1, (max(bitmap.width, bitmap.height) + Self.workingSide - 1) / Self.workingSide)
        let reduced = Self.averages(bitmap, block: block)
        let scores = Self.scores(reduced.pixels, width: reduced.width, height: reduced.height)
        var grid = Self.grid(scores, width: reduced.width, height: reduced.height)
        let side = Double(Self.gridSide)
        let sigma = ((Double(cropWidth) * side / Double(bitmap.width)) * (Double(cropWidth) * side / Double(bitmap.width))
            + (Double(cropHeight) * side / Double(bitmap.height)) * (Double(cropHeight) * side / Double(bitmap.height))).squareRoot() / 10
        grid = Self.gaussianBlurred(grid, sigma: sigma)
        var index = 0
        for candidate in grid.indices where grid[candidate] > grid[index] { index = candidate }
        best = (index % Self.gridSide, index / Self.gridSide)
    }

    /// The point to centre the crop on, in the bitmap's pixels: the best cell's top-left corner.
    var center: (x: Int, y: Int) {
        (best.column * width / Self.gridSide, best.row * height / Self.gridSide)
    }

    /// Block averages of R, G and B (times alpha), `block` × `block` pixels each (partial blocks
    /// at the right and bottom left out).
    private static func averages(_ bitmap: Bitmap, block: Int) -> (pixels: [SIMD3<Float>], width: Int, height: Int) {
        let width = max(1, bitmap.width / block), height = max(1, bitmap.height / block)
        let blockX = min(block, bitmap.width), blockY = min(block, bitmap.height)
        let format = bitmap.pixelFormat, step = format.bytesPerPixel
        let isGray = format.channels == .gray || format.channels == .grayAlpha
        let premultiplies = format.hasAlpha && format.alpha != .premultiplied
        var pixels = [SIMD3<Float>](repeating: .zero, count: width * height)
        let weight = 1 / Float(blockX * blockY)
        bitmap.pixels.withUnsafeBufferPointer { bytes in
            for y in 0..<min(bitmap.height, height * blockY) {
                let line = y * bitmap.bytesPerRow, row = (y / blockY) * width
                for x in 0..<min(bitmap.width, width * blockX) {
                    let at = line + x * step
                    var colour = isGray ? SIMD3(repeating: Float(bytes[at])) : SIMD3(Float(bytes[at]), Float(bytes[at + 1]), Float(bytes[at + 2]))
                    if premultiplies { colour *= Float(bytes[at + step - 1]) / 255 }
                    pixels[row + x / blockX] += colour * weight
                }
            }
        }
        return (pixels, width, height)
    }

    /// Detail + skin + saturation per pixel (see the type's documentation).
    private static func scores(_ pixels: [SIMD3<Float>], width: Int, height: Int) -> [Float] {
        let xyz = pixels.map(Self.xyz)
        let rounded = xyz.map { $0.y.rounded() }
        var scores = [Float](repeating: 0, count: pixels.count)
        for y in 0..<height {
            for x in 0..<width {
                let index = y * width + x
                var score: Float = 0
                if x > 0, y > 0, x < width - 1, y < height - 1 {
                    let laplacian = 4 * rounded[index] - rounded[index - 1] - rounded[index + 1] - rounded[index - width] - rounded[index + width]
                    score += abs(5 * laplacian)
                }
                let colour = xyz[index]
                if colour.y > 5 {
                    let direction = colour / max(1e-9, (colour * colour).sum().squareRoot())
                    let distance = direction - SIMD3(0.78, 0.57, 0.44)
                    score += 100 - 100 * (distance * distance).sum().squareRoot()
                    score += chroma(colour)
                }
                scores[index] = score
            }
        }
        return scores
    }

    /// CIE XYZ (D65, Y from 0 to 100) of an sRGB colour with channels from 0 to 255.
    private static func xyz(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
        func linear(_ value: Float) -> Float {
            let v = value / 255
            return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        let r = linear(rgb.x), g = linear(rgb.y), b = linear(rgb.z)
        return 100 * SIMD3(0.4124 * r + 0.3576 * g + 0.1805 * b, 0.2126 * r + 0.7152 * g + 0.0722 * b, 0.0193 * r + 0.1192 * g + 0.9505 * b)
    }

    /// The CIE LCh chroma of an XYZ colour (D65 white).
    private static func chroma(_ xyz: SIMD3<Float>) -> Float {
        func f(_ t: Float) -> Float { t > 0.008856 ? cbrt(t) : 7.787 * t + 16 / 116 }
        let fx = f(xyz.x / 95.047), fy = f(xyz.y / 100), fz = f(xyz.z / 108.883)
        let a = 500 * (fx - fy), b = 200 * (fy - fz)
        return (a * a + b * b).squareRoot()
    }

    /// The mean score of each of the grid's cells (cell edges at whole pixels, as many cells on
    /// both axes whatever the shape).
    private static func grid(_ scores: [Float], width: Int, height: Int) -> [Double] {
        let side = gridSide
        var grid = [Double](repeating: 0, count: side * side)
        for row in 0..<side {
            let top = row * height / side, bottom = max(top + 1, min(height, (row + 1) * height / side))
            for column in 0..<side {
                let left = column * width / side, right = max(left + 1, min(width, (column + 1) * width / side))
                var sum = 0.0
                for y in top..<min(bottom, height) {
                    for x in left..<min(right, width) { sum += Double(scores[y * width + x]) }
                }
                grid[row * side + column] = sum / Double(max(1, (min(bottom, height) - top) * (min(right, width) - left)))
            }
        }
        return grid
    }

    /// A separable Gaussian blur of the grid, edges mirrored (the edge cell repeated first).
    private static func gaussianBlurred(_ grid: [Double], sigma: Double) -> [Double] {
        guard sigma > 0 else { return grid }
        let side = gridSide, radius = Int((4 * sigma).rounded(.up))
        let taps = (-radius...radius).map { exp(-0.5 * Double($0 * $0) / (sigma * sigma)) }
        let total = taps.reduce(0, +)
        func mirrored(_ index: Int) -> Int {
            var index = index
            while index < 0 || index >= side { index = index < 0 ? -index - 1 : 2 * side - index - 1 }
            return index
        }
        var horizontal = grid, output = grid
        for row in 0..<side {
            for column in 0..<side {
                horizontal[row * side + column] = (-radius...radius).reduce(0) { $0 + taps[$1 + radius] * grid[row * side + mirrored(column + $1)] } / total
            }
        }
        for row in 0..<side {
            for column in 0..<side {
                output[row * side + column] = (-radius...radius).reduce(0) { $0 + taps[$1 + radius] * horizontal[mirrored(row + $1) * side + column] } / total
            }
        }
        return output
    }
}
