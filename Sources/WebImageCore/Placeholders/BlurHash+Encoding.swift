extension BlurHash {
    /// Encodes any bitmap; reduces it to at most 100 px a side first (a box average of the sRGB
    /// values to straight-alpha RGBA, as ``ThumbHash/init(encoding:)`` reads it). The components
    /// are then computed in linear light.
    ///
    /// BlurHash has no alpha: as in Wolt's encoders, every pixel's colour counts whatever its
    /// alpha (the reduction gives fully transparent pixels black). Composite an image with
    /// transparency over its background first when the placeholder should show that.
    ///
    /// ```swift
    /// let hash = try BlurHash(encoding: photo, components: .init(x: 4, y: 3))
    /// print(hash.string)
    /// ```
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` when a component count is outside 1…9.
    public init(encoding bitmap: Bitmap, components: Components = .init(x: 4, y: 3)) throws(ImageError) {
        guard (1...9).contains(components.x), (1...9).contains(components.y) else {
            throw ImageError.corruptData("BlurHash components are 1 to 9 along each axis, not \(components.x) × \(components.y)")
        }
        self.init(validated: Self.encode(bitmap.placeholderReduction(), components: components))
    }

    /// The hash of a tightly packed rgba8 bitmap, as Wolt's `encode` computes it.
    static func encode(_ image: Bitmap, components: Components) -> String {
        let factors = Self.factors(image, components: components)
        let ac = factors.dropFirst()
        let largest = ac.reduce(0.0) { max($0, abs($1.x), abs($1.y), abs($1.z)) }
        // The maximum is stored in one digit, rounded up from half a level: every AC divided by
        // it stays within −1…1.
        let quantisedMaximum = Int(max(0, min(82, (largest * 166 - 0.5).rounded(.down))))
        let maximum = Double(quantisedMaximum + 1) / 166
        var out: [UInt8] = []
        out.reserveCapacity(4 + 2 * factors.count)
        PlaceholderCoding.appendBase83((components.x - 1) + (components.y - 1) * 9, length: 1, to: &out)
        PlaceholderCoding.appendBase83(quantisedMaximum, length: 1, to: &out)
        let dc = factors[0]
        let dcValue = Int(sRGB(dc.x)) << 16 | Int(sRGB(dc.y)) << 8 | Int(sRGB(dc.z))
        PlaceholderCoding.appendBase83(dcValue, length: 4, to: &out)
        for factor in ac {
            let r = level(factor.x / maximum), g = level(factor.y / maximum), b = level(factor.z / maximum)
            PlaceholderCoding.appendBase83(r * 19 * 19 + g * 19 + b, length: 2, to: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A component divided by the maximum as one of 19 levels: `sign(v) · √|v|`, from −1…1 to
    /// 0…18, rounded half up.
    private static func level(_ value: Double) -> Int {
        let root = value < 0 ? -(-value).squareRoot() : value.squareRoot()
        return Int(max(0, min(18, (root * 9 + 9.5).rounded(.down))))
    }

    /// The `x · y` components `[i + j * x]` of the image in linear light: each the mean of the
    /// pixels times `cos(π i px / width) · cos(π j py / height)`, doubled for every AC.
    /// Separable: for each `j` the columns are summed against the row cosines once, and each
    /// `i` is then a dot product of `width` sums.
    static func factors(_ image: Bitmap, components: Components) -> [SIMD3<Double>] {
        let (width, height) = (image.width, image.height)
        let (nx, ny) = (components.x, components.y)
        let fx = PlaceholderCoding.cosines(frequencies: nx, size: width, offset: 0)
        let fy = PlaceholderCoding.cosines(frequencies: ny, size: height, offset: 0)
        let pixels = image.pixels
        var linear = [SIMD3<Double>](repeating: .zero, count: width * height)
        for i in 0..<linear.count {
            linear[i] = SIMD3(Self.linear(Int(pixels[i * 4])), Self.linear(Int(pixels[i * 4 + 1])), Self.linear(Int(pixels[i * 4 + 2])))
        }
        var factors = [SIMD3<Double>](repeating: .zero, count: nx * ny)
        var columns = [SIMD3<Double>](repeating: .zero, count: width)
        let count = Double(width * height)
        for j in 0..<ny {
            for x in 0..<width { columns[x] = .zero }
            for y in 0..<height {
                let weight = fy[j * height + y]
                for x in 0..<width { columns[x] += linear[y * width + x] * weight }
            }
            for i in 0..<nx {
                var sum = SIMD3<Double>.zero
                for x in 0..<width { sum += columns[x] * fx[i * width + x] }
                factors[i + j * nx] = sum * ((i == 0 && j == 0 ? 1 : 2) / count)
            }
        }
        return factors
    }
}
