import Foundation

/// Where an image draws the eye: the point a content-aware crop centres on, found the way
/// libvips' "attention" strategy finds it (re-created from its description, on a reduced copy so
/// that its cost is a small fraction of a decode).
///
/// 1. The image is averaged over blocks so that its longest side is at most ``workingSide``
///    pixels (premultiplied by alpha, so transparent content does not count; blocks sampled on
///    two of their rows, and every other column from 4 pixels on).
/// 2. Each pixel scores three things, in CIE XYZ (Y from 0 to 100): detail, five times the
///    magnitude of the Laplacian of Y (rounded to whole units); skin, 100 − 100 × the distance of
///    the XYZ direction from a skin tone's (0.78, 0.57, 0.44); and saturation, the CIE LCh
///    chroma. Skin and saturation count only where Y > 5, and are scored on each 2 × 2 block's
///    mean colour.
/// 3. The sum is averaged into a 32 × 32 grid (whatever the image's shape), blurred with a
///    Gaussian whose σ is a tenth of the crop's diagonal in grid cells, and the best cell wins:
///    the crop is centred on its top-left corner, as libvips centres it.
///
/// On the 27 JPEG and PNG photos of the corpus, square crops of the shorter side placed this
/// way overlap libvips 8.18's (pyvips) by an intersection-over-union of at least 0.6 on 23
/// (`make bench GROUPS=smartcrop`); finding the window costs 9 % of a whole smart thumbnail
/// (decode, window, crop, resize, encode).
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
        let reduced = BlockAverages(bitmap, block: block)
        let scores = Self.scores(reduced)
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
    /// at the right and bottom left out), made a row at a time so that the reduced image is never
    /// held whole.
    struct BlockAverages {
        let bitmap: Bitmap
        /// The reduced image's size.
        let width: Int
        let height: Int
        private let blockX: Int, blockY: Int, stride: Int, rowStride: Int, samplesX: Int, weight: Float

        init(_ bitmap: Bitmap, block: Int) {
            self.bitmap = bitmap
            width = max(1, bitmap.width / block)
            height = max(1, bitmap.height / block)
            blockX = min(block, bitmap.width)
            blockY = min(block, bitmap.height)
            // Blocks of 3 pixels or more are sampled on two of their rows (every other column too
            // from 4 on): a quarter of the reads or less, and still four samples or more a block.
            // Reading fewer pixels changed no window on the corpus; it halves this step's time.
            stride = block >= 4 ? 2 : 1
            rowStride = max(stride, (blockY + 1) / 2)
            samplesX = (blockX + stride - 1) / stride
            weight = 1 / Float(samplesX * ((blockY + rowStride - 1) / rowStride) * 255)
        }

        /// Row `blockRow` of the reduced image into `output` (`width` pixels); `sums` is scratch
        /// space of `3 × width`. Buffers are borrowed by the caller once, so that these loops pay
        /// for no bounds, uniqueness or exclusivity checks.
        func row(
            _ blockRow: Int, from bytes: UnsafeBufferPointer<UInt8>, sums: UnsafeMutableBufferPointer<Int>,
            into output: UnsafeMutableBufferPointer<SIMD3<Float>>
        ) {
            let format = bitmap.pixelFormat, step = format.bytesPerPixel
            let isGray = format.channels == .gray || format.channels == .grayAlpha
            let premultiplies = format.hasAlpha && format.alpha != .premultiplied
            let green = isGray ? 0 : 1, blue = isGray ? 0 : 2, alpha = step - 1
            for index in 0..<(width * 3) { sums[index] = 0 }
            for y in Swift.stride(from: blockRow * blockY, to: (blockRow + 1) * blockY, by: rowStride) {
                let line = y * bitmap.bytesPerRow
                if step == 4, !isGray {
                    // RGBA, the common case: a pixel at a time in one vector.
                    let base = UnsafeRawPointer(bytes.baseAddress!) + line
                    for column in 0..<width {
                        var sum = SIMD4<Int32>.zero
                        var at = column * blockX * 4
                        for _ in 0..<samplesX {
                            let pixel = SIMD4<Int32>(truncatingIfNeeded: base.loadUnaligned(fromByteOffset: at, as: SIMD4<UInt8>.self))
                            sum &+= pixel &* (premultiplies ? pixel[3] : 255)
                            at += 4 * stride
                        }
                        sums[column * 3] += Int(sum[0])
                        sums[column * 3 + 1] += Int(sum[1])
                        sums[column * 3 + 2] += Int(sum[2])
                    }
                    continue
                }
                for column in 0..<width {
                    var r = 0, g = 0, b = 0
                    var at = line + column * blockX * step
                    for _ in 0..<samplesX {
                        let a = premultiplies ? Int(bytes[at + alpha]) : 255
                        r += Int(bytes[at]) * a
                        g += Int(bytes[at + green]) * a
                        b += Int(bytes[at + blue]) * a
                        at += step * stride
                    }
                    sums[column * 3] += r
                    sums[column * 3 + 1] += g
                    sums[column * 3 + 2] += b
                }
            }
            for column in 0..<width {
                output[column] = SIMD3(Float(sums[column * 3]), Float(sums[column * 3 + 1]), Float(sums[column * 3 + 2])) * weight
            }
        }
    }

    /// Detail + skin + saturation per pixel (see the type's documentation). The colour terms,
    /// which cost most (two square roots, three cube roots), are computed once for each 2 × 2
    /// block of pixels from the block's mean XYZ and given to its four pixels: the grid's cells
    /// average some 200 pixels each, so this moves their means by little, at a quarter of the
    /// work. Rows are reduced and scored two at a time, so that only the rounded Y of every pixel
    /// is kept for the detail term.
    private static func scores(_ reduced: BlockAverages) -> [Float] {
        let width = reduced.width, height = reduced.height
        // Scratch space allocated here, not borrowed from arrays one closure inside another.
        let rounded = UnsafeMutableBufferPointer<Float>.allocate(capacity: width * height)
        let blockSums = UnsafeMutableBufferPointer<SIMD3<Float>>.allocate(capacity: (width + 1) / 2)
        let row = UnsafeMutableBufferPointer<SIMD3<Float>>.allocate(capacity: width)
        let sums = UnsafeMutableBufferPointer<Int>.allocate(capacity: width * 3)
        defer { rounded.deallocate(); blockSums.deallocate(); row.deallocate(); sums.deallocate() }
        return [Float](unsafeUninitializedCapacity: width * height) { scores, count in
            linearTable.withUnsafeBufferPointer { linear in
                labTable.withUnsafeBufferPointer { lab in
                    reduced.bitmap.pixels.withUnsafeBufferPointer { bytes in
                        for top in Swift.stride(from: 0, to: height, by: 2) {
                            let bottom = min(top + 2, height)
                            blockSums.initialize(repeating: .zero)
                            for y in top..<bottom {
                                reduced.row(y, from: bytes, sums: sums, into: row)
                                for x in 0..<width {
                                    let colour = Self.xyz(row[x], linear)
                                    rounded[y * width + x] = Float(Int(colour.y + 0.5))
                                    blockSums[x / 2] += colour
                                }
                            }
                            for block in blockSums.indices {
                                let left = block * 2, right = min(left + 2, width)
                                let score = colourScore(blockSums[block] / Float((bottom - top) * (right - left)), lab)
                                for y in top..<bottom {
                                    for x in left..<right { scores[y * width + x] = score }
                                }
                            }
                        }
                    }
                }
            }
            for y in 1..<max(1, height - 1) {
                for x in 1..<max(1, width - 1) {
                    let index = y * width + x
                    let laplacian = 4 * rounded[index] - rounded[index - 1] - rounded[index + 1] - rounded[index - width] - rounded[index + width]
                    scores[index] += abs(5 * laplacian)
                }
            }
            count = width * height
        }
    }

    /// Skin plus saturation for a colour in XYZ, 0 where Y ≤ 5.
    @inline(__always)
    private static func colourScore(_ colour: SIMD3<Float>, _ lab: UnsafeBufferPointer<Float>) -> Float {
        guard colour.y > 5 else { return 0 }
        let direction = colour / max(1e-9, (colour * colour).sum().squareRoot())
        let distance = direction - SIMD3(0.78, 0.57, 0.44)
        return 100 - 100 * (distance * distance).sum().squareRoot() + chroma(colour, lab)
    }

    /// CIE XYZ (D65, Y from 0 to 100) of an sRGB colour with channels from 0 to 255, the sRGB
    /// curve read at the nearest quarter of a level (interpolating cost a sixth of the map's time
    /// and moved no window).
    @inline(__always)
    private static func xyz(_ rgb: SIMD3<Float>, _ linearTable: UnsafeBufferPointer<Float>) -> SIMD3<Float> {
        let r = linearTable[Int(rgb.x * 4 + 0.5)], g = linearTable[Int(rgb.y * 4 + 0.5)], b = linearTable[Int(rgb.z * 4 + 0.5)]
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
    @inline(__always)
    private static func interpolated(_ table: UnsafeBufferPointer<Float>, _ position: Float) -> Float {
        let clamped = min(max(position, 0), Float(table.count - 1))
        let index = min(Int(clamped), table.count - 2), fraction = clamped - Float(index)
        return table[index] + (table[index + 1] - table[index]) * fraction
    }

    /// The CIE LCh chroma of an XYZ colour (D65 white).
    @inline(__always)
    private static func chroma(_ xyz: SIMD3<Float>, _ labTable: UnsafeBufferPointer<Float>) -> Float {
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
