import Foundation
import WebImage

/// Draws a ``RenderRecipe/Watermark`` over every frame of the output, last of all.
///
/// The watermark's image is prepared once for the output's size, as thumbor's filter does it:
/// made straight RGBA, its alpha changed (thumbor takes a percentage of 255 off, imgproxy
/// multiplies), then scaled to fit its share of the output (Lanczos), then drawn at each of its
/// places with thumbor's "over" arithmetic: the result's alpha is 1 − (1 − a₁)(1 − a₂), its
/// colours the watermark's over the image's weighted by those alphas, truncated. An opaque
/// image stays opaque (RGB out); one with alpha comes out straight RGBA.
struct WatermarkOverlay: ImageProcessor {
    var watermark: RenderRecipe.Watermark
    /// The watermark's image as loaded (its first frame).
    var mark: Bitmap

    var identifier: String { "watermark(\(watermark.key))" }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        let prepared = try prepared(forWidth: image.image.width, height: image.image.height)
        let places = Self.places(of: (prepared.width, prepared.height), in: (image.image.width, image.image.height),
                                 horizontal: watermark.horizontal, vertical: watermark.vertical)
        return try image.mappingFrames { try draw(prepared, at: places, over: $0) }
    }

    /// The watermark with its alpha changed and scaled for a `width` × `height` output.
    func prepared(forWidth width: Int, height: Int) throws -> Bitmap {
        var pixels = mark.straightRGBA8()
        switch watermark.opacity {
        case .lessTransparency(let percent):
            let delta = 255 * percent / 100
            for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = UInt8(max(0, Int(pixels[index]) - delta)) }
        case .scaled(let factor):
            for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = UInt8((Double(pixels[index]) * factor).rounded()) }
        }
        let straight = try Bitmap(width: mark.width, height: mark.height, pixelFormat: .rgba8, pixels: pixels)
        guard let size = Self.size(of: (mark.width, mark.height), in: (width, height),
                                   widthShare: watermark.widthShare, heightShare: watermark.heightShare),
              size != (mark.width, mark.height) else { return straight }
        return try straight.resized(width: size.width, height: size.height)
    }

    /// The watermark's size when it may take `widthShare` of the output's width and
    /// `heightShare` of its height, its aspect ratio kept (thumbor's `calc_watermark_size`; a
    /// missing share follows the other), or `nil` when neither is given.
    static func size(
        of mark: (width: Int, height: Int), in output: (width: Int, height: Int), widthShare: Double?, heightShare: Double?
    ) -> (width: Int, height: Int)? {
        guard widthShare != nil || heightShare != nil else { return nil }
        let markWidth = Double(mark.width), markHeight = Double(mark.height)
        var maximumWidth = widthShare.map { Double(output.width) * $0 }
        var maximumHeight = heightShare.map { Double(output.height) * $0 }
        if maximumWidth == nil { maximumWidth = markWidth * maximumHeight! / markHeight }
        if maximumHeight == nil { maximumHeight = markHeight * maximumWidth! / markWidth }
        let boxWidth = maximumWidth!, boxHeight = maximumHeight!
        let size: (Double, Double) = markWidth / boxWidth >= markHeight / boxHeight
            ? (boxWidth, markHeight * boxWidth / markWidth)
            : (markWidth * boxHeight / markHeight, boxHeight)
        return (max(1, Int(size.0.rounded())), max(1, Int(size.1.rounded())))
    }

    /// The top-left corners of the copies of a `mark`-sized watermark in `output`.
    static func places(
        of mark: (width: Int, height: Int), in output: (width: Int, height: Int),
        horizontal: RenderRecipe.Watermark.Placement, vertical: RenderRecipe.Watermark.Placement
    ) -> [(x: Int, y: Int)] {
        var xs = positions(horizontal, mark: mark.width, side: output.width)
        var ys = positions(vertical, mark: mark.height, side: output.height)
        if horizontal == .spread, vertical == .spread, xs.count * ys.count > 100 {
            // thumbor: more than 100 copies become 6 × 6 (or fewer), spread over the image.
            xs = spread(copies: min(6, xs.count), mark: mark.width, side: output.width)
            ys = spread(copies: min(6, ys.count), mark: mark.height, side: output.height)
        }
        // Column by column, as thumbor draws them (it matters only where copies overlap).
        return xs.flatMap { x in ys.map { y in (x, y) } }
    }

    /// The positions along one side.
    private static func positions(_ placement: RenderRecipe.Watermark.Placement, mark: Int, side: Int) -> [Int] {
        switch placement {
        case .start(let length): return [length.pixels(of: side)]
        case .end(let length): return [side - mark - length.pixels(of: side)]
        case .center(let length): return [(side - mark) / 2 + length.pixels(of: side)]
        case .spread:
            // thumbor: as many whole copies as fit (or, when fewer than two do, enough to cover
            // the side), the spare pixels spread between them.
            if side < 2 * mark {
                let copies = (side + mark - 1) / mark
                return spread(copies: copies, mark: mark, side: side, spare: 10)
            }
            return spread(copies: side / mark, mark: mark, side: side)
        case .tiled(let spacing):
            return Array(stride(from: 0, to: side, by: mark + spacing))
        }
    }

    /// `copies` positions `mark + spare / (copies − 1)` apart from 0, the spare the side's
    /// pixels left over (thumbor's integer arithmetic).
    private static func spread(copies: Int, mark: Int, side: Int, spare: Int? = nil) -> [Int] {
        let leftover = spare ?? (side - copies * mark)
        let gap = leftover / (max(copies, 2) - 1)
        return (0..<copies).map { $0 * (gap + mark) }
    }

    /// `bitmap` with `mark` drawn over it at each of `places`.
    private func draw(_ mark: Bitmap, at places: [(x: Int, y: Int)], over bitmap: Bitmap) throws -> Bitmap {
        var base = bitmap.straightRGBA8()
        let width = bitmap.width, height = bitmap.height
        mark.pixels.withUnsafeBufferPointer { markPixels in
            for place in places {
                let left = max(place.x, 0), top = max(place.y, 0)
                let right = min(place.x + mark.width, width), bottom = min(place.y + mark.height, height)
                guard left < right, top < bottom else { continue }
                for y in top..<bottom {
                    for x in left..<right {
                        let from = (y - place.y) * mark.bytesPerRow + (x - place.x) * 4, to = (y * width + x) * 4
                        Self.composite(markPixels, at: from, over: &base, at: to)
                    }
                }
            }
        }
        let opaque = !bitmap.pixelFormat.hasAlpha
        if !opaque { return try Bitmap(width: width, height: height, pixelFormat: .rgba8, scale: bitmap.scale, pixels: base) }
        return try Bitmap(width: width, height: height, pixelFormat: .rgb8, scale: bitmap.scale) { output in
            let out = output.bindMemory(to: UInt8.self)
            for index in 0..<(width * height) {
                out[index * 3] = base[index * 4]; out[index * 3 + 1] = base[index * 4 + 1]; out[index * 3 + 2] = base[index * 4 + 2]
            }
        }
    }

    /// One watermark pixel over one image pixel, both straight RGBA, as thumbor's `_composite`
    /// computes it (in transparencies t = 1 − a, the result truncated).
    static func composite(_ mark: UnsafeBufferPointer<UInt8>, at from: Int, over base: inout [UInt8], at to: Int) {
        let markTransparency = 1 - Double(mark[from + 3]) / 255, baseTransparency = 1 - Double(base[to + 3]) / 255
        let both = markTransparency * baseTransparency
        let scale = 1 - both <= 1e-12 ? 1 : 1 / (1 - both)
        for channel in 0..<3 {
            let value = scale * ((1 - markTransparency) * Double(mark[from + channel])
                + (1 - baseTransparency) * Double(base[to + channel]) * markTransparency)
            base[to + channel] = UInt8(min(255, max(0, value)))
        }
        base[to + 3] = UInt8(min(255, max(0, 255 - 255 * both)))
    }
}
