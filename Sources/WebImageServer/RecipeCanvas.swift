import Foundation
import WebImage

/// The last step of a ``RenderRecipe`` with a ``RenderRecipe/Canvas`` (imgproxy's `extend`,
/// `padding` and `background`): the image placed on a larger canvas and bordered, and its
/// transparency painted over the background colour.
///
/// With a background the output is opaque RGB; without one, the new area is transparent and
/// the output RGBA (straight alpha). Nothing is done when the canvas is the image's own size
/// and there is no background to paint.
struct RecipeCanvas: ImageProcessor, Hashable {
    var canvas: RenderRecipe.Canvas
    /// No side of the output is made larger than this.
    var maximumDimension: Int

    var identifier: String { "canvas(\(canvas.key),max=\(maximumDimension))" }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        try image.mappingFrames(apply)
    }

    /// The output size and where the image goes in it.
    func layout(width: Int, height: Int) -> (width: Int, height: Int, x: Int, y: Int) {
        let innerWidth = max(width, canvas.width), innerHeight = max(height, canvas.height)
        let origin = RecipeGeometry.place(width, height, in: (innerWidth, innerHeight), alignment: canvas.alignment, focus: nil)
        let padding = canvas.padding
        return (innerWidth + padding[1] + padding[3], innerHeight + padding[0] + padding[2],
                origin.x + padding[3], origin.y + padding[0])
    }

    private func apply(_ bitmap: Bitmap) throws -> Bitmap {
        let layout = layout(width: bitmap.width, height: bitmap.height)
        let resized = layout.width != bitmap.width || layout.height != bitmap.height
        let background = canvas.meanBackground ? Self.mean(of: bitmap) : canvas.background
        guard resized || (background != nil && bitmap.pixelFormat.hasAlpha && !canvas.keepsTransparency) else { return bitmap }
        guard layout.width <= max(maximumDimension, bitmap.width), layout.height <= max(maximumDimension, bitmap.height) else {
            throw ImageError.tooLarge("the canvas \(layout.width)×\(layout.height) exceeds \(maximumDimension)")
        }
        // Alpha is kept without a background, or when the image's transparency is to stay.
        let keepsAlpha = background == nil || (canvas.keepsTransparency && bitmap.pixelFormat.hasAlpha)
        let format: PixelFormat = keepsAlpha ? .rgba8 : .rgb8
        let outputBytes = format.bytesPerPixel
        let rgba = bitmap.straightRGBA8()
        return try Bitmap(width: layout.width, height: layout.height, pixelFormat: format, scale: bitmap.scale) { output in
            let out = output.bindMemory(to: UInt8.self)
            // The background everywhere first (transparent black without one).
            let fill: [UInt8] = background.map { keepsAlpha ? $0 + [255] : $0 } ?? [0, 0, 0, 0]
            for index in 0..<(layout.width * layout.height) {
                for channel in 0..<outputBytes { out[index * outputBytes + channel] = fill[channel] }
            }
            for row in 0..<bitmap.height {
                for column in 0..<bitmap.width {
                    let from = (row * bitmap.width + column) * 4
                    let r = Int(rgba[from]), g = Int(rgba[from + 1]), b = Int(rgba[from + 2]), a = Int(rgba[from + 3])
                    let to = ((row + layout.y) * layout.width + column + layout.x) * outputBytes
                    if let background, !keepsAlpha {
                        // Over the background colour: straight alpha, rounded.
                        out[to] = UInt8((r * a + Int(background[0]) * (255 - a) + 127) / 255)
                        out[to + 1] = UInt8((g * a + Int(background[1]) * (255 - a) + 127) / 255)
                        out[to + 2] = UInt8((b * a + Int(background[2]) * (255 - a) + 127) / 255)
                    } else {
                        out[to] = UInt8(r); out[to + 1] = UInt8(g); out[to + 2] = UInt8(b)
                        if outputBytes == 4 { out[to + 3] = UInt8(a) }
                    }
                }
            }
        }
    }

    /// The mean red, green and blue of `bitmap` (rounded down, as thumbor's `fill(auto)`).
    static func mean(of bitmap: Bitmap) -> [UInt8] {
        let step = bitmap.pixelFormat.bytesPerPixel
        let grey = bitmap.pixelFormat.channels == .gray || bitmap.pixelFormat.channels == .grayAlpha
        var sums = [0, 0, 0]
        for row in 0..<bitmap.height {
            for column in 0..<bitmap.width {
                let offset = row * bitmap.bytesPerRow + column * step
                for channel in 0..<3 { sums[channel] += Int(bitmap.pixels[offset + (grey ? 0 : channel)]) }
            }
        }
        let count = max(1, bitmap.width * bitmap.height)
        return sums.map { UInt8($0 / count) }
    }
}
