/// thumbor's `curve(all,red,green,blue)`: four tone curves, each a list of points `(x,y)`
/// (levels 0 to 255, `x` rising) joined by a natural cubic spline and looked up per channel:
/// the channel's own curve first, then the curve of all channels, as thumbor does.
///
/// Levels left of a curve's first point take its first `y`, levels from its last point on its
/// last `y`; in between, the spline's value rounded to the nearest level and clamped. The
/// lookup tables are made once, when the URL is parsed.
struct ThumborCurve: Sendable, Hashable {
    /// The four curves' points as the URL gives them: all channels, red, green, blue.
    let points: [[Point]]
    /// The lookup table of each curve, in the same order.
    let tables: [[UInt8]]

    struct Point: Sendable, Hashable {
        var x: Int
        var y: Int
    }

    init(points: [[Point]]) {
        self.points = points
        tables = points.map(Self.table)
    }

    /// The key's words for it: the points, curve by curve.
    var key: String {
        "curve" + points.map { curve in curve.map { "\($0.x),\($0.y)" }.joined(separator: ";") }.joined(separator: "/")
    }

    static func == (lhs: ThumborCurve, rhs: ThumborCurve) -> Bool { lhs.points == rhs.points }
    func hash(into hasher: inout Hasher) { hasher.combine(points) }

    /// `r`, `g` and `b` through their curves, then through the curve of all channels.
    func apply(_ r: Int, _ g: Int, _ b: Int) -> (Int, Int, Int) {
        (Int(tables[0][Int(tables[1][r])]), Int(tables[0][Int(tables[2][g])]), Int(tables[0][Int(tables[3][b])]))
    }

    /// The 256 levels of one curve.
    static func table(_ curve: [Point]) -> [UInt8] {
        guard let first = curve.first, let last = curve.last else { return (0...255).map { UInt8($0) } }
        var table = [UInt8](repeating: UInt8(first.y), count: 256)
        let bends = secondDerivatives(curve)
        for index in 0..<(curve.count - 1) {
            let (current, next) = (curve[index], curve[index + 1])
            let h = Double(next.x - current.x)
            for x in current.x..<next.x {
                let b = Double(x - current.x) / h, a = 1 - b
                let y = a * Double(current.y) + b * Double(next.y)
                    + (h * h / 6) * ((a * a * a - a) * bends[index] + (b * b * b - b) * bends[index + 1])
                table[x] = UInt8(min(255, max(0, y.rounded())))
            }
        }
        for x in last.x...255 { table[x] = UInt8(last.y) }
        return table
    }

    /// The spline's second derivative at each point, 0 at both ends (a natural spline): the
    /// tridiagonal system solved by elimination down, then up.
    private static func secondDerivatives(_ curve: [Point]) -> [Double] {
        let n = curve.count
        guard n > 2 else { return [Double](repeating: 0, count: n) }
        // Each row: below, diagonal, above; the first and last rows pin the ends to 0.
        var below = [Double](repeating: 0, count: n), diagonal = [Double](repeating: 1, count: n)
        var above = [Double](repeating: 0, count: n), result = [Double](repeating: 0, count: n)
        for i in 1..<(n - 1) {
            let (previous, current, next) = (curve[i - 1], curve[i], curve[i + 1])
            below[i] = Double(current.x - previous.x) / 6
            diagonal[i] = Double(next.x - previous.x) / 3
            above[i] = Double(next.x - current.x) / 6
            result[i] = Double(next.y - current.y) / Double(next.x - current.x) - Double(current.y - previous.y) / Double(current.x - previous.x)
        }
        for i in 1..<n {
            let factor = below[i] / diagonal[i - 1]
            diagonal[i] -= factor * above[i - 1]
            result[i] -= factor * result[i - 1]
        }
        for i in stride(from: n - 2, through: 0, by: -1) {
            let factor = above[i] / diagonal[i + 1]
            result[i] -= factor * result[i + 1]
        }
        return (0..<n).map { result[$0] / diagonal[$0] }
    }
}
