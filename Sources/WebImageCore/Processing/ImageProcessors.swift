/// The built-in ``ImageProcessor``s: resize, crop, rounded corners and circle, Gaussian blur,
/// grayscale, quarter-turn rotation, flips, and a composition of any of them.
///
/// Each is a small value whose ``ImageProcessor/identifier`` spells out its parameters
/// (`resize(w=256,h=0,fit,up=false)`), so equal processors share cache entries and different
/// ones never do. Every processor handles each frame of an animated image. Sizes and radii are
/// in pixels, not points.
///
/// The same processors are available as static members, Nuke-style:
///
/// ```swift
/// let processors: [any ImageProcessor] = [.resize(width: 256, height: 256, contentMode: .fill), .circle]
/// let avatar = try ImageProcessors.Composition(processors).process(container)
/// ```
public enum ImageProcessors {}

extension ImageContainer {
    /// The container with `transform` applied to its image and to every frame of its animation
    /// (the image is the first frame, so it is transformed once, as part of the animation).
    ///
    /// The frames a transform makes are bounded like the frames a decoder makes: when the
    /// first transformed frame shows that the whole animation would take more than
    /// `maximumBytes` (an upscale of a long GIF), nothing more is allocated and the call throws
    /// ``ImageError/tooLarge(_:)``. An animation that does not grow is always allowed.
    ///
    /// The helper every built-in processor uses, so that a custom one handles animations in one
    /// line:
    ///
    /// ```swift
    /// func process(_ image: ImageContainer) throws -> ImageContainer {
    ///     try image.mappingFrames { try $0.cropped(x: 0, y: 0, width: 64, height: 64) }
    /// }
    /// ```
    public func mappingFrames(
        maximumBytes: Int = ImageDecodingOptions().maximumAnimationBytes,
        _ transform: (Bitmap) throws -> Bitmap
    ) throws -> ImageContainer {
        var result = self
        guard var animation else {
            result.image = try transform(image)
            return result
        }
        let first = try transform(animation.frames[0].bitmap)
        let (total, overflow) = first.cost.multipliedReportingOverflow(by: animation.frames.count)
        if overflow || (total > maximumBytes && total > animation.cost) {
            throw ImageError.tooLarge(
                "\(animation.frames.count) frames of \(first.width)×\(first.height) exceed the animation limit of \(maximumBytes) bytes")
        }
        animation.frames[0].bitmap = first
        for index in animation.frames.indices.dropFirst() {
            try WorkDeadline.check("processing frame \(index + 1) of \(animation.frames.count)")
            animation.frames[index].bitmap = try transform(animation.frames[index].bitmap)
        }
        result.animation = animation
        result.image = first
        return result
    }
}

/// A processor parameter as identifier text: whole numbers without a fraction (`8`, not `8.0`),
/// others in Swift's shortest round-tripping form (`2.5`), so equal values always print alike.
func identifierText(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
    return value.description
}
