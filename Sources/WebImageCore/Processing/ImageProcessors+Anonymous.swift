extension ImageProcessors {
    /// A processor made from a closure, for a one-off step that needs no type of its own. The
    /// `id` is its ``ImageProcessor/identifier``: it enters the cache key, so it must name what
    /// the closure does and change whenever its output would.
    ///
    /// ```swift
    /// let inverted = ImageProcessors.Anonymous(id: "invert") { image in
    ///     try image.mappingFrames { bitmap in try invertingColours(bitmap) }   // every frame of an animation
    /// }
    /// request.processors = [.resize(width: 256), inverted]
    /// ```
    public struct Anonymous: ImageProcessor {
        public let identifier: String
        private let closure: @Sendable (ImageContainer) throws -> ImageContainer

        public init(id: String, _ closure: @escaping @Sendable (ImageContainer) throws -> ImageContainer) {
            self.identifier = id
            self.closure = closure
        }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            try closure(image)
        }
    }
}
