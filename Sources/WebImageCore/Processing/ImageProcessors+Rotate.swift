extension ImageProcessors {
    /// Turns the image clockwise by a number of quarter turns (negative turns go
    /// counter-clockwise); one or three turns swap width and height.
    ///
    /// ```swift
    /// let upright = ImageProcessors.Rotate(quarterTurns: 1)
    /// print(upright.identifier)                                    // rotate(90)
    /// print(ImageProcessors.Rotate(quarterTurns: -1).identifier)   // rotate(270)
    /// ```
    public struct Rotate: ImageProcessor, Hashable {
        /// Clockwise quarter turns, 0 to 3.
        package var quarterTurns: Int

        public init(quarterTurns: Int) {
            self.quarterTurns = ((quarterTurns % 4) + 4) % 4
        }

        public var identifier: String { "rotate(\(quarterTurns * 90))" }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            // The EXIF orientation that views as this rotation: `.right` is "rotate 90°
            // clockwise to view".
            let orientation: ImageOrientation = [.up, .right, .down, .left][quarterTurns]
            return try image.mappingFrames { $0.oriented(orientation) }
        }
    }

    /// Mirrors the image left to right (`.horizontal`) or top to bottom (`.vertical`).
    ///
    /// ```swift
    /// let mirror = ImageProcessors.Flip(.horizontal)
    /// print(mirror.identifier)   // flip(horizontal)
    /// ```
    public struct Flip: ImageProcessor, Hashable {
        public enum Axis: String, Sendable, Hashable, CaseIterable {
            /// Left and right swap.
            case horizontal
            /// Top and bottom swap.
            case vertical
        }

        package var axis: Axis

        public init(_ axis: Axis) {
            self.axis = axis
        }

        public var identifier: String { "flip(\(axis.rawValue))" }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            try image.mappingFrames { $0.oriented(axis == .horizontal ? .upMirrored : .downMirrored) }
        }
    }
}

extension ImageProcessor where Self == ImageProcessors.Rotate {
    /// Turns clockwise by quarter turns: see ``ImageProcessors/Rotate``.
    ///
    /// ```swift
    /// request.processors = [.rotate(quarterTurns: 1)]
    /// ```
    public static func rotate(quarterTurns: Int) -> Self {
        ImageProcessors.Rotate(quarterTurns: quarterTurns)
    }
}

extension ImageProcessor where Self == ImageProcessors.Flip {
    /// Mirrors: see ``ImageProcessors/Flip``.
    ///
    /// ```swift
    /// request.processors = [.flip(.horizontal)]
    /// ```
    public static func flip(_ axis: ImageProcessors.Flip.Axis) -> Self {
        ImageProcessors.Flip(axis)
    }
}
