extension ImageProcessors {
    /// Blurs with a Gaussian whose standard deviation is `radius` pixels
    /// (``Bitmap/blurred(radius:)``): separable, on premultiplied alpha. A radius of 0 leaves
    /// the image unchanged.
    ///
    /// ```swift
    /// let backdrop = ImageProcessors.GaussianBlur(radius: 8)
    /// print(backdrop.identifier)   // gaussianBlur(r=8)
    /// ```
    public struct GaussianBlur: ImageProcessor, Hashable {
        package var radius: Double

        public init(radius: Double) {
            self.radius = radius.isFinite ? max(radius, 0) : 0
        }

        public var identifier: String { "gaussianBlur(r=\(identifierText(radius)))" }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            try image.mappingFrames { try $0.blurred(radius: radius) }
        }
    }
}

extension ImageProcessor where Self == ImageProcessors.GaussianBlur {
    /// Blurs: see ``ImageProcessors/GaussianBlur``.
    ///
    /// ```swift
    /// request.processors = [.gaussianBlur(radius: 8)]
    /// ```
    public static func gaussianBlur(radius: Double) -> Self {
        ImageProcessors.GaussianBlur(radius: radius)
    }
}
