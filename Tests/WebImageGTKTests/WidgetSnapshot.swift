import Foundation
import WebImage
import WebImageTestSupport

/// The probe's view as GTK's renderer draws it (`snapshot`), compared with the image it should
/// show at the size it shows it.
///
/// `GtkPicture` keeps the image's aspect ratio: it scales the image to fill the widget's width or
/// its height and centres it, leaving the rest transparent. ``shownRect(imageWidth:imageHeight:)``
/// is that rectangle; the comparisons read only pixels inside it, away from its edge (where the
/// edge pixel is part image, part background) and from the widgets drawn over the picture (the
/// spinner).
struct WidgetSnapshot {
    struct Rect {
        var x, y, width, height: Double

        func contains(_ px: Int, _ py: Int, inset: Double = 0) -> Bool {
            let cx = Double(px) + 0.5, cy = Double(py) + 0.5
            return cx >= x + inset && cx < x + width - inset && cy >= y + inset && cy < y + height - inset
        }
    }

    let width: Int
    let height: Int
    /// R, G, B, A (premultiplied) per pixel.
    let rgba: [UInt8]
    /// Where other widgets cover the picture.
    let covered: [Rect]

    /// Asks the probe for a snapshot of its view, after its next frame.
    static func take(from probe: ChildProcess) async throws -> WidgetSnapshot {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gtk-snapshot-\(UUID().uuidString).rgba")
        defer { try? FileManager.default.removeItem(at: file) }
        let answer = await probe.ask("snapshot \(file.path)", expecting: "snapshot ") ?? "no answer"
        let words = answer.split(separator: " ")
        guard words.count >= 3, let width = Int(words[1]), let height = Int(words[2]) else {
            throw SnapshotError(description: "snapshot: \(answer)")
        }
        let covered = words.dropFirst(3).compactMap { word -> Rect? in
            let numbers = word.dropFirst("covered=".count).split(separator: ",").compactMap { Double($0) }
            return numbers.count == 4 ? Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3]) : nil
        }
        let rgba = [UInt8](try Data(contentsOf: file))
        guard rgba.count == width * height * 4 else { throw SnapshotError(description: "snapshot: \(rgba.count) bytes for \(answer)") }
        return WidgetSnapshot(width: width, height: height, rgba: rgba, covered: covered)
    }

    struct SnapshotError: Error, CustomStringConvertible {
        let description: String
    }

    /// Where `GtkPicture` draws an image of this size: scaled to fit, centred.
    func shownRect(imageWidth: Int, imageHeight: Int) -> Rect {
        let ratio = Double(imageWidth) / Double(imageHeight)
        let (w, h) = ratio > Double(width) / Double(height)
            ? (Double(width), Double(width) / ratio) : (Double(height) * ratio, Double(height))
        return Rect(x: (Double(width) - w) / 2, y: (Double(height) - h) / 2, width: w, height: h)
    }

    /// The colour at (`x`, `y`).
    func rgb(_ x: Int, _ y: Int) -> [Int] {
        let offset = (y * width + x) * 4
        return [Int(rgba[offset]), Int(rgba[offset + 1]), Int(rgba[offset + 2])]
    }

    private func isCovered(_ x: Int, _ y: Int) -> Bool {
        covered.contains { $0.contains(x, y) }
    }

    /// The pixels compared: inside `rect` by more than a pixel, and not covered.
    private func comparedPixels(in rect: Rect) -> [(x: Int, y: Int)] {
        var pixels: [(x: Int, y: Int)] = []
        for y in 0..<height {
            for x in 0..<width where rect.contains(x, y, inset: 1) && !isCovered(x, y) {
                pixels.append((x, y))
            }
        }
        return pixels
    }

    // MARK: Pixel by pixel

    /// How far the pixels inside `rect` are from `image` resampled to `rect` (bilinear, at pixel
    /// centres, edges extended: how GTK's cairo renderer scales a texture up), and how many
    /// pixels outside `rect` are not transparent (an image drawn larger than it should be).
    func difference(from image: Bitmap, shownIn rect: Rect) -> (maximum: Int, mean: Double, paintedOutside: Int) {
        var maximum = 0, total = 0
        let pixels = comparedPixels(in: rect)
        for (x, y) in pixels {
            let u = (Double(x) + 0.5 - rect.x) * Double(image.width) / rect.width - 0.5
            let v = (Double(y) + 0.5 - rect.y) * Double(image.height) / rect.height - 0.5
            let expected = image.bilinear(u, v)
            let shown = rgb(x, y)
            for channel in 0..<3 {
                let difference = abs(Int(expected[channel].rounded()) - shown[channel])
                maximum = max(maximum, difference)
                total += difference
            }
        }
        var paintedOutside = 0
        for y in 0..<height {
            for x in 0..<width where !Rect(x: rect.x - 1, y: rect.y - 1, width: rect.width + 2, height: rect.height + 2).contains(x, y) {
                if rgba[(y * width + x) * 4 + 3] != 0 { paintedOutside += 1 }
            }
        }
        return (maximum, pixels.isEmpty ? .infinity : Double(total) / Double(pixels.count * 3), paintedOutside)
    }

    // MARK: Region by region

    /// The largest difference, over the grid of `expected` (``Bitmap/regionMeans(columns:rows:)``
    /// of the image), between a region of `rect`'s mean colour on screen and the same region's
    /// mean in the image (every source pixel in it: the image's coarse content, whatever the
    /// scaling filter).
    func regionDifference(from expected: RegionMeans, shownIn rect: Rect) -> Double {
        let (columns, rows) = (expected.columns, expected.rows)
        var shownSums = [[Double]](repeating: [0, 0, 0, 0], count: columns * rows)
        for (x, y) in comparedPixels(in: rect) {
            let column = min(columns - 1, Int((Double(x) + 0.5 - rect.x) / rect.width * Double(columns)))
            let row = min(rows - 1, Int((Double(y) + 0.5 - rect.y) / rect.height * Double(rows)))
            let colour = rgb(x, y)
            for channel in 0..<3 { shownSums[row * columns + column][channel] += Double(colour[channel]) }
            shownSums[row * columns + column][3] += 1
        }
        var worst = 0.0
        for (region, sums) in shownSums.enumerated() where sums[3] > 0 {
            for channel in 0..<3 { worst = max(worst, abs(sums[channel] / sums[3] - expected.means[region][channel])) }
        }
        return worst
    }
}

