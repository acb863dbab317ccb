import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

extension ThumborSideBySideTests {
    /// The cells of the grid two answers are compared on: this many along the longer side.
    static let gridCells = 24

    /// `data` decoded and shrunk to `columns` × `rows` cells, each the mean of its pixels' red,
    /// green and blue as seen over black (colour × alpha) and alpha: cell *i* covers the pixels
    /// from *i* · width / columns on, so two answers a pixel apart in size meet on the same grid.
    static func grid(_ data: Data, columns: Int, rows: Int) throws -> [SIMD4<Double>] {
        let bitmap = try CoderRegistry.system().decode(data).image
        let step = bitmap.pixelFormat.bytesPerPixel, hasAlpha = bitmap.pixelFormat.hasAlpha
        let grey = bitmap.pixelFormat.channels == .gray || bitmap.pixelFormat.channels == .grayAlpha
        var cells = [SIMD4<Double>](repeating: .zero, count: columns * rows)
        for row in 0..<rows {
            let top = row * bitmap.height / rows, bottom = max(top + 1, (row + 1) * bitmap.height / rows)
            for column in 0..<columns {
                let left = column * bitmap.width / columns, right = max(left + 1, (column + 1) * bitmap.width / columns)
                var sum = SIMD4<Double>.zero
                for y in top..<min(bottom, bitmap.height) {
                    for x in left..<min(right, bitmap.width) {
                        // As ImgproxyFilterTests.pixel reads it, without an array a pixel.
                        let at = y * bitmap.bytesPerRow + x * step
                        let alpha = hasAlpha ? Double(bitmap.pixels[at + step - 1]) : 255
                        let r = Double(bitmap.pixels[at]), g = Double(bitmap.pixels[at + (grey ? 0 : 1)]), b = Double(bitmap.pixels[at + (grey ? 0 : 2)])
                        sum += SIMD4(r * alpha / 255, g * alpha / 255, b * alpha / 255, alpha)
                    }
                }
                cells[row * columns + column] = sum / Double(max(1, (min(bottom, bitmap.height) - top) * (min(right, bitmap.width) - left)))
            }
        }
        return cells
    }

    /// The mean absolute difference, over the cells and their four values, of two answers shrunk
    /// to the same grid (``gridCells`` along the longer side of ours, the other side in
    /// proportion).
    static func gridDifference(_ ours: Data, _ theirs: Data) throws -> Double {
        let bitmap = try CoderRegistry.system().decode(ours).image
        let long = max(bitmap.width, bitmap.height)
        let columns = max(1, gridCells * bitmap.width / long), rows = max(1, gridCells * bitmap.height / long)
        let a = try grid(ours, columns: columns, rows: rows), b = try grid(theirs, columns: columns, rows: rows)
        let total = zip(a, b).reduce(0.0) { sum, pair in
            let d = pair.0 - pair.1
            return sum + abs(d[0]) + abs(d[1]) + abs(d[2]) + abs(d[3])
        }
        return total / Double(a.count * 4)
    }

    /// How far ours may be from thumbor's on the grid, in levels, for `options` on a source of
    /// `source` pixels giving `output` pixels; `nil` where the pixels cannot be compared.
    ///
    /// Measured (`SBS_REPORT=1`): the geometry sets differ by 0 to 1.5 levels on the photos (the
    /// two resamplers), 0.2 on Spring.png; the controls (`theGeometryComparisonCatchesAWrongWindow`)
    /// show what a wrong geometry costs: a crop box moved by 6 output pixels 11 levels (about 2 a
    /// pixel), the window at the wrong end 18, a flip 16, the wrong turn 36. The bound is 3
    /// levels, which a box 2 output pixels off exceeds, times the enlargement (an output pixel
    /// per source pixel): thumbor rounds its crop box to whole source pixels before it resizes,
    /// so where a small source is enlarged (the 128 px hopper filling 300 × 200, 2.3×) its box
    /// lies up to one source pixel from ours, 2.3 output pixels (measured 4.2 levels). The blurs
    /// add the two blurs' difference (thumbor's kernel and edge handling are its own; measured up
    /// to 2.0 on the photos, 6.6 on the 128 px hopper, where the edges are a large share of the
    /// image): 7 levels before the enlargement, still under what a wrong window costs. `max_bytes` lowers the
    /// quality by other steps (thumbor by a quarter at a time, ours by bisection), so the
    /// artefacts differ (measured up to 0.5): the geometry's bound holds. `smart` is left out:
    /// thumbor centres its window on the faces and features its OpenCV detector finds, and the
    /// proxy has no detector (its smart crop follows an attention map instead).
    static func geometryBound(for options: String, source: (width: Int, height: Int), output: (width: Int, height: Int)) -> Double? {
        if options.contains("smart") { return nil }
        let enlargement = max(1, Double(output.width) / Double(source.width), Double(output.height) / Double(source.height))
        return (options.contains("blur(") ? 7 : 3) * enlargement
    }

    /// Checks that `ours` and `theirs` (both 200 for `options` on a source of `source` pixels)
    /// show the same geometry: within ``geometryBound(for:source:output:)`` on the grid, and for
    /// `max_bytes`, ours fits whenever thumbor's does.
    static func compareGeometry(_ options: String, source: (width: Int, height: Int), ours: Data, theirs: Data) throws {
        let output = try CoderRegistry.system().decode(ours).image
        guard let bound = geometryBound(for: options, source: source, output: (output.width, output.height)) else { return }
        let difference = try gridDifference(ours, theirs)
        report("geometry \(options) \(source): \(difference) (bound \(bound))")
        #expect(difference <= bound, "\(options) on \(source): \(difference) levels from thumbor's on the grid, bound \(bound)")
        if options.contains("max_bytes(12000)"), theirs.count <= 12000 {
            #expect(ours.count <= 12000, "\(options) on \(source): \(ours.count) bytes, thumbor's \(theirs.count)")
        }
    }

    /// The grid comparison can fail: the same options with the window at the other end, the
    /// image flipped or turned, or the crop box moved by 30 source pixels (6 output pixels), are
    /// further from thumbor's answer than the bound.
    @Test func theGeometryComparisonCatchesAWrongWindow() async throws {
        let elephants = "elephants-1920x1080-progressive.jpg"
        let cases: [(ours: String, theirs: String)] = [
            ("300x300/left/top", "300x300/right/top"),
            ("300x200", "-300x200"),
            ("fit-in/400x400/filters:rotate(90)", "fit-in/400x400/filters:rotate(270)"),
            ("130x100:530x400/80x0", "100x100:500x400/80x0"),
        ]
        try await Self.withThumborAndProxy { _, port, harness in
            for (oursOptions, theirsOptions) in cases {
                let ours = try await harness.request("/thumbor/unsafe/\(oursOptions)/\(elephants)", timeout: .seconds(180))
                let theirs = try await Self.both("/unsafe/\(theirsOptions)/\(elephants)", port: port, harness: harness).theirs
                let difference = try Self.gridDifference(ours.body, theirs)
                Self.report("control \(oursOptions) against thumbor's \(theirsOptions): \(difference)")
                #expect(difference > 3, "\(oursOptions) against thumbor's \(theirsOptions): only \(difference)")
            }
        }
    }
}
