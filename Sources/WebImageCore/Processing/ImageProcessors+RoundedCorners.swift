extension ImageProcessors {
    /// Rounds the corners to quarter circles of `radius` pixels, transparent outside, with an
    /// anti-aliased edge (``Bitmap/roundingCorners(radius:)``). Opaque images gain an alpha
    /// channel.
    ///
    /// ```swift
    /// let card = ImageProcessors.RoundedCorners(radius: 12)
    /// print(card.identifier)   // roundedCorners(r=12)
    /// ```
    public struct RoundedCorners: ImageProcessor, Hashable {
        package var radius: Double

        public init(radius: Double) {
            self.radius = max(radius, 0)
        }

        public var identifier: String { "roundedCorners(r=\(identifierText(radius)))" }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            try image.mappingFrames { $0.roundingCorners(radius: radius) }
        }
    }

    /// Crops the image to its centred square and makes it a circle: transparent outside, with
    /// an anti-aliased edge. Opaque images gain an alpha channel.
    ///
    /// ```swift
    /// let avatar = ImageProcessors.Composition([
    ///     ImageProcessors.Resize(width: 96, height: 96, contentMode: .fill),
    ///     ImageProcessors.Circle(),
    /// ])
    /// print(avatar.identifier)   // resize(w=96,h=96,fill,up=false)|circle
    /// ```
    public struct Circle: ImageProcessor, Hashable {
        public init() {}

        public var identifier: String { "circle" }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            try image.mappingFrames { bitmap in
                let side = min(bitmap.width, bitmap.height)
                return try bitmap.cropped(x: (bitmap.width - side) / 2, y: (bitmap.height - side) / 2, width: side, height: side)
                    .roundingCorners(radius: Double(side) / 2)
            }
        }
    }
}

extension ImageProcessor where Self == ImageProcessors.RoundedCorners {
    /// Rounds the corners: see ``ImageProcessors/RoundedCorners``.
    ///
    /// ```swift
    /// request.processors = [.roundedCorners(radius: 12)]
    /// ```
    public static func roundedCorners(radius: Double) -> Self {
        ImageProcessors.RoundedCorners(radius: radius)
    }
}

extension ImageProcessor where Self == ImageProcessors.Circle {
    /// Crops to a centred circle: see ``ImageProcessors/Circle``.
    ///
    /// ```swift
    /// request.processors = [.resize(width: 96, height: 96, contentMode: .fill), .circle]
    /// ```
    public static var circle: Self { ImageProcessors.Circle() }
}
