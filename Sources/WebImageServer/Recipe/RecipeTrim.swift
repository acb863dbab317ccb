import WebImage

extension RenderRecipe {
    /// Cuts away a border of one colour before anything else: thumbor's `trim` and imgproxy's
    /// `trim`. The border colour is a corner pixel's (or one given); a pixel belongs to the
    /// image when it differs from it by more than ``tolerance``.
    struct Trim: Sendable, Hashable {
        enum Reference: Sendable, Hashable {
            case topLeft, bottomRight
            case colour([UInt8])
        }

        var reference = Reference.topLeft
        var tolerance = 0.0
        /// thumbor measures the difference as the Euclidean distance of the RGB values (0 to
        /// 442); imgproxy, after libvips, as the largest difference of one channel.
        var euclidean = true
        /// imgproxy's `equal_hor`/`equal_ver`: the same amount cut from both sides.
        var equalHorizontal = false
        var equalVertical = false

        var key: String {
            let colour: String = switch reference {
            case .topLeft: "tl"
            case .bottomRight: "br"
            case .colour(let rgb): rgb.map { String($0) }.joined(separator: ",")
            }
            return "trim=\(colour)@\(ProxyRequest.text(tolerance))\(euclidean ? "e" : "m")\(equalHorizontal ? "h" : "")\(equalVertical ? "v" : "")"
        }

        /// The part of `bitmap` to keep; `nil` when there is no border, or nothing but border
        /// (the image is then kept whole, as both peers do).
        func window(in bitmap: Bitmap) -> Rectangle? {
            guard bitmap.width > 0, bitmap.height > 0 else { return nil }
            let background = backgroundColour(of: bitmap)
            var top = bitmap.height, bottom = -1, left = bitmap.width, right = -1
            for y in 0..<bitmap.height {
                for x in 0..<bitmap.width where differs(rgb(bitmap, x, y), from: background) {
                    top = min(top, y)
                    bottom = max(bottom, y)
                    left = min(left, x)
                    right = max(right, x)
                }
            }
            guard bottom >= 0 else { return nil }
            if equalHorizontal {
                let cut = min(left, bitmap.width - 1 - right)
                (left, right) = (cut, bitmap.width - 1 - cut)
            }
            if equalVertical {
                let cut = min(top, bitmap.height - 1 - bottom)
                (top, bottom) = (cut, bitmap.height - 1 - cut)
            }
            let window = Rectangle(x: left, y: top, width: right - left + 1, height: bottom - top + 1)
            return window == Rectangle(x: 0, y: 0, width: bitmap.width, height: bitmap.height) ? nil : window
        }

        private func backgroundColour(of bitmap: Bitmap) -> [Int] {
            switch reference {
            case .topLeft: rgb(bitmap, 0, 0)
            case .bottomRight: rgb(bitmap, bitmap.width - 1, bitmap.height - 1)
            case .colour(let colour): colour.map(Int.init)
            }
        }

        private func differs(_ pixel: [Int], from background: [Int]) -> Bool {
            let differences = zip(pixel, background).map { Double(abs($0 - $1)) }
            let distance = euclidean ? differences.reduce(0) { $0 + $1 * $1 }.squareRoot() : differences.max() ?? 0
            return distance > tolerance
        }

        /// R, G, B of a pixel (grey repeated).
        private func rgb(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [Int] {
            let offset = y * bitmap.bytesPerRow + x * bitmap.pixelFormat.bytesPerPixel
            let channels = bitmap.pixelFormat.channels == .gray || bitmap.pixelFormat.channels == .grayAlpha ? [0, 0, 0] : [0, 1, 2]
            return channels.map { Int(bitmap.pixels[offset + $0]) }
        }
    }
}
