import Foundation
import WebImage

/// thumbor's `meta/` answer: the source's size, the operations the URL asks for (as thumbor
/// names them) and the size of the image it would get, as JSON, without rendering it; and, beyond
/// thumbor's own fields, the source's placeholders (`thumbHash` in base64, a 4×3 `blurHash`), as
/// `/info` gives them.
///
/// `{"thumbor": {"source": {"url", "width", "height", "frameCount", "thumbHash", "blurHash"}, "operations": [{"type":
/// "crop", "left", "top", "right", "bottom"}, {"type": "resize", "width", "height"},
/// {"type": "flip_horizontally"}, {"type": "flip_vertically"}, {"type": "rotate", "angle"}],
/// "target": {"width", "height"}}}`
enum ThumborMeta {
    /// The JSON of `url` for a source of `width` × `height` pixels and `frames` frames, whose
    /// placeholders are `placeholders`.
    static func json(
        _ url: ThumborURL, image: String, width: Int, height: Int, frames: Int, placeholders: PlaceholderReport, maximumDimension: Int
    ) -> Data {
        let recipe = url.recipe
        var operations: [[String: Any]] = []
        var current = (width: width, height: height)
        var origin = (x: 0, y: 0)
        if let crop = recipe.crop, let clamped = RecipeGeometry.clamp(crop, width: width, height: height) {
            origin = (clamped.x, clamped.y)
            current = (clamped.width, clamped.height)
        }
        let plan = RecipeGeometry(recipe, maximumDimension: maximumDimension).plan(width: current.width, height: current.height)
        // thumbor reports the manual crop and the fill's window as one crop, in source pixels.
        if plan.window.width != width || plan.window.height != height {
            let left = origin.x + plan.window.x, top = origin.y + plan.window.y
            operations.append(["type": "crop", "left": left, "top": top, "right": left + plan.window.width, "bottom": top + plan.window.height])
        }
        var size = plan.size
        if recipe.proportion != 1 {
            let scaled = (Int(Double(size.width) * recipe.proportion), Int(Double(size.height) * recipe.proportion))
            if scaled.0 >= 1, scaled.1 >= 1 { size = scaled }
        }
        if size.width != plan.window.width || size.height != plan.window.height {
            operations.append(["type": "resize", "width": size.width, "height": size.height])
        }
        if recipe.flipHorizontal { operations.append(["type": "flip_horizontally"]) }
        if recipe.flipVertical { operations.append(["type": "flip_vertically"]) }
        if recipe.quarterTurns % 4 != 0 {
            // thumbor's angle is counter-clockwise; the recipe's quarter turns are clockwise.
            operations.append(["type": "rotate", "angle": (4 - recipe.quarterTurns % 4) * 90])
            if recipe.quarterTurns % 2 == 1 { size = (size.height, size.width) }
        }
        let document: [String: Any] = ["thumbor": [
            "source": [
                "url": image, "width": width, "height": height, "frameCount": frames,
                "thumbHash": placeholders.thumbHash.base64, "blurHash": placeholders.blurHash.string,
            ] as [String: Any],
            "operations": operations,
            "target": ["width": size.width, "height": size.height],
        ] as [String: Any]]
        return (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data("{}".utf8)
    }
}
