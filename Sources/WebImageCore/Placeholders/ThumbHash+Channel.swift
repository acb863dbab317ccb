extension ThumbHash {
    /// One channel's cosine terms: the DC term and the AC terms of a triangle of `nx` × `ny`
    /// frequencies, the coarse ones a picture's eye notices first.
    struct Channel {
        let nx: Int
        let ny: Int
        var dc: Double
        /// The AC terms in ``frequencies(nx:ny:)`` order.
        var ac: [Double]
        /// The largest AC magnitude (the encoder's), by which the stored terms are normalised.
        var scale: Double

        /// The AC frequencies a channel keeps, in the order the hash stores them: row by row
        /// (`cy`), then `cx` while `cx · ny < nx · (ny − cy)` (a triangle, so diagonals cost
        /// no more than the axes), without the DC term (0, 0).
        static func frequencies(nx: Int, ny: Int) -> [(cx: Int, cy: Int)] {
            var result: [(cx: Int, cy: Int)] = []
            for cy in 0..<ny {
                var cx = cy == 0 ? 1 : 0
                while cx * ny < nx * (ny - cy) {
                    result.append((cx, cy))
                    cx += 1
                }
            }
            return result
        }

        /// The terms of a `width` × `height` plane (row-major): each the mean of the plane times
        /// its two cosines, `fx` and `fy` being ``PlaceholderCoding/cosines(frequencies:size:offset:)``
        /// tables with at least `nx` and `ny` frequencies.
        ///
        /// The sums run in the reference's order (row by row, `value · fx · fy`), not
        /// separably, so that they come out bit for bit as the reference's: a term that is zero
        /// in exact arithmetic (every term across the grain of an image that varies along one
        /// axis only) is normalised to exactly half a level, and its rounding error decides
        /// whether it is stored as 7 or 8. Summed in another order it would land on the other
        /// side as often as not, and the hash would differ from the reference's in those
        /// nibbles. The terms of one row of frequencies (`cy`) are summed together, a lane of a
        /// `SIMD8` each: each lane does the scalar operations in the scalar order, so the bytes
        /// do not change, and the pixels are read `ny` times instead of once a term.
        init(encoding plane: [Double], width: Int, height: Int, nx: Int, ny: Int, fx: [Double], fy: [Double]) {
            precondition(nx <= 8, "a ThumbHash channel has at most 7 frequencies along an axis")
            self.nx = nx
            self.ny = ny
            // Each column's cosines of the frequencies 0..<nx, one vector a column (zero lanes
            // past nx).
            var columnCosines = [SIMD8<Double>](repeating: .zero, count: width)
            for x in 0..<width {
                for cx in 0..<nx { columnCosines[x][cx] = fx[cx * width + x] }
            }
            var terms = [Double](repeating: 0, count: nx * ny)
            let pixels = Double(width * height)
            plane.withUnsafeBufferPointer { plane in
                columnCosines.withUnsafeBufferPointer { columnCosines in
                    for cy in 0..<ny {
                        var sums = SIMD8<Double>.zero
                        for y in 0..<height {
                            let rowCosine = SIMD8<Double>(repeating: fy[cy * height + y])
                            let row = plane.baseAddress! + y * width
                            for x in 0..<width { sums += SIMD8(repeating: row[x]) * columnCosines[x] * rowCosine }
                        }
                        var cx = 0
                        while cx * ny < nx * (ny - cy) {
                            terms[cy * nx + cx] = sums[cx] / pixels
                            cx += 1
                        }
                    }
                }
            }
            dc = terms[0]
            ac = Self.frequencies(nx: nx, ny: ny).map { terms[$0.cy * nx + $0.cx] }
            scale = ac.reduce(0) { max($0, abs($1)) }
        }

        /// The terms of a channel as a decoder reads them: `ac.count` nibbles from `index`
        /// on (advanced past them), each mapped from 0…15 to −1…1 and multiplied by `scale`.
        init(decoding bytes: [UInt8], start: Int, index: inout Int, nx: Int, ny: Int, dc: Double, scale: Double) {
            self.nx = nx
            self.ny = ny
            self.dc = dc
            self.scale = scale
            let count = Self.frequencies(nx: nx, ny: ny).count
            var ac: [Double] = []
            ac.reserveCapacity(count)
            for _ in 0..<count {
                let nibble = (bytes[start + (index >> 1)] >> ((index & 1) << 2)) & 15
                ac.append((Double(nibble) / 7.5 - 1) * scale)
                index += 1
            }
            self.ac = ac
        }

        /// The AC terms as a grid `[cy * nx + cx]`, zero where the triangle keeps none, each
        /// doubled (the DCT's weight of a non-DC term).
        var doubledGrid: [Double] {
            var grid = [Double](repeating: 0, count: nx * ny)
            for (term, frequency) in zip(ac, Self.frequencies(nx: nx, ny: ny)) {
                grid[frequency.cy * nx + frequency.cx] = 2 * term
            }
            return grid
        }
    }
}
