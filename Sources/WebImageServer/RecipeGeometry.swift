import Foundation
import WebImage

/// The crop and resize of a ``RenderRecipe`` that the library's `Resize` cannot express because
/// they depend on the decoded size: a manual crop clamped to the image, a side that is the
/// source's own (`orig`), a box swapped to the image's orientation (`adaptive`), a `fill` whose
/// window is not centred, a box that is the smallest size (`full-fit-in`), and enlarging.
struct RecipeGeometry: ImageProcessor, Hashable {
    var crop: RenderRecipe.Rectangle?
    var width: Int
    var height: Int
    var widthIsOriginal: Bool
    var heightIsOriginal: Bool
    var box: RenderRecipe.Box
    var adaptive: Bool
    var alignment: RenderRecipe.Alignment
    var upscale: Bool
    var proportion: Double
    /// No output side is made larger than this (a `full-fit-in` box on a long, thin image, or
    /// an enlarged `orig`): the scale is lowered to keep within it.
    var maximumDimension: Int

    init(_ recipe: RenderRecipe, maximumDimension: Int) {
        self.maximumDimension = maximumDimension
        crop = recipe.crop
        width = recipe.width ?? 0
        height = recipe.height ?? 0
        widthIsOriginal = recipe.widthIsOriginal
        heightIsOriginal = recipe.heightIsOriginal
        box = recipe.box
        adaptive = recipe.adaptive
        alignment = recipe.alignment
        upscale = recipe.upscale
        proportion = recipe.proportion
    }

    var identifier: String {
        let cut = crop.map { "\($0.x),\($0.y),\($0.width),\($0.height)" } ?? "-"
        return "geometry(crop=\(cut),w=\(widthIsOriginal ? "orig" : String(width)),h=\(heightIsOriginal ? "orig" : String(height)),"
            + "\(box.rawValue),adaptive=\(adaptive),align=\(alignment.horizontal)\(alignment.vertical),up=\(upscale),prop=\(proportion),max=\(maximumDimension))"
    }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        try image.mappingFrames(apply)
    }

    private func apply(_ bitmap: Bitmap) throws -> Bitmap {
        var image = bitmap
        if let crop, let clamped = Self.clamp(crop, width: image.width, height: image.height) {
            image = try image.cropped(x: clamped.x, y: clamped.y, width: clamped.width, height: clamped.height)
        }
        let plan = plan(width: image.width, height: image.height)
        if plan.window != RenderRecipe.Rectangle(x: 0, y: 0, width: image.width, height: image.height) {
            image = try image.cropped(x: plan.window.x, y: plan.window.y, width: plan.window.width, height: plan.window.height)
        }
        if plan.size.width != image.width || plan.size.height != image.height {
            image = try image.resized(width: plan.size.width, height: plan.size.height)
        }
        // thumbor's proportion() scales what the resize made, its engine truncating the sides
        // (37.5 is 37); a side under one pixel skips it.
        let scaledWidth = Int(Double(image.width) * proportion), scaledHeight = Int(Double(image.height) * proportion)
        if proportion != 1, scaledWidth >= 1, scaledHeight >= 1, max(scaledWidth, scaledHeight) <= max(maximumDimension, image.width, image.height) {
            image = try image.resized(width: scaledWidth, height: scaledHeight)
        }
        return image
    }

    /// The crop inside the image, or `nil` when nothing of it is (thumbor then keeps the whole image).
    static func clamp(_ crop: RenderRecipe.Rectangle, width: Int, height: Int) -> RenderRecipe.Rectangle? {
        let left = min(max(crop.x, 0), width), top = min(max(crop.y, 0), height)
        let right = min(crop.x + crop.width, width), bottom = min(crop.y + crop.height, height)
        guard right > left, bottom > top else { return nil }
        return .init(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// For a `sourceWidth` × `sourceHeight` image (after the manual crop): the window of it to
    /// keep and the size to scale that window to.
    func plan(width sourceWidth: Int, height sourceHeight: Int) -> (window: RenderRecipe.Rectangle, size: (width: Int, height: Int)) {
        let full = RenderRecipe.Rectangle(x: 0, y: 0, width: sourceWidth, height: sourceHeight)
        var boxWidth = widthIsOriginal ? sourceWidth : width, boxHeight = heightIsOriginal ? sourceHeight : height
        if adaptive, boxWidth > 0, boxHeight > 0, (sourceWidth > sourceHeight) != (boxWidth > boxHeight), sourceWidth != sourceHeight {
            swap(&boxWidth, &boxHeight)
        }
        let sx = Double(boxWidth) / Double(sourceWidth), sy = Double(boxHeight) / Double(sourceHeight)
        let largest = Double(maximumDimension) / Double(max(sourceWidth, sourceHeight))
        func capped(_ scale: Double) -> Double { min(upscale ? scale : min(scale, 1), max(largest, 1)) }
        func scaled(_ scale: Double) -> (width: Int, height: Int) {
            (max(1, Int((Double(sourceWidth) * scale).rounded())), max(1, Int((Double(sourceHeight) * scale).rounded())))
        }
        switch (boxWidth > 0, boxHeight > 0) {
        case (false, false): return (full, (sourceWidth, sourceHeight))
        case (true, false): return (full, scaled(capped(sx)))
        case (false, true): return (full, scaled(capped(sy)))
        case (true, true): break
        }
        switch box {
        case .fit: return (full, scaled(capped(min(sx, sy))))
        case .cover: return (full, scaled(capped(max(sx, sy))))
        case .stretch:
            return (full, upscale ? (boxWidth, boxHeight) : (min(boxWidth, sourceWidth), min(boxHeight, sourceHeight)))
        case .fill:
            let scale = capped(max(sx, sy))
            let output = (width: min(boxWidth, scaled(scale).width), height: min(boxHeight, scaled(scale).height))
            let windowWidth = min(sourceWidth, max(1, Int((Double(output.width) / scale).rounded())))
            let windowHeight = min(sourceHeight, max(1, Int((Double(output.height) / scale).rounded())))
            // Alignment in halves: 0 keeps the left (top) edge, 2 the right (bottom) one.
            let x = (sourceWidth - windowWidth) * alignment.horizontal / 2
            let y = (sourceHeight - windowHeight) * alignment.vertical / 2
            return (.init(x: x, y: y, width: windowWidth, height: windowHeight), output)
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.identifier == rhs.identifier }
    func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}
