extension ImageProcessors {
    /// Cuts out a `width` × `height` rectangle where the image draws the eye, instead of its
    /// centre: thumbor's `smart` and imgproxy's `g:sm`, without a face detector.
    ///
    /// The rectangle is centred on the most interesting point, found as libvips' "attention"
    /// strategy finds it (detail, skin tones and saturated colour, scored on a reduced copy and
    /// gathered into a 32 × 32 grid blurred over a tenth of the crop), and kept inside the image;
    /// a side larger than the image keeps that side whole. A focal point, when the caller knows
    /// one, overrides the search (``init(width:height:focus:)``). Animated images are cut where
    /// their first frame is most interesting, every frame alike.
    ///
    /// ```swift
    /// // A square thumbnail of a landscape photo that keeps its subject.
    /// let square = ImageProcessors.SmartCrop(width: 1000, height: 1000)
    /// print(square.identifier)   // smartcrop(w=1000,h=1000)
    /// ```
    public struct SmartCrop: ImageProcessor, Hashable {
        package var width: Int
        package var height: Int
        /// A point to centre on instead of the search's, as fractions of the width and height
        /// (0...1), as `focal(...)` and `fp:x:y` give it.
        package var focus: (x: Double, y: Double)? {
            get { focusX.flatMap { x in focusY.map { (x, $0) } } }
            set { (focusX, focusY) = (newValue?.x, newValue?.y) }
        }

        private var focusX: Double?
        private var focusY: Double?

        /// A `width` × `height` rectangle around the most interesting point, or around `focus`
        /// (fractions of the width and height) when the caller knows one.
        public init(width: Int, height: Int, focus: (x: Double, y: Double)? = nil) {
            self.width = width
            self.height = height
            self.focus = focus
        }

        public var identifier: String {
            if let focus { return "smartcrop(w=\(width),h=\(height),fp=\(focus.x),\(focus.y))" }
            return "smartcrop(w=\(width),h=\(height))"
        }

        public func process(_ image: ImageContainer) throws -> ImageContainer {
            guard width > 0, height > 0 else {
                throw ImageError.invalidBitmap("a smart crop of \(width)×\(height) is empty")
            }
            let window = self.window(in: image.image)
            return try image.mappingFrames { bitmap in
                try bitmap.cropped(x: window.x, y: window.y, width: window.width, height: window.height)
            }
        }

        /// The rectangle this crop cuts from `bitmap`.
        package func window(in bitmap: Bitmap) -> (x: Int, y: Int, width: Int, height: Int) {
            let cropWidth = min(width, bitmap.width), cropHeight = min(height, bitmap.height)
            let center: (x: Int, y: Int)
            if let focus {
                center = (Int((min(1, max(0, focus.x)) * Double(bitmap.width)).rounded()),
                          Int((min(1, max(0, focus.y)) * Double(bitmap.height)).rounded()))
            } else if cropWidth == bitmap.width && cropHeight == bitmap.height {
                center = (bitmap.width / 2, bitmap.height / 2)   // nothing to choose
            } else {
                center = AttentionMap(bitmap, cropWidth: cropWidth, cropHeight: cropHeight).center
            }
            let x = min(max(0, center.x - cropWidth / 2), bitmap.width - cropWidth)
            let y = min(max(0, center.y - cropHeight / 2), bitmap.height - cropHeight)
            return (x, y, cropWidth, cropHeight)
        }
    }
}
