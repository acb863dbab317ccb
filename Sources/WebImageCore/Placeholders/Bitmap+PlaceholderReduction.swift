extension Bitmap {
    /// The bitmap reduced to at most `maxSide` (100) px a side, rgba8 straight alpha,
    /// orientation untouched: what both hashes and the dominant colour read.
    ///
    /// A box average: each output pixel is the mean of the source pixels whose block it covers
    /// (whole pixels, `x · width / outputWidth` up to the next output's), premultiplied while
    /// summing so that transparent pixels add no colour, then divided back; fully transparent
    /// results are black. Every pixel format is read (grey is spread to R, G and B, premultiplied
    /// input comes out straight), every source pixel once. A bitmap within `maxSide` keeps its
    /// size and is only converted (an rgba8 one with no row padding comes back as it is). The
    /// shorter side is rounded and at least 1: 1 × 1000 becomes 1 × 100.
    ///
    /// Both hashes are defined on an image of at most 100 px a side (the ThumbHash reference
    /// refuses larger ones) and keep only its coarsest frequencies, which a box average keeps.
    package func placeholderReduction(maxSide: Int = 100) -> Bitmap {
        let side = max(maxSide, 1), longer = max(width, height)
        var (outputWidth, outputHeight) = (width, height)
        if longer > side {
            outputWidth = max(1, Int((Double(width) * Double(side) / Double(longer)).rounded()))
            outputHeight = max(1, Int((Double(height) * Double(side) / Double(longer)).rounded()))
        }
        if pixelFormat == .rgba8, bytesPerRow == width * 4, outputWidth == width, outputHeight == height { return self }
        // Force-try: the output is positive and no larger than this valid bitmap.
        return try! pixelFormat.run(PlaceholderBoxReduction(bitmap: self, width: outputWidth, height: outputHeight))
    }
}

/// ``Bitmap/placeholderReduction(maxSide:)``'s box average, specialised per pixel format through
/// ``WorkingPixel`` (which loads every format as premultiplied RGBA on the 0–255 scale).
private struct PlaceholderBoxReduction: WorkingPixelOperation {
    let bitmap: Bitmap
    let width: Int
    let height: Int

    func run<Pixel: WorkingPixel>(_: Pixel.Type) throws -> Bitmap {
        let source = bitmap
        // Output x averages source columns columnStarts[x] ..< columnStarts[x + 1]; the same
        // for rows. Each block has at least one pixel, since the output is no larger.
        let columnStarts = (0...width).map { $0 * source.width / width }
        let rowStarts = (0...height).map { $0 * source.height / height }
        // Grey formats carry their level in the first lane only.
        let isGrey = Pixel.bytesPerPixel <= 2
        var sums = [SIMD4<Float>](repeating: .zero, count: width)
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8) { output in
            // Unsafe buffers in the loops: every source pixel passes here, and array accesses
            // with their checks cost more than the pixel's load and add.
            source.pixels.withUnsafeBytes { input in
                columnStarts.withUnsafeBufferPointer { columns in
                    sums.withUnsafeMutableBufferPointer { sums in
                        for y in 0..<height {
                            sums.update(repeating: .zero)
                            for row in rowStarts[y]..<rowStarts[y + 1] {
                                addRow(input.baseAddress! + row * source.bytesPerRow, Pixel.self, columns: columns, into: sums)
                            }
                            let rows = Float(rowStarts[y + 1] - rowStarts[y])
                            for x in 0..<width {
                                var mean = sums[x] / (rows * Float(columns[x + 1] - columns[x]))
                                if isGrey { mean = SIMD4(mean.x, mean.x, mean.x, mean.w) }
                                StraightRGBA.store(mean, to: output.baseAddress! + (y * width + x) * 4)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Adds one source row's pixels to the sums of the output columns they fall in.
    @inline(__always)
    private func addRow<Pixel: WorkingPixel>(
        _ line: UnsafeRawPointer, _: Pixel.Type, columns: UnsafeBufferPointer<Int>, into sums: UnsafeMutableBufferPointer<SIMD4<Float>>
    ) {
        var pixel = line + columns[0] * Pixel.bytesPerPixel
        for x in 0..<sums.count {
            var sum = SIMD4<Float>.zero
            for _ in columns[x]..<columns[x + 1] {
                sum += Pixel.load(pixel)
                pixel += Pixel.bytesPerPixel
            }
            sums[x] += sum
        }
    }
}
