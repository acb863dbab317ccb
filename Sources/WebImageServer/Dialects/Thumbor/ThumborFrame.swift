import WebImage

/// thumbor's `frame(url)`: a nine-patch image (Android's `.9.png` convention) stretched around
/// the output.
///
/// The nine-patch's outer ring of pixels holds its markers, opaque black where set: along the
/// top, the columns that stretch; along the left, the rows that stretch; along the bottom and
/// the right, the content area, whose distance from each side is the padding added around the
/// image. As thumbor does it: the image is drawn over an opaque white canvas grown by the padding
/// (so the result is opaque), then the nine-patch's inside is cut into cells at the markers, the
/// fixed cells kept at their size, the stretching ones sharing what is left of the canvas
/// (bilinear, each cell on its own), and drawn over it with thumbor's "over" arithmetic. A cell
/// that would cross the canvas's edge (a canvas smaller than the fixed cells, or the shares'
/// rounding) is left out, as thumbor leaves it out.
struct ThumborFrame: ImageProcessor {
    /// Where the nine-patch came from: its identity in keys.
    var source: ProxyRequest.Source
    /// The nine-patch as loaded (its first frame).
    var ninePatch: Bitmap
    /// The largest side the padded output may have (a large nine-patch asks for large padding).
    var maximumDimension: Int

    var identifier: String { "thumbor-frame(\(RenderRecipe.sourceKey(source)),max=\(maximumDimension))" }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        let patch = NinePatch(ninePatch)
        return try image.mappingFrames { try frame($0, with: patch) }
    }

    /// `bitmap` padded, on white, with the nine-patch drawn over it: opaque RGB.
    private func frame(_ bitmap: Bitmap, with patch: NinePatch) throws -> Bitmap {
        let padding = patch.padding
        let width = bitmap.width + padding.left + padding.right, height = bitmap.height + padding.top + padding.bottom
        guard width <= max(maximumDimension, bitmap.width), height <= max(maximumDimension, bitmap.height) else {
            throw ImageError.tooLarge("the framed image \(width)×\(height) exceeds \(maximumDimension)")
        }
        var canvas = [UInt8](repeating: 255, count: width * height * 4)
        let image = bitmap.straightRGBA8()
        image.withUnsafeBufferPointer { pixels in
            for y in 0..<bitmap.height {
                for x in 0..<bitmap.width {
                    WatermarkOverlay.composite(pixels, at: (y * bitmap.width + x) * 4, over: &canvas, at: ((y + padding.top) * width + x + padding.left) * 4)
                }
            }
        }
        patch.draw(over: &canvas, width: width, height: height)
        return try Bitmap(width: width, height: height, pixelFormat: .rgb8, scale: bitmap.scale) { output in
            let out = output.bindMemory(to: UInt8.self)
            for index in 0..<(width * height) {
                out[index * 3] = canvas[index * 4]; out[index * 3 + 1] = canvas[index * 4 + 1]; out[index * 3 + 2] = canvas[index * 4 + 2]
            }
        }
    }
}

/// A nine-patch's pixels (straight RGBA) and what its markers say.
struct NinePatch {
    let width: Int
    let height: Int
    let pixels: [UInt8]

    init(_ bitmap: Bitmap) {
        width = bitmap.width
        height = bitmap.height
        pixels = bitmap.straightRGBA8()
    }

    /// Whether the pixel at (`x`, `y`) is a marker: opaque black.
    func isMarker(_ x: Int, _ y: Int) -> Bool {
        let at = (y * width + x) * 4
        return pixels[at] == 0 && pixels[at + 1] == 0 && pixels[at + 2] == 0 && pixels[at + 3] == 255
    }

    /// The inside's indices along one side (1 to side − 2; none when the side is under 3).
    private static func inside(_ side: Int) -> [Int] { side >= 3 ? Array(1...(side - 2)) : [] }

    /// The padding the bottom and right markers ask for: from the inside's first pixel to the
    /// first marker, and from the last marker to the inside's last pixel (0 without markers).
    var padding: (left: Int, top: Int, right: Int, bottom: Int) {
        let columns = Self.inside(width).filter { isMarker($0, height - 1) }
        let rows = Self.inside(height).filter { isMarker(width - 1, $0) }
        return ((columns.first ?? 1) - 1, (rows.first ?? 1) - 1,
                columns.last.map { width - 2 - $0 } ?? 0, rows.last.map { height - 2 - $0 } ?? 0)
    }

