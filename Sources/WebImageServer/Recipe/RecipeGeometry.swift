import Foundation
import WebImage

/// The crop and resize of a ``RenderRecipe`` that the library's `Resize` cannot express because
/// they depend on the decoded size: a manual crop clamped to the image, a side that is the
/// source's own (`orig`), a box swapped to the image's orientation (`adaptive`), a `fill` whose
/// window is not centred (or is centred on a focus point), a box that is the smallest size
/// (`full-fit-in`), imgproxy's `fill-down`, `auto` and sized crop, and enlarging.
struct RecipeGeometry: ImageProcessor, Hashable {
    var trim: RenderRecipe.Trim?
    var crop: RenderRecipe.Rectangle?
    var width: Int
    var height: Int
    var widthIsOriginal: Bool
    var heightIsOriginal: Bool
    var box: RenderRecipe.Box
    var adaptive: Bool
    var alignment: RenderRecipe.Alignment
    var focus: RenderRecipe.Focus?
    /// Place a `fill` window with ``ImageProcessors/SmartCrop`` (when there is no ``focus`` and
    /// no ``focalRegions``).
    var isSmart: Bool
    /// thumbor's `focal()` regions, in source pixels: the window centres on them.
    var focalRegions: [RenderRecipe.Rectangle]
    var sizedCrop: RenderRecipe.SizedCrop?
    var upscale: Bool
    var proportion: Double
    /// The smallest output width and height (imgproxy's `min-width`, `min-height`; 0 for none).
    var minimumWidth: Int
    var minimumHeight: Int
    /// No output side is made larger than this (a `full-fit-in` box on a long, thin image, or
    /// an enlarged `orig`): the scale is lowered to keep within it.
    var maximumDimension: Int

    init(_ recipe: RenderRecipe, maximumDimension: Int) {
        self.maximumDimension = maximumDimension
        trim = recipe.trim
        crop = recipe.crop
        width = recipe.width ?? 0
        height = recipe.height ?? 0
        widthIsOriginal = recipe.widthIsOriginal
        heightIsOriginal = recipe.heightIsOriginal
        box = recipe.box
        adaptive = recipe.adaptive
        alignment = recipe.alignment
        focus = recipe.focus
        isSmart = recipe.isSmart && recipe.focus == nil && recipe.focalRegions.isEmpty
        focalRegions = recipe.focus == nil ? recipe.focalRegions : []
        sizedCrop = recipe.sizedCrop
        upscale = recipe.upscale
        proportion = recipe.proportion
        minimumWidth = recipe.minimumWidth
        minimumHeight = recipe.minimumHeight
    }

