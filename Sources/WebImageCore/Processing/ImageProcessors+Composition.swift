extension ImageProcessors {
    /// Several processors applied in order, as one. Its identifier joins theirs with `|`, so a
    /// composition and the same processors listed one by one name the same result.
    ///
    /// ```swift
    /// let avatar = ImageProcessors.Composition([.resize(width: 96, height: 96, contentMode: .fill), .circle])
    /// print(avatar.identifier)   // resize(w=96,h=96,fill,up=false)|circle
    /// ```
    public struct Composition: ImageProcessor {
        package var processors: [any ImageProcessor]

        public init(_ processors: [any ImageProcessor]) {
            self.processors = processors
        }

        public var identifier: String {
            processors.map(\.identifier).joined(separator: "|")
        }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            try processors.reduce(image) { try $1.process($0) }
        }
    }
}

extension ImageProcessor where Self == ImageProcessors.Composition {
    /// Several processors in order: see ``ImageProcessors/Composition``.
    ///
    /// ```swift
    /// let thumbnail: some ImageProcessor = .composition([.resize(width: 128), .grayscale])
    /// ```
    public static func composition(_ processors: [any ImageProcessor]) -> Self {
        ImageProcessors.Composition(processors)
    }
}
