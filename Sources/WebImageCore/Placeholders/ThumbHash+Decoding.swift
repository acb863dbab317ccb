extension ThumbHash {
    /// Decodes to an rgba8 (straight alpha) bitmap whose longer side is `maxSide` (default 32),
    /// aspect from the hash (``aspectRatio``; the shorter side is rounded, and at least 1).
    ///
    /// The picture is smooth whatever its size: 32 px, the reference's size, is enough for a
    /// placeholder that a view scales up. `maxSide` is clamped to 1…1024, so the work and the
    /// bitmap (4 MiB at most) stay bounded whatever a caller passes.
    ///
    /// ```swift
    /// let hash = try ThumbHash("3OcRJYB4d3h/iIeHeEh3eIhw+j3A")
    /// let placeholder = hash.bitmap()               // 32 × 23
    /// print(placeholder.width, placeholder.height, placeholder.pixelFormat)
    /// ```
    public func bitmap(maxSide: Int = 32) -> Bitmap {
        let side = min(max(maxSide, 1), ImagePlaceholder.maximumSide)
        let ratio = aspectRatio
        if ratio > 1 {
            return bitmap(width: side, height: max(1, Int((Double(side) / ratio).rounded())))
        }
        return bitmap(width: max(1, Int((Double(side) * ratio).rounded())), height: side)
    }

    /// Decodes to exactly `width` × `height` (each clamped to 1…1024), whatever the hash's own
    /// aspect ratio: what the tests compare with a reference decoder that picks its size another
    /// way.
    package func bitmap(width: Int, height: Int) -> Bitmap {
        let layout = self.layout
        var index = 0
        let start = layout.acStart
        let luminance = Channel(decoding: bytes, start: start, index: &index, nx: layout.lx, ny: layout.ly,
                                dc: layout.lDC, scale: layout.lScale)
        // The reference boosts saturation by 1.25 to make up for what quantisation lost.
        let p = Channel(decoding: bytes, start: start, index: &index, nx: 3, ny: 3, dc: layout.pDC, scale: layout.pScale * 1.25)
        let q = Channel(decoding: bytes, start: start, index: &index, nx: 3, ny: 3, dc: layout.qDC, scale: layout.qScale * 1.25)
        var channels = [luminance, p, q]
        if layout.hasAlpha {
            channels.append(Channel(decoding: bytes, start: start, index: &index, nx: 5, ny: 5,
                                    dc: Double(bytes[5] & 15) / 15, scale: Double(bytes[5] >> 4) / 15))
        }
        return Self.render(channels,
                           width: min(max(width, 1), ImagePlaceholder.maximumSide),
                           height: min(max(height, 1), ImagePlaceholder.maximumSide))
    }

    /// The pixels of L, P, Q (and A) channels: separably, each row first sums every channel's
    /// terms over `cy` (with that row's cosines), and each pixel is then a short sum over `cx`.
    /// The channels' grids are padded with zeros to the largest (7 × 7 at most), so the loops
    /// have one shape.
    private static func render(_ channels: [Channel], width: Int, height: Int) -> Bitmap {
        let count = channels.count
        let nx = channels.map(\.nx).max() ?? 1, ny = channels.map(\.ny).max() ?? 1
        let fx = PlaceholderCoding.cosines(frequencies: nx, size: width, offset: 0.5)
        let fy = PlaceholderCoding.cosines(frequencies: ny, size: height, offset: 0.5)
        // `grid[(c * ny + cy) * nx + cx]`: channel c's doubled AC term (cx, cy), or zero.
        var grid = [Double](repeating: 0, count: count * ny * nx)
        for (c, channel) in channels.enumerated() {
            let own = channel.doubledGrid
            for cy in 0..<channel.ny {
                for cx in 0..<channel.nx { grid[(c * ny + cy) * nx + cx] = own[cy * channel.nx + cx] }
            }
        }
        let dc = SIMD4<Double>(channels[0].dc, channels[1].dc, channels[2].dc, count > 3 ? channels[3].dc : 1)
        // `rows[c * nx + cx]`: channel c's terms of frequency cx, summed over cy for this row.
        var rows = [Double](repeating: 0, count: count * nx)
        // Force-try: 1…1024 a side is a valid size.
        return try! Bitmap(width: width, height: height, pixelFormat: .rgba8) { output in
            let out = output.bindMemory(to: UInt8.self)
            for y in 0..<height {
                for c in 0..<count {
                    for cx in 0..<nx {
                        var sum = 0.0
                        for cy in 0..<ny { sum += grid[(c * ny + cy) * nx + cx] * fy[cy * height + y] }
                        rows[c * nx + cx] = sum
                    }
                }
                for x in 0..<width {
                    var values = dc
                    for c in 0..<count {
                        for cx in 0..<nx { values[c] += rows[c * nx + cx] * fx[cx * width + x] }
                    }
                    store(lpqa: values, to: out, at: (y * width + x) * 4)
                }
            }
        }
    }

    /// Converts luminance, yellow–blue and red–green (and alpha) back to RGBA bytes, each
    /// clamped to 0…1 and rounded to the nearest byte.
    @inline(__always)
    private static func store(lpqa values: SIMD4<Double>, to out: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        let (l, p, q) = (values[0], values[1], values[2])
        let b = l - 2.0 / 3.0 * p
        let r = (3 * l - b + q) / 2
        let g = r - q
        out[offset] = byte(r)
        out[offset + 1] = byte(g)
        out[offset + 2] = byte(b)
        out[offset + 3] = byte(values[3])
    }

    @inline(__always)
    private static func byte(_ value: Double) -> UInt8 {
        UInt8((min(max(value, 0), 1) * 255).rounded())
    }
}
