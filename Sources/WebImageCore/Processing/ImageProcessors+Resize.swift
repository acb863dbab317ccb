extension ImageProcessors {
    /// Scales an image to a width, a height, or into a box, with a Lanczos-3 filter
    /// (``Bitmap/resized(width:height:)``).
    ///
    /// - Only a width (or only a height): the other side follows the aspect ratio.
    /// - Both, ``ContentMode/fit``: the largest size that fits inside the box.
    /// - Both, ``ContentMode/fill``: the smallest size that covers the box, centre-cropped to
    ///   it; the crop is taken from the source first, so no pixel is filtered twice.
    /// - Both, ``ContentMode/stretch``: exactly the box, each side scaled on its own.
    ///
    /// Unless `upscale` is true, an image is never made larger: a side already within the
    /// requested size is left alone (a `fill` of a small image still crops it to the box).
    /// A width or height of 0 (or `nil`) leaves that side unconstrained, and with neither the
    /// image passes through unchanged.
    ///
    /// ```swift
    /// let thumbnail = ImageProcessors.Resize(width: 320)                          // 320 wide
    /// let cover = ImageProcessors.Resize(width: 200, height: 200, contentMode: .fill)
    /// print(cover.identifier)   // resize(w=200,h=200,fill,up=false)
    /// ```
    public struct Resize: ImageProcessor, Hashable {
        package var width: Int
        package var height: Int
        package var contentMode: ContentMode
        package var upscale: Bool

        public init(width: Int? = nil, height: Int? = nil, contentMode: ContentMode = .fit, upscale: Bool = false) {
            self.width = max(width ?? 0, 0)
            self.height = max(height ?? 0, 0)
            self.contentMode = contentMode
            self.upscale = upscale
        }

        /// The content mode that applies: with a side left free, every mode means "scale to the
        /// other side", spelled `fit` so that equal results have equal identifiers.
        private var effectiveContentMode: ContentMode {
            width > 0 && height > 0 ? contentMode : .fit
        }

        public var identifier: String {
            "resize(w=\(max(width, 0)),h=\(max(height, 0)),\(effectiveContentMode.rawValue),up=\(upscale))"
        }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            try image.mappingFrames(resize)
        }

        /// What to do to a `width` × `height` image: the centred region of the source to
        /// keep (all of it unless filling) and the size to scale that region to.
        func plan(width sourceWidth: Int, height sourceHeight: Int) -> (crop: (x: Int, y: Int, width: Int, height: Int), size: (width: Int, height: Int)) {
            let full = (x: 0, y: 0, width: sourceWidth, height: sourceHeight)
            let sx = Double(width) / Double(sourceWidth), sy = Double(height) / Double(sourceHeight)
            func scaled(_ scale: Double) -> (width: Int, height: Int) {
                (max(1, Int((Double(sourceWidth) * scale).rounded())), max(1, Int((Double(sourceHeight) * scale).rounded())))
            }
            func capped(_ scale: Double) -> Double { upscale ? scale : min(scale, 1) }
            switch (width > 0, height > 0) {
            case (false, false):
                return (full, (sourceWidth, sourceHeight))
            case (true, false):
                return (full, scaled(capped(sx)))
            case (false, true):
                return (full, scaled(capped(sy)))
            case (true, true):
                switch effectiveContentMode {
                case .fit:
                    return (full, scaled(capped(min(sx, sy))))
                case .stretch:
                    return (full, upscale ? (width, height) : (min(width, sourceWidth), min(height, sourceHeight)))
                case .fill:
                    let scale = capped(max(sx, sy))
                    // The output: the box, or less where the capped scale leaves a side short.
                    let output = (width: min(width, max(1, Int((Double(sourceWidth) * scale).rounded()))),
                                  height: min(height, max(1, Int((Double(sourceHeight) * scale).rounded()))))
                    // The source region that scales to it, centred.
                    let cropWidth = min(sourceWidth, max(1, Int((Double(output.width) / scale).rounded())))
                    let cropHeight = min(sourceHeight, max(1, Int((Double(output.height) / scale).rounded())))
                    return (((sourceWidth - cropWidth) / 2, (sourceHeight - cropHeight) / 2, cropWidth, cropHeight), output)
                }
            }
        }

        private func resize(_ bitmap: Bitmap) throws -> Bitmap {
            let (crop, size) = plan(width: bitmap.width, height: bitmap.height)
            return try bitmap.cropped(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
                .resized(width: size.width, height: size.height)
        }
    }
}

extension ImageProcessor where Self == ImageProcessors.Resize {
    /// Scales to a width, a height, or into a box: see ``ImageProcessors/Resize``.
    ///
    /// ```swift
    /// request.processors = [.resize(width: 256)]
    /// ```
    public static func resize(width: Int? = nil, height: Int? = nil, contentMode: ContentMode = .fit, upscale: Bool = false) -> Self {
        ImageProcessors.Resize(width: width, height: height, contentMode: contentMode, upscale: upscale)
    }
}
