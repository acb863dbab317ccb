import Foundation
import WebImage

/// How sharp a picture is: the mean absolute Laplacian (4 × a pixel − its four neighbours, per
/// channel), the high-frequency energy a blur takes away. A flat picture scores 0; the
/// rounding of 8-bit pixels alone leaves about 1.
enum Sharpness {
    /// The mean absolute Laplacian of the R, G, B of `colour(x, y)` over the points of
    /// `points` whose four neighbours are in it too.
    static func meanAbsoluteLaplacian(points: [(x: Int, y: Int)], colour: (Int, Int) -> [Double]) -> Double {
        let inside = Set(points.map { $0.y << 16 | $0.x })
        var total = 0.0, count = 0
        for (x, y) in points where [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)].allSatisfy({ inside.contains($0.1 << 16 | $0.0) }) {
            let (centre, left, right) = (colour(x, y), colour(x - 1, y), colour(x + 1, y))
            let (up, down) = (colour(x, y - 1), colour(x, y + 1))
            for channel in 0..<3 {
                total += abs(4 * centre[channel] - left[channel] - right[channel] - up[channel] - down[channel])
            }
            count += 3
        }
        return count == 0 ? .nan : total / Double(count)
    }
}

extension WidgetSnapshot {
    /// The pixels inside `rect` by more than a pixel and not covered by another widget (the
    /// spinner): where the picture alone is seen.
    func picturePixels(in rect: Rect) -> [(x: Int, y: Int)] {
        var pixels: [(x: Int, y: Int)] = []
        for y in 0..<height {
            for x in 0..<width where rect.contains(x, y, inset: 1) && !covered.contains(where: { $0.contains(x, y, inset: -1) }) {
                pixels.append((x, y))
            }
        }
        return pixels
    }

    /// The sharpness of what the snapshot shows inside `rect`.
    func sharpness(in rect: Rect) -> Double {
        Sharpness.meanAbsoluteLaplacian(points: picturePixels(in: rect)) { x, y in rgb(x, y).map(Double.init) }
    }

    /// The sharpness `image` would have on screen, drawn into `rect` (resampled as GTK's renderer
    /// does, bilinear) and read over the same pixels as ``sharpness(in:)``: the measure of the
    /// un-blurred picture to hold a shown one against.
    func sharpness(of image: Bitmap, shownIn rect: Rect) -> Double {
        Sharpness.meanAbsoluteLaplacian(points: picturePixels(in: rect)) { x, y in
            let u = (Double(x) + 0.5 - rect.x) * Double(image.width) / rect.width - 0.5
            let v = (Double(y) + 0.5 - rect.y) * Double(image.height) / rect.height - 0.5
            return image.bilinear(u, v).map { $0.rounded() }
        }
    }
}