    var identifier: String {
        let cut = crop.map { "\($0.x),\($0.y),\($0.width),\($0.height)" } ?? "-"
        return "geometry(\(trim.map { $0.key + "," } ?? "")crop=\(cut),w=\(widthIsOriginal ? "orig" : String(width)),h=\(heightIsOriginal ? "orig" : String(height)),"
            + "\(box.rawValue),adaptive=\(adaptive),align=\(alignment.horizontal)\(alignment.vertical),up=\(upscale),prop=\(proportion),max=\(maximumDimension)"
            + (focus.map { ",focus=\($0.x),\($0.y)" } ?? "") + (isSmart ? ",smart" : "")
            + (focalRegions.isEmpty ? "" : ",focal=" + focalRegions.map { "\($0.x),\($0.y),\($0.width),\($0.height)" }.joined(separator: ";"))
            + (minimumWidth > 0 || minimumHeight > 0 ? ",min=\(minimumWidth)x\(minimumHeight)" : "")
            + (sizedCrop.map { ",sized=\($0.width)x\($0.height)@\($0.alignment.horizontal)\($0.alignment.vertical)" + ($0.focus.map { "fp\($0.x),\($0.y)" } ?? "") } ?? "") + ")"
    }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        // The trim and a smart window are chosen once, on the first frame, so that an animation
        // is cut alike.
        let trimmed = trim.flatMap { $0.window(in: image.image) }
        let smartOrigin = isSmart ? try smartWindowOrigin(in: image.image, trimmed: trimmed) : nil
        return try image.mappingFrames { try apply($0, trimmed: trimmed, smartOrigin: smartOrigin) }
    }

    /// The trim, the manual and the sized crops, which come before the box.
    private func cropped(_ bitmap: Bitmap, trimmed: RenderRecipe.Rectangle?) throws -> Bitmap {
        var image = bitmap
        if let trimmed, trimmed.x + trimmed.width <= image.width, trimmed.y + trimmed.height <= image.height {
            image = try image.cropped(x: trimmed.x, y: trimmed.y, width: trimmed.width, height: trimmed.height)
        }
        if let crop, let clamped = Self.clamp(crop, width: image.width, height: image.height) {
            image = try image.cropped(x: clamped.x, y: clamped.y, width: clamped.width, height: clamped.height)
        }
        if let sizedCrop {
            let window = Self.window(sizedCrop, width: image.width, height: image.height)
            image = try image.cropped(x: window.x, y: window.y, width: window.width, height: window.height)
        }
        return image
    }

    /// Where ``ImageProcessors/SmartCrop`` puts the plan's window in `bitmap` (after the crops).
    private func smartWindowOrigin(in bitmap: Bitmap, trimmed: RenderRecipe.Rectangle?) throws -> (x: Int, y: Int) {
        let image = try cropped(bitmap, trimmed: trimmed)
        let window = plan(width: image.width, height: image.height).window
        let smart = ImageProcessors.SmartCrop(width: window.width, height: window.height).window(in: image)
        return (smart.x, smart.y)
    }

    private func apply(_ bitmap: Bitmap, trimmed: RenderRecipe.Rectangle?, smartOrigin: (x: Int, y: Int)?) throws -> Bitmap {
        var image = try cropped(bitmap, trimmed: trimmed)
        var geometry = self
        if !focalRegions.isEmpty {
            geometry.focus = focalFocus(in: (bitmap.width, bitmap.height), trimmed: trimmed, croppedSize: (image.width, image.height))
        }
        var plan = geometry.plan(width: image.width, height: image.height)
        if let smartOrigin {
            plan.window.x = min(smartOrigin.x, image.width - plan.window.width)
            plan.window.y = min(smartOrigin.y, image.height - plan.window.height)
        }
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

    /// The point the ``focalRegions`` give, as a focus in the image after the trim and the
    /// manual crop (of `croppedSize`), as thumbor computes it: each region's centre (its
    /// integer middle), weighted by its area, floored; regions whose centre the crop leaves
    /// out do not count; `nil` when none is left.
    func focalFocus(
        in size: (width: Int, height: Int), trimmed: RenderRecipe.Rectangle?, croppedSize: (width: Int, height: Int)
    ) -> RenderRecipe.Focus? {
        var originX = 0, originY = 0
        var visible = RenderRecipe.Rectangle(x: 0, y: 0, width: size.width, height: size.height)
        if let trimmed {
            (originX, originY) = (trimmed.x, trimmed.y)
            visible = trimmed
        }
        if let crop, let clamped = Self.clamp(crop, width: visible.width, height: visible.height) {
            originX += clamped.x
            originY += clamped.y
            visible = .init(x: originX, y: originY, width: clamped.width, height: clamped.height)
        }
        var totalWeight = 0.0, totalX = 0.0, totalY = 0.0
        for region in focalRegions {
            let centerX = region.x + region.width / 2, centerY = region.y + region.height / 2
            guard centerX >= visible.x, centerX <= visible.x + visible.width,
                  centerY >= visible.y, centerY <= visible.y + visible.height else { continue }
            let weight = Double(region.width) * Double(region.height)
            totalWeight += weight
            totalX += Double(centerX - originX) * weight
            totalY += Double(centerY - originY) * weight
        }
        guard totalWeight > 0, croppedSize.width > 0, croppedSize.height > 0 else { return nil }
        return .init(x: (totalX / totalWeight).rounded(.down) / Double(croppedSize.width),
                     y: (totalY / totalWeight).rounded(.down) / Double(croppedSize.height))
    }

    /// The crop inside the image, or `nil` when nothing of it is (thumbor then keeps the whole image).
    static func clamp(_ crop: RenderRecipe.Rectangle, width: Int, height: Int) -> RenderRecipe.Rectangle? {
        let left = min(max(crop.x, 0), width), top = min(max(crop.y, 0), height)
        let right = min(crop.x + crop.width, width), bottom = min(crop.y + crop.height, height)
        guard right > left, bottom > top else { return nil }
        return .init(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The window of a `width` × `height` image that `crop` keeps.
    static func window(_ crop: RenderRecipe.SizedCrop, width: Int, height: Int) -> RenderRecipe.Rectangle {
        func side(_ value: Double, _ whole: Int) -> Int {
            // imgproxy: under 1 is a fraction of the side, 0 the whole side, from 1 on pixels.
            let pixels = value == 0 ? whole : value < 1 ? Int((value * Double(whole)).rounded()) : Int(value)
            return min(max(pixels, 1), whole)
        }
        let cropWidth = side(crop.width, width), cropHeight = side(crop.height, height)
        let origin = place(cropWidth, cropHeight, in: (width, height), alignment: crop.alignment, focus: crop.focus)
        return .init(x: origin.x, y: origin.y, width: cropWidth, height: cropHeight)
    }

    /// Where a `windowWidth` × `windowHeight` window goes in `size`: at the alignment's edge or
    /// centre, or centred on the focus point as far as the image allows.
    static func place(
        _ windowWidth: Int, _ windowHeight: Int, in size: (width: Int, height: Int),
        alignment: RenderRecipe.Alignment, focus: RenderRecipe.Focus?
    ) -> (x: Int, y: Int) {
        let spareX = max(size.width - windowWidth, 0), spareY = max(size.height - windowHeight, 0)
        guard let focus else { return (spareX * alignment.horizontal / 2, spareY * alignment.vertical / 2) }
        let x = Int((focus.x * Double(size.width) - Double(windowWidth) / 2).rounded())
        let y = Int((focus.y * Double(size.height) - Double(windowHeight) / 2).rounded())
        return (min(max(x, 0), spareX), min(max(y, 0), spareY))
    }

    /// For a `sourceWidth` × `sourceHeight` image (after the manual crop): the window of it to
    /// keep and the size to scale that window to.
    func plan(width sourceWidth: Int, height sourceHeight: Int) -> (window: RenderRecipe.Rectangle, size: (width: Int, height: Int)) {
        let plan = boxPlan(width: sourceWidth, height: sourceHeight)
        guard minimumWidth > 0 || minimumHeight > 0, box != .stretch else { return plan }
        // imgproxy's min-width and min-height raise the scale (enlarging if need be); the box's
        // given sides then crop what grew past them, at the gravity.
        let scale = Double(plan.size.width) / Double(plan.window.width)
        let raised = max(scale, Double(minimumWidth) / Double(sourceWidth), Double(minimumHeight) / Double(sourceHeight))
        guard raised > scale else { return plan }
        let limit = Double(maximumDimension) / Double(max(sourceWidth, sourceHeight))
        let final = min(raised, max(limit, scale))
        let grown = (max(1, Int((Double(sourceWidth) * final).rounded())), max(1, Int((Double(sourceHeight) * final).rounded())))
        let boxWidth = widthIsOriginal ? sourceWidth : width, boxHeight = heightIsOriginal ? sourceHeight : height
        let output = (width: boxWidth > 0 ? min(boxWidth, grown.0) : grown.0, height: boxHeight > 0 ? min(boxHeight, grown.1) : grown.1)
        let windowWidth = min(sourceWidth, max(1, Int((Double(output.width) / final).rounded())))
        let windowHeight = min(sourceHeight, max(1, Int((Double(output.height) / final).rounded())))
        let (x, y) = Self.place(windowWidth, windowHeight, in: (sourceWidth, sourceHeight), alignment: alignment, focus: focus)
        return (.init(x: x, y: y, width: windowWidth, height: windowHeight), output)
    }

    /// ``plan(width:height:)`` before the minimum sizes.
    private func boxPlan(width sourceWidth: Int, height sourceHeight: Int) -> (window: RenderRecipe.Rectangle, size: (width: Int, height: Int)) {
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
        var box = box
        if box == .auto {
            // imgproxy: fill when the image and the box are both landscape or both portrait.
            box = (sourceWidth > sourceHeight) == (boxWidth > boxHeight) ? .fill : .fit
        }
        switch box {
        case .fit, .auto: return (full, scaled(capped(min(sx, sy))))
        case .cover: return (full, scaled(capped(max(sx, sy))))
        case .stretch:
            return (full, upscale ? (boxWidth, boxHeight) : (min(boxWidth, sourceWidth), min(boxHeight, sourceHeight)))
        case .fill, .fillDown:
            let scale = capped(max(sx, sy))
            var output = (width: min(boxWidth, scaled(scale).width), height: min(boxHeight, scaled(scale).height))
            if box == .fillDown, output.width < boxWidth || output.height < boxHeight {
                // Too small to cover the box: the largest window of the box's shape instead.
                let shrink = min(Double(scaled(scale).width) / Double(boxWidth), Double(scaled(scale).height) / Double(boxHeight))
                output = (max(1, min(boxWidth, Int((Double(boxWidth) * shrink).rounded()))), max(1, min(boxHeight, Int((Double(boxHeight) * shrink).rounded()))))
            }
            let windowWidth = min(sourceWidth, max(1, Int((Double(output.width) / scale).rounded())))
            let windowHeight = min(sourceHeight, max(1, Int((Double(output.height) / scale).rounded())))
            // Alignment in halves: 0 keeps the left (top) edge, 2 the right (bottom) one.
            let (x, y) = Self.place(windowWidth, windowHeight, in: (sourceWidth, sourceHeight), alignment: alignment, focus: focus)
            return (.init(x: x, y: y, width: windowWidth, height: windowHeight), output)
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.identifier == rhs.identifier }
    func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}
