import Foundation

/// Where an image draws the eye: the point a content-aware crop centres on, found the way
/// libvips' "attention" strategy finds it (re-created from its description, on a reduced copy so
/// that its cost is a small fraction of a decode).
///
/// 1. The image is averaged over blocks so that its longest side is at most ``workingSide``
///    pixels (premultiplied by alpha, so transparent content does not count; blocks of 4 pixels
///    or more sampled on every other row and column).
/// 2. Each pixel scores three things, in CIE XYZ (Y from 0 to 100): detail, five times the
///    magnitude of the Laplacian of Y (rounded to whole units); skin, 100 − 100 × the distance of
///    the pixel's XYZ direction from a skin tone's (0.78, 0.57, 0.44); and saturation, its CIE LCh
///    chroma. Skin and saturation count only where Y > 5.
/// 3. The sum is averaged into a 32 × 32 grid (whatever the image's shape), blurred with a
///    Gaussian whose σ is a tenth of the crop's diagonal in grid cells, and the best cell wins:
///    the crop is centred on its top-left corner, as libvips centres it.
///
/// On the 27 JPEG and PNG photos of the corpus, square crops of the shorter side placed this
/// way overlap libvips 8.18's (pyvips) by an intersection-over-union of at least 0.6 on 23
/// (`make bench GROUPS=smartcrop`).
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
        // Blocks of 4 pixels or more are sampled on every other row and column: a quarter of the
        // reads, and still four samples or more a block.
        let stride = block >= 4 ? 2 : 1
        let samplesX = (blockX + stride - 1) / stride, samplesY = (blockY + stride - 1) / stride
        let weight = 1 / Float(samplesX * samplesY)
        bitmap.pixels.withUnsafeBufferPointer { bytes in
            for y in Swift.stride(from: 0, to: min(bitmap.height, height * blockY), by: stride) {
                let line = y * bitmap.bytesPerRow, row = (y / blockY) * width
                for column in 0..<width {
                    // Integer sums per block row: no division or conversion per pixel.
                    var r = 0, g = 0, b = 0
                    var at = line + column * blockX * step
                    for _ in 0..<samplesX {
                        if premultiplies {
                            let alpha = Int(bytes[at + step - 1])
                            r += Int(bytes[at]) * alpha
                            g += Int(bytes[at + (isGray ? 0 : 1)]) * alpha
                            b += Int(bytes[at + (isGray ? 0 : 2)]) * alpha
                        } else {
                            r += Int(bytes[at]) * 255
                            g += Int(bytes[at + (isGray ? 0 : 1)]) * 255
                            b += Int(bytes[at + (isGray ? 0 : 2)]) * 255
                        }
                        at += step * stride
                    }
                    pixels[row + column] += SIMD3(Float(r), Float(g), Float(b)) * (weight / 255)
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
        let r = interpolated(linearTable, rgb.x * 4), g = interpolated(linearTable, rgb.y * 4), b = interpolated(linearTable, rgb.z * 4)
        return 100 * SIMD3(0.4124 * r + 0.3576 * g + 0.1805 * b, 0.2126 * r + 0.7152 * g + 0.0722 * b, 0.0193 * r + 0.1192 * g + 0.9505 * b)
    }

    /// The sRGB curve undone, at every quarter of a channel value (0 to 255).
    private static let linearTable: [Float] = (0...1020).map { index in
        let v = Float(index) / 1020
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// CIE Lab's f(t) for t from 0 to 1.25, at 4,096ths of that range.
    private static let labTable: [Float] = (0...4096).map { index in
        let t = Float(index) / 4096 * 1.25
        return t > 0.008856 ? cbrt(t) : 7.787 * t + 16 / 116
    }

    /// `table` read at the fractional `position`, clamped to its ends.
    private static func interpolated(_ table: [Float], _ position: Float) -> Float {
        let clamped = min(max(position, 0), Float(table.count - 1))
        let index = min(Int(clamped), table.count - 2), fraction = clamped - Float(index)
        return table[index] + (table[index + 1] - table[index]) * fraction
    }

    /// The CIE LCh chroma of an XYZ colour (D65 white).
    private static func chroma(_ xyz: SIMD3<Float>) -> Float {
        let scale = Float(4096) / 1.25
        let fx = interpolated(labTable, xyz.x / 95.047 * scale)
        let fy = interpolated(labTable, xyz.y / 100 * scale)
        let fz = interpolated(labTable, xyz.z / 108.883 * scale)
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
