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
        /// thumbor measures the difference as the Euclidean distance of the RGB values, and of
        /// alpha too when the image has it (0 to 442, or 510); imgproxy, after libvips, as the
        /// largest difference of one colour channel.
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
            var top = bitmap.height, bottom = -1, left = bitmap.width, right = -1
            bitmap.pixels.withUnsafeBufferPointer { input in
                let background = backgroundColour(of: bitmap, input)
                for y in 0..<bitmap.height {
                    for x in 0..<bitmap.width where differs(bitmap.straightPixel(input, x, y), from: background) {
                        top = min(top, y)
                        bottom = max(bottom, y)
                        left = min(left, x)
                        right = max(right, x)
                    }
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

        /// The reference pixel, straight RGBA (alpha 255 for a given colour).
        private func backgroundColour(of bitmap: Bitmap, _ input: UnsafeBufferPointer<UInt8>) -> SIMD4<Int> {
            switch reference {
            case .topLeft: bitmap.straightPixel(input, 0, 0)
            case .bottomRight: bitmap.straightPixel(input, bitmap.width - 1, bitmap.height - 1)
            case .colour(let colour): SIMD4(Int(colour[0]), Int(colour[1]), Int(colour[2]), 255)
            }
        }

        /// Whether `pixel` is no longer border; alpha counts only in thumbor's distance (an
        /// opaque image's is 255 in both).
        private func differs(_ pixel: SIMD4<Int>, from background: SIMD4<Int>) -> Bool {
            let difference = pixel &- background
            let distance = euclidean
                ? Double((difference &* difference).wrappedSum()).squareRoot()
                : Double(max(abs(difference.x), abs(difference.y), abs(difference.z)))
            return distance > tolerance
        }
    }
}
