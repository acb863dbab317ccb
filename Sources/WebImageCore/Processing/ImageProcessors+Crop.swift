extension ImageProcessors {
    /// Cuts out a rectangle, or a size centred on the image.
    ///
    /// A rectangle is clipped to the image; a centred size larger than the image keeps that
    /// side whole. A rectangle entirely outside the image, or a size that is not positive, fails
    /// with ``ImageError/invalidBitmap(_:)``.
    ///
    /// ```swift
    /// let banner = ImageProcessors.Crop(x: 0, y: 100, width: 1200, height: 300)
    /// print(banner.identifier)                                        // crop(x=0,y=100,w=1200,h=300)
    /// print(ImageProcessors.Crop(width: 300, height: 300).identifier)  // crop(center,w=300,h=300)
    /// ```
    public struct Crop: ImageProcessor, Hashable {
        /// Where the rectangle lies.
        package enum Placement: Sendable, Hashable {
            /// Its top-left corner is at (`x`, `y`).
            case origin(x: Int, y: Int)
            /// It is centred on the image.
            case center
        }

        package var placement: Placement
        package var width: Int
        package var height: Int

        /// The rectangle at (`x`, `y`), `width` × `height`.
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.placement = .origin(x: x, y: y)
            self.width = width
            self.height = height
        }

        /// A `width` × `height` rectangle centred on the image.
        public init(width: Int, height: Int) {
            self.placement = .center
            self.width = width
            self.height = height
        }

        public var identifier: String {
            switch placement {
            case .origin(let x, let y): "crop(x=\(x),y=\(y),w=\(width),h=\(height))"
            case .center: "crop(center,w=\(width),h=\(height))"
            }
        }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            try image.mappingFrames { bitmap in
                if case .origin(let x, let y) = placement {
                    return try bitmap.cropped(x: x, y: y, width: width, height: height)
                }
                // A size that is not positive reaches `cropped`, which rejects it.
                let cropWidth = min(width, bitmap.width), cropHeight = min(height, bitmap.height)
                return try bitmap.cropped(x: (bitmap.width - cropWidth) / 2, y: (bitmap.height - cropHeight) / 2,
                                          width: cropWidth, height: cropHeight)
            }
        }
    }
}

extension ImageProcessor where Self == ImageProcessors.Crop {
    /// Cuts out a rectangle: see ``ImageProcessors/Crop``.
    ///
    /// ```swift
    /// request.processors = [.crop(x: 10, y: 10, width: 100, height: 100)]
    /// ```
    public static func crop(x: Int, y: Int, width: Int, height: Int) -> Self {
        ImageProcessors.Crop(x: x, y: y, width: width, height: height)
    }

    /// Cuts out a size centred on the image: see ``ImageProcessors/Crop``.
    ///
    /// ```swift
    /// request.processors = [.crop(width: 100, height: 100)]
    /// ```
    public static func crop(width: Int, height: Int) -> Self {
        ImageProcessors.Crop(width: width, height: height)
    }
}
