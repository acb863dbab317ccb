/// One step that changes a decoded image: resize, crop, blur, and so on.
///
/// Processors run in order after decoding, and their ``identifier``s enter the cache key, so
/// two requests for the same URL with different processors are cached apart while sharing the
/// download and the decode. An identifier must be stable across runs and processes and differ
/// whenever the output would.
///
/// ```swift
/// struct Sepia: ImageProcessor {
///     var identifier: String { "sepia" }
///     func process(_ image: ImageContainer) throws -> ImageContainer {
///         try image.mappingFrames { try sepia($0.grayscaled()) }   // every frame of an animation
///     }
/// }
/// ```
public protocol ImageProcessor: Sendable {
    /// A stable string naming the processor and its parameters, e.g. `resize(w=256,h=256,fit)`.
    var identifier: String { get }

    /// Returns the processed image. Animated images have every frame processed.
    func process(_ image: ImageContainer) throws -> ImageContainer
}

extension Array where Element == any ImageProcessor {
    /// Runs the processors in order; an error of a processor's own is reported as
    /// ``ImageError/custom(_:)`` naming it.
    func apply(to container: ImageContainer) throws -> ImageContainer {
        try reduce(container) { image, processor in
            do {
                return try processor.process(image)
            } catch {
                throw ImageError(error, origin: .processor(processor.identifier))
            }
        }
    }
}
