import Foundation

/// A one-dimensional filter precomputed as a contribution table: for each output position, the
/// first input position it reads and `taps` normalised weights.
///
/// Every output reads the same number of inputs (`taps`, the widest span, shorter spans padded
/// with zero weights), and every span lies inside the input (a span that would run past an edge
/// is slid back and padded on the other side). So the inner loops have a fixed trip count and
/// need no bounds checks, and the table is computed once per resize, not once per row.
struct FilterKernel {
    let inputCount: Int
    let outputCount: Int
    let taps: Int
    /// The first input index of each output; non-decreasing.
    let starts: [Int]
    /// `outputCount * taps` weights, each output's summing to 1.
    let weights: [Float]

    /// Builds the table from each output's centre in input coordinates (pixel `i` spans
    /// `i ..< i + 1`, so its centre is `i + 0.5`), the filter's reach either side, and the
    /// filter itself as a function of the distance from the centre in input pixels.
    init(input: Int, output: Int, support: Double, center: (Int) -> Double, weight: (Double) -> Double) {
        var spans: [(first: Int, weights: [Double])] = []
        spans.reserveCapacity(output)
        var widest = 1
        for position in 0..<output {
            let middle = center(position)
            // Input `j` is centred on `j + 0.5`; take every input within `support`, generously
            // (the zero weights at the ends are trimmed below).
            let first = min(max(0, Int((middle - support - 0.5).rounded(.down))), input - 1)
            let end = max(min(input, Int((middle + support - 0.5).rounded(.up)) + 1), first + 1)
            var values = (first..<end).map { weight(Double($0) + 0.5 - middle) }
            var start = first
            // Zero weights at the ends of the window only cost time: trim them.
            let negligible = 1e-7 * (values.map(abs).max() ?? 0)
            while values.count > 1, abs(values[values.count - 1]) <= negligible { values.removeLast() }
            while values.count > 1, abs(values[0]) <= negligible { values.removeFirst(); start += 1 }
            let total = values.reduce(0, +)
            if total != 0 {
                values = values.map { $0 / total }
            } else {
                // The filter vanishes here (cannot happen for the filters used, which are
                // positive at their centre): fall back to the nearest input.
                start = min(max(0, Int(middle)), input - 1)
                values = [1]
            }
            widest = max(widest, values.count)
            spans.append((start, values))
        }
        let taps = min(widest, input)
        var starts = [Int](repeating: 0, count: output)
        var weights = [Float](repeating: 0, count: output * taps)
        for (position, span) in spans.enumerated() {
            // Slide a span that would run past the last input back, padding in front.
            let start = min(span.first, input - taps)
            starts[position] = start
            for (index, value) in span.weights.enumerated() {
                weights[position * taps + span.first - start + index] = Float(value)
            }
        }
        self.inputCount = input
        self.outputCount = output
        self.taps = taps
        self.starts = starts
        self.weights = weights
    }

    /// Whether the filter copies its input unchanged (same size, one tap of weight 1).
    var isIdentity: Bool {
        inputCount == outputCount && taps == 1 && weights.allSatisfy { $0 == 1 }
            && starts.enumerated().allSatisfy { $0.offset == $0.element }
    }

    /// Lanczos-3 resampling of `input` pixels to `output`, where the input is the source already
    /// box-reduced by `reduction` (1 for none): output pixel `i` is centred on source position
    /// `(i + 0.5) * source / output`, that is `reduction` times further in the reduced input.
    /// Downscaling stretches the filter by the ratio, so it averages every source pixel.
    static func lanczos3(source: Int, reduction: Int, output: Int) -> FilterKernel {
        let input = (source + reduction - 1) / reduction
        let ratio = Double(source) / Double(output) / Double(reduction)
        let stretch = max(ratio, 1)
        return FilterKernel(
            input: input, output: output, support: 3 * stretch,
            center: { (Double($0) + 0.5) * ratio },
            weight: { lanczos3($0 / stretch) }
        )
    }

    /// A Gaussian of standard deviation `sigma`, same size in and out, cut at 3 σ; near the
    /// edges the weights that remain are renormalised, so a flat image stays flat.
    static func gaussian(count: Int, sigma: Double) -> FilterKernel {
        let reach = max(1, (3 * sigma).rounded(.up))
        return FilterKernel(
            input: count, output: count, support: reach,
            center: { Double($0) + 0.5 },
            weight: { abs($0) > reach ? 0 : exp(-$0 * $0 / (2 * sigma * sigma)) }
        )
    }

    /// `sinc(x) · sinc(x / 3)` for |x| < 3, else 0.
    static func lanczos3(_ x: Double) -> Double {
        if x == 0 { return 1 }
        guard abs(x) < 3 else { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }
}
