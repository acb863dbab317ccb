extension ImageProcessors {
    /// Turns colours into shades of grey: Rec. 601 luma (`0.299 R + 0.587 G + 0.114 B`) in
    /// every colour channel, alpha and format kept (``Bitmap/grayscaled()``).
    ///
    /// ```swift
    /// print(ImageProcessors.Grayscale().identifier)   // grayscale(rec601)
    /// ```
    public struct Grayscale: ImageProcessor, Hashable {
        public init() {}

        public var identifier: String { "grayscale(rec601)" }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            try image.mappingFrames { $0.grayscaled() }
        }
    }
}

extension ImageProcessor where Self == ImageProcessors.Grayscale {
    /// Shades of grey: see ``ImageProcessors/Grayscale``.
    ///
    /// ```swift
    /// request.processors = [.grayscale]
    /// ```
    public static var grayscale: Self { ImageProcessors.Grayscale() }
}
