/// A Gaussian blur approximated by three successive box blurs per axis, whose cost does not
/// depend on the radius.
///
/// The exact filter costs `6 σ + 1` taps per pixel and axis, and keeps that many rows in its
/// ring: σ = 100 on a 2560 × 1600 photo took 3.5 s (the image proxy allows σ = 400), against
/// 0.06 s here, as at σ = 20. Three box blurs cost a running sum each, however wide, and their
/// succession is within a few per cent of the Gaussian (the central limit theorem at work; this
/// is how SVG's and CSS's `feGaussianBlur` define blurs of σ ≥ 2). The box sizes follow that
/// specification: `d = ⌊σ · 3 √(2π) / 4 + 0.5⌋`; three boxes of `d` when `d` is odd, else two of
/// `d` (one shifted half a pixel each way) and one of `d + 1`.
///
/// Like the exact filter, it works on premultiplied pixels (transparent neighbours add nothing)
/// and averages only the pixels inside the image at the edges, so a flat image stays flat. Rows
/// are blurred one at a time straight into the output bitmap, in its own format; its columns are
/// then blurred in place, in strips of 16 pixels (whole cache lines). So the only memory beyond
/// the output is a few lines, whatever the image's size. The rounding to the format's 8 bits
/// between the two axes costs under 0.05 dB: 46.0–48.7 dB PSNR from the exact Gaussian on a
/// photo at σ = 4, 6.5 and 15, as with a 16-bit intermediate of twice the output's size.
extension Resampler {
    /// The three boxes for `sigma`, each as its reach before and after the output pixel.
    static func boxes(sigma: Double) -> [(before: Int, after: Int)] {
        // Past 2^30 a box already covers any image whole; the bound keeps Int(_:) from trapping.
        let width = min((sigma * 3 * (2 * Double.pi).squareRoot() / 4 + 0.5).rounded(.down), Double(1 << 30))
        let d = max(1, Int(width))
        if d % 2 == 1 { return Array(repeating: (d / 2, d / 2), count: 3) }
        return [(d / 2, d / 2 - 1), (d / 2 - 1, d / 2), (d / 2, d / 2)]
    }

    static func boxBlur(_ bitmap: Bitmap, sigma: Double) throws -> Bitmap {
        struct Blur: WorkingPixelOperation {
            let bitmap: Bitmap, boxes: [(before: Int, after: Int)]
            func run<Pixel: WorkingPixel>(_ pixel: Pixel.Type) throws -> Bitmap {
                try Resampler.boxBlur(pixel, bitmap, boxes)
            }
        }
        return try bitmap.pixelFormat.run(Blur(bitmap: bitmap, boxes: boxes(sigma: sigma)))
    }

    /// Columns blurred together: 16 pixels of RGBA are a cache line.
    private static let strip = 16

