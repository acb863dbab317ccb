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
        let painted = background != nil || canvas.blurredBackground
        guard resized || (painted && bitmap.pixelFormat.hasAlpha && !canvas.keepsTransparency) else { return bitmap }
        guard layout.width <= max(maximumDimension, bitmap.width), layout.height <= max(maximumDimension, bitmap.height) else {
            throw ImageError.tooLarge("the canvas \(layout.width)×\(layout.height) exceeds \(maximumDimension)")
        }
        let backdrop = canvas.blurredBackground ? try Self.backdrop(of: bitmap, width: layout.width, height: layout.height) : nil
        // Alpha is kept without a background, when the image's transparency is to stay, or
        // when the background is the image itself (its transparency blurred).
        let keepsAlpha = !painted || (canvas.keepsTransparency || backdrop != nil) && bitmap.pixelFormat.hasAlpha
        let format: PixelFormat = keepsAlpha ? .rgba8 : .rgb8
        let outputBytes = format.bytesPerPixel
        return try Bitmap(width: layout.width, height: layout.height, pixelFormat: format, scale: bitmap.scale) { output in
            let out = output.bindMemory(to: UInt8.self)
            // The background everywhere first (transparent black without one).
            if let backdrop {
                backdrop.pixels.withUnsafeBufferPointer { input in
                    for row in 0..<layout.height {
                        for column in 0..<layout.width {
                            let pixel = backdrop.straightPixel(input, column, row), to = (row * layout.width + column) * outputBytes
                            for channel in 0..<outputBytes { out[to + channel] = UInt8(pixel[channel]) }
                        }
                    }
                }
            } else {
                let fill: [UInt8] = background.map { keepsAlpha ? $0 + [255] : $0 } ?? [0, 0, 0, 0]
                for index in 0..<(layout.width * layout.height) {
                    for channel in 0..<outputBytes { out[index * outputBytes + channel] = fill[channel] }
                }
            }
            bitmap.pixels.withUnsafeBufferPointer { input in
                for row in 0..<bitmap.height {
                    for column in 0..<bitmap.width {
                        let pixel = bitmap.straightPixel(input, column, row), a = pixel[3]
                        let to = ((row + layout.y) * layout.width + column + layout.x) * outputBytes
                        if painted, !canvas.keepsTransparency || !keepsAlpha {
                            // Over the background: straight alpha, rounded.
                            let under = outputBytes == 4 ? Int(out[to + 3]) : 255
                            let coverage = a * 255 + under * (255 - a)
                            for channel in 0..<3 {
                                out[to + channel] = coverage == 0 ? 0
                                    : UInt8((pixel[channel] * a * 255 + Int(out[to + channel]) * under * (255 - a) + coverage / 2) / coverage)
                            }
                            if outputBytes == 4 { out[to + 3] = UInt8((coverage + 127) / 255) }
                        } else {
                            for channel in 0..<outputBytes { out[to + channel] = UInt8(pixel[channel]) }
                        }
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