/// An image's mean colour (R, G, B) in each region of a grid, row by row.
struct RegionMeans {
    let columns: Int
    let rows: Int
    let means: [[Double]]
}

extension Bitmap {
    /// The mean colour of each region of a `columns` × `rows` grid over the image.
    func regionMeans(columns: Int, rows: Int) -> RegionMeans {
        var means: [[Double]] = []
        for row in 0..<rows {
            for column in 0..<columns {
                means.append(mean(
                    x: column * width / columns, y: row * height / rows,
                    toX: (column + 1) * width / columns, toY: (row + 1) * height / rows))
            }
        }
        return RegionMeans(columns: columns, rows: rows, means: means)
    }

    /// The mean R, G, B of the pixels from (`x`, `y`) up to, not including, (`toX`, `toY`).
    func mean(x: Int, y: Int, toX: Int, toY: Int) -> [Double] {
        var sums = [0, 0, 0]
        let step = pixelFormat.bytesPerPixel
        for row in y..<toY {
            var offset = row * bytesPerRow + x * step
            for _ in x..<toX {
                sums[0] += Int(pixels[offset])
                sums[1] += Int(pixels[offset + 1])
                sums[2] += Int(pixels[offset + 2])
                offset += step
            }
        }
        let count = Double(max(1, (toX - x) * (toY - y)))
        return sums.map { Double($0) / count }
    }
}