    private static func boxBlur<Pixel: WorkingPixel>(_: Pixel.Type, _ bitmap: Bitmap, _ boxes: [(before: Int, after: Int)]) throws -> Bitmap {
        let width = bitmap.width, height = bitmap.height
        let longest = max(width, height)
        let lineA = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: longest * strip)
        defer { lineA.deallocate() }
        let lineB = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: longest * strip)
        defer { lineB.deallocate() }
        let sums = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: strip)
        defer { sums.deallocate() }
        let bytesPerPixel = Pixel.bytesPerPixel, outputRowBytes = width * bytesPerPixel
        return try Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat, scale: bitmap.scale) { output in
            let out = output.baseAddress!
            // Rows: load, three boxes, store in the output.
            bitmap.pixels.withUnsafeBytes { input in
                for y in 0..<height {
                    let source = input.baseAddress! + y * bitmap.bytesPerRow
                    for x in 0..<width { lineA[x] = Pixel.load(source + x &* bytesPerPixel) }
                    let blurred = threeBoxes(boxes, lineA, lineB, count: width, lanes: 1, sums: sums)
                    let target = out + y &* outputRowBytes
                    for x in 0..<width { Pixel.store(blurred[x], to: target + x &* bytesPerPixel) }
                }
            }
            // Columns of the output, a strip at a time: gather, three boxes, store back.
            var x0 = 0
            while x0 < width {
                let lanes = min(strip, width - x0)
                for y in 0..<height {
                    let row = out + (y &* outputRowBytes &+ x0 &* bytesPerPixel), line = lineA + y &* lanes
                    for lane in 0..<lanes { line[lane] = Pixel.load(row + lane &* bytesPerPixel) }
                }
                let blurred = threeBoxes(boxes, lineA, lineB, count: height, lanes: lanes, sums: sums)
                for y in 0..<height {
                    let row = out + (y &* outputRowBytes &+ x0 &* bytesPerPixel), line = blurred + y &* lanes
                    for lane in 0..<lanes { Pixel.store(line[lane], to: row + lane &* bytesPerPixel) }
                }
                x0 += lanes
            }
        }
    }

    /// Applies the three boxes along `count` positions of `lanes` interleaved lines held in `a`
    /// (position `i` of lane `l` at `i * lanes + l`), using `b` as scratch; returns the buffer that
    /// holds the result.
    @inline(__always)
    private static func threeBoxes(
        _ boxes: [(before: Int, after: Int)],
        _ a: UnsafeMutablePointer<SIMD4<Float>>, _ b: UnsafeMutablePointer<SIMD4<Float>>,
        count: Int, lanes: Int, sums: UnsafeMutablePointer<SIMD4<Float>>
    ) -> UnsafeMutablePointer<SIMD4<Float>> {
        var (from, to) = (a, b)
        for box in boxes {
            boxPass(from, to, count: count, lanes: lanes, before: box.before, after: box.after, sums: sums)
            swap(&from, &to)
        }
        return from
    }

    /// One box: output position `i` is the mean of the inputs from `i - before` to `i + after`
    /// that lie inside `0..<count`, kept as a running sum per lane.
    @inline(__always)
    private static func boxPass(
        _ input: UnsafePointer<SIMD4<Float>>, _ output: UnsafeMutablePointer<SIMD4<Float>>,
        count: Int, lanes: Int, before: Int, after: Int, sums: UnsafeMutablePointer<SIMD4<Float>>
    ) {
        if lanes == 1 {
            boxPass(input, output, count: count, before: before, after: after)
            return
        }
        for lane in 0..<lanes { sums[lane] = .zero }
        // The window of position 0: inputs 0 ... after.
        for i in 0...min(after, count - 1) {
            let row = input + i &* lanes
            for lane in 0..<lanes { sums[lane] += row[lane] }
        }
        let interior = Float(1) / Float(before + after + 1)
        let interiorStart = min(before, count), interiorEnd = max(interiorStart, count - after - 1)
        func edge(_ i: Int) {
            let first = i - before, last = i + after
            let scale = 1 / Float(min(last, count - 1) - max(first, 0) + 1)
            let target = output + i &* lanes
            for lane in 0..<lanes { target[lane] = sums[lane] * scale }
            // Slide: the input after the window enters, the window's first leaves.
            if last + 1 < count {
                let entering = input + (last + 1) &* lanes
                for lane in 0..<lanes { sums[lane] += entering[lane] }
            }
            if first >= 0 {
                let leaving = input + first &* lanes
                for lane in 0..<lanes { sums[lane] -= leaving[lane] }
            }
        }
        for i in 0..<interiorStart { edge(i) }
        for i in interiorStart..<interiorEnd {
            let target = output + i &* lanes
            let entering = input + (i &+ after &+ 1) &* lanes, leaving = input + (i &- before) &* lanes
            for lane in 0..<lanes {
                target[lane] = sums[lane] * interior
                sums[lane] += entering[lane] - leaving[lane]
            }
        }
        for i in interiorEnd..<count { edge(i) }
    }

    /// ``boxPass(_:_:count:lanes:before:after:sums:)`` along one line, the rows' case: the sum
    /// stays in a register (kept in memory per lane, each step waited for the last one's store).
    @inline(__always)
    private static func boxPass(
        _ input: UnsafePointer<SIMD4<Float>>, _ output: UnsafeMutablePointer<SIMD4<Float>>,
        count: Int, before: Int, after: Int
    ) {
        var sum = SIMD4<Float>.zero
        for i in 0...min(after, count - 1) { sum += input[i] }
        let interior = Float(1) / Float(before + after + 1)
        // Edges, where the window is cut and each position has its own count, apart from the
        // interior, where nothing is tested.
        let interiorStart = min(before, count), interiorEnd = max(interiorStart, count - after - 1)
        func edge(_ i: Int) {
            let first = i - before, last = i + after
            output[i] = sum * (1 / Float(min(last, count - 1) - max(first, 0) + 1))
            if last + 1 < count { sum += input[last + 1] }
            if first >= 0 { sum -= input[first] }
        }
        for i in 0..<interiorStart { edge(i) }
        var i = interiorStart
        while i < interiorEnd {
            output[i] = sum * interior
            // One addition a step on the sum's chain: the difference is computed beside it.
            sum += input[i &+ after &+ 1] - input[i &- before]
            i &+= 1
        }
        for i in interiorEnd..<count { edge(i) }
    }
}