    /// The runs of the inside along one side with the same stretching: (start, length, stretches).
    private static func runs(_ side: Int, stretches: (Int) -> Bool) -> [(start: Int, length: Int, stretches: Bool)] {
        var runs: [(start: Int, length: Int, stretches: Bool)] = []
        for index in inside(side) {
            let stretching = stretches(index)
            if let last = runs.last, last.stretches == stretching {
                runs[runs.count - 1].length += 1
            } else {
                runs.append((index, 1, stretching))
            }
        }
        return runs
    }

    /// The cells' sizes along one side of `target` pixels: fixed runs keep theirs, stretching
    /// ones share the rest in proportion, rounded half up.
    private static func sizes(_ runs: [(start: Int, length: Int, stretches: Bool)], target: Int) -> [Int] {
        let stretching = runs.filter(\.stretches).reduce(0) { $0 + $1.length }
        let fixed = runs.reduce(0) { $0 + $1.length } - stretching
        let spare = max(0, target - fixed)
        return runs.map { run in
            run.stretches ? Int(Double(run.length) / Double(stretching) * Double(spare) + 0.5) : run.length
        }
    }

    /// Draws the inside, cell by cell, over `canvas` (straight RGBA, `width` × `height`).
    func draw(over canvas: inout [UInt8], width canvasWidth: Int, height canvasHeight: Int) {
        let rows = Self.runs(height) { isMarker(0, $0) }, columns = Self.runs(width) { isMarker($0, 0) }
        let heights = Self.sizes(rows, target: canvasHeight), widths = Self.sizes(columns, target: canvasWidth)
        var top = 0
        for (row, cellHeight) in zip(rows, heights) {
            var left = 0
            for (column, cellWidth) in zip(columns, widths) {
                if left + cellWidth <= canvasWidth, top + cellHeight <= canvasHeight {
                    paste(from: (column.start, row.start, column.length, row.length), over: &canvas, canvasWidth,
                          at: (left, top, cellWidth, cellHeight))
                }
                left += cellWidth
            }
            top += cellHeight
        }
    }

    /// One cell of the nine-patch scaled (bilinear, as thumbor samples it) onto a target rectangle.
    private func paste(from cell: (x: Int, y: Int, width: Int, height: Int), over canvas: inout [UInt8], _ canvasWidth: Int,
                       at target: (x: Int, y: Int, width: Int, height: Int)) {
        let ratioX = Double(cell.width - 1) / Double(target.width), ratioY = Double(cell.height - 1) / Double(target.height)
        for y in 0..<target.height {
            let sourceY = Int(ratioY * Double(y)), fractionY = ratioY * Double(y) - Double(sourceY)
            for x in 0..<target.width {
                let sourceX = Int(ratioX * Double(x)), fractionX = ratioX * Double(x) - Double(sourceX)
                let sample = { (channel: Int) in
                    interpolate(cell.x + sourceX, cell.y + sourceY, fractionX, fractionY, channel)
                }
                let to = ((target.y + y) * canvasWidth + target.x + x) * 4
                let transparency = Double(255 - sample(3)) / 255, below = Double(255 - Int(canvas[to + 3])) / 255
                for channel in 0..<3 {
                    let value = (1 - transparency) * Double(sample(channel)) + (1 - below) * Double(canvas[to + channel]) * transparency
                    canvas[to + channel] = UInt8(min(255, max(0, value)))
                }
            }
        }
    }

    /// A channel at (`x` + `fractionX`, `y` + `fractionY`) from its four neighbours, truncated;
    /// exact when the four are equal. The neighbours right and below stay inside the image.
    private func interpolate(_ x: Int, _ y: Int, _ fractionX: Double, _ fractionY: Double, _ channel: Int) -> Int {
        let right = min(x + 1, width - 1), down = min(y + 1, height - 1)
        let a = Int(pixels[(y * width + x) * 4 + channel]), b = Int(pixels[(y * width + right) * 4 + channel])
        let c = Int(pixels[(down * width + x) * 4 + channel]), d = Int(pixels[(down * width + right) * 4 + channel])
        if a == b, a == c, a == d { return a }
        let value = Double(a) * (1 - fractionX) * (1 - fractionY) + Double(b) * fractionX * (1 - fractionY)
            + Double(c) * (1 - fractionX) * fractionY + Double(d) * fractionX * fractionY
        return Int(min(255, max(0, value)))
    }
}
