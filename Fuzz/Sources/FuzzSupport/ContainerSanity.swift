import WebImageCore

/// The promises every successful decode keeps, whatever the input.
public enum ContainerSanity {
    /// A decoded container's bitmaps are non-empty, hold the bytes their geometry claims, and
    /// stay within the pixel limit the decode was given; an animation's frames share one canvas.
    public static func check(_ container: ImageContainer, options: ImageDecodingOptions) {
        let bitmaps = container.animation.map { $0.frames.map(\.bitmap) } ?? [container.image]
        if let animation = container.animation {
            if animation.frames.isEmpty { FuzzInput.finding("an animation without frames") }
            if animation.frames.count > options.maximumFrameCount {
                FuzzInput.finding("\(animation.frames.count) frames, over the limit of \(options.maximumFrameCount)")
            }
            if let odd = animation.frames.first(where: { $0.bitmap.width != animation.width || $0.bitmap.height != animation.height }) {
                FuzzInput.finding("a frame of \(odd.bitmap.width)×\(odd.bitmap.height) in an animation of \(animation.width)×\(animation.height)")
            }
        }
        for bitmap in bitmaps + [container.image] {
            if bitmap.width < 1 || bitmap.height < 1 {
                FuzzInput.finding("an empty bitmap \(bitmap.width)×\(bitmap.height)")
            }
            if bitmap.width * bitmap.height > options.maximumPixelCount {
                FuzzInput.finding("\(bitmap.width)×\(bitmap.height) is over the pixel limit \(options.maximumPixelCount)")
            }
            if bitmap.pixels.count < bitmap.bytesPerRow * bitmap.height {
                FuzzInput.finding("\(bitmap.width)×\(bitmap.height) bitmap with \(bitmap.bytesPerRow) bytes per row and \(bitmap.pixels.count) bytes")
            }
        }
    }
}
