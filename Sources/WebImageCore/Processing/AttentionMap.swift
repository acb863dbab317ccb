/// Where an image draws the eye: the point a content-aware crop centres on.
///
/// The map is made on a reduced copy of the image (its longest side at most ``cellsPerSide``
/// cells, each the average of a block of pixels), so that its cost is a small fraction of a
/// decode. Each cell scores what attention strategies of image servers (libvips' "attention"
/// among them) look for: detail (the magnitude of the luma Laplacian, normalised to the image's
/// strongest), saturated colour, and skin tones. The scores are blurred over a tenth of the map's
/// shorter side, so that a region of interest wins over one sharp pixel, and the centre of the
/// best cell is the point.
struct AttentionMap {
    /// The longest side of the map, in cells.
    static let cellsPerSide = 160

    let columns: Int
    let rows: Int
    /// Pixels per cell, along both axes.
    let cellSize: Int
    private(set) var scores: [Float]

    init(_ bitmap: Bitmap) {
        cellSize = max(1, (max(bitmap.width, bitmap.height) + Self.cellsPerSide - 1) / Self.cellsPerSide)
        columns = max(1, bitmap.width / cellSize)
        rows = max(1, bitmap.height / cellSize)
        let cells = Self.averages(bitmap, columns: columns, rows: rows, cellSize: cellSize)
        scores = Self.score(cells, columns: columns, rows: rows)
        let radius = max(1, min(columns, rows) / 10)
        scores = Self.blurred(scores, columns: columns, rows: rows, radius: radius)
        scores = Self.blurred(scores, columns: columns, rows: rows, radius: radius)
    }

    /// The most interesting point, in the bitmap's pixels.
    var center: (x: Int, y: Int) {
        var best = 0
        for index in scores.indices where scores[index] > scores[best] { best = index }
        let column = best % columns, row = best / columns
        return (column * cellSize + cellSize / 2, row * cellSize + cellSize / 2)
    }

    /// The average R, G, B of each cell (blocks past the last whole cell are left out).
    private static func averages(_ bitmap: Bitmap, columns: Int, rows: Int, cellSize: Int) -> [SIMD3<Float>] {
        let channels = bitmap.pixelFormat.bytesPerPixel
        let isGray = bitmap.pixelFormat.channels == .gray || bitmap.pixelFormat.channels == .grayAlpha
        var cells = [SIMD3<Float>](repeating: .zero, count: columns * rows)
        let blockX = min(cellSize, bitmap.width), blockY = min(cellSize, bitmap.height)
        let weight = 1 / Float(blockX * blockY)
        bitmap.pixels.withUnsafeBufferPointer { pixels in
            for row in 0..<rows {
                for y in (row * cellSize)..<min(bitmap.height, row * cellSize + blockY) {
                    let line = y * bitmap.bytesPerRow
                    for column in 0..<columns {
                        var sum = SIMD3<Float>.zero
                        for x in (column * cellSize)..<min(bitmap.width, column * cellSize + blockX) {
                            let at = line + x * channels
                            sum += isGray
                                ? SIMD3(repeating: Float(pixels[at]))
                                : SIMD3(Float(pixels[at]), Float(pixels[at + 1]), Float(pixels[at + 2]))
                        }
                        cells[row * columns + column] += sum * weight
                    }
                }
            }
        }
        return cells
    }

    /// Detail, saturation and skin, per cell.
    private static func score(_ cells: [SIMD3<Float>], columns: Int, rows: Int) -> [Float] {
        let luma = cells.map { 0.299 * $0.x + 0.587 * $0.y + 0.114 * $0.z }
        var detail = [Float](repeating: 0, count: cells.count)
        var strongest: Float = 0
        for row in 0..<rows {
            for column in 0..<columns {
                let index = row * columns + column
                let left = luma[row * columns + max(0, column - 1)], right = luma[row * columns + min(columns - 1, column + 1)]
                let up = luma[max(0, row - 1) * columns + column], down = luma[min(rows - 1, row + 1) * columns + column]
                detail[index] = abs(4 * luma[index] - left - right - up - down)
                strongest = max(strongest, detail[index])
            }
        }
        let normaliser = strongest > 0 ? 1 / strongest : 0
        return cells.indices.map { index in
            let colour = cells[index]
            let high = max(colour.x, colour.y, colour.z), low = min(colour.x, colour.y, colour.z)
            // Saturated colour counts once it is clearly not grey.
            let saturation = high > 0 ? (high - low) / high : 0
            let saturated: Float = saturation > 0.4 ? saturation : 0
            // Skin tones (a classic RGB rule for daylight): red leads green and blue by a margin.
            let (r, g, b) = (colour.x, colour.y, colour.z)
            let skin: Float = r > 95 && g > 40 && b > 20 && high - low > 15 && abs(r - g) > 15 && r > g && r > b ? 1 : 0
            return detail[index] * normaliser + 0.5 * saturated + 0.5 * skin
        }
    }

    /// A box blur of `radius` cells, rows then columns, edges clamped.
    private static func blurred(_ values: [Float], columns: Int, rows: Int, radius: Int) -> [Float] {
        func pass(_ input: [Float], count: Int, lines: Int, at: (Int, Int) -> Int) -> [Float] {
            var output = input
            let width = Float(2 * radius + 1)
            for line in 0..<lines {
                var sum: Float = 0
                for offset in -radius...radius { sum += input[at(line, min(count - 1, max(0, offset)))] }
                for position in 0..<count {
                    output[at(line, position)] = sum / width
                    sum += input[at(line, min(count - 1, position + radius + 1))] - input[at(line, max(0, position - radius))]
                }
            }
            return output
        }
        let horizontal = pass(values, count: columns, lines: rows) { row, column in row * columns + column }
        return pass(horizontal, count: rows, lines: columns) { column, row in row * columns + column }
    }
}
