import Foundation

extension BlurHash {
    /// Decodes to an rgba8 (opaque) bitmap of the given size; `punch` scales the AC contrast
    /// (1 = as encoded).
    ///
    /// Each pixel sums the components' cosines at its position in linear light, then converts
    /// to sRGB, as Wolt's decoders do. The cosines are tabulated once per axis and the sum is
    /// separable, so a pixel costs `x` multiplications a channel. A BlurHash has no aspect
    /// ratio: pass the size of the image it stands for, or a small size of the same shape that
    /// a view scales up (the picture is smooth at any size).
    ///
    /// ```swift
    /// let hash = try BlurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj")
    /// let placeholder = try hash.bitmap(width: 32, height: 20, punch: 1.2)
    /// ```
    ///
    /// - Throws: ``ImageError/tooLarge(_:)`` for a side over 1024 (decoding bigger only costs
    ///   time and memory: scale the bitmap up instead), ``ImageError/invalidBitmap(_:)`` for a
    ///   side under 1, ``ImageError/corruptData(_:)`` for a `punch` that is negative or not
    ///   finite.
    public func bitmap(width: Int, height: Int, punch: Double = 1) throws(ImageError) -> Bitmap {
        guard width > 0, height > 0 else {
            throw ImageError.invalidBitmap("a BlurHash decodes to 1 to \(ImagePlaceholder.maximumSide) pixels a side, not \(width)×\(height)")
        }
        guard width <= ImagePlaceholder.maximumSide, height <= ImagePlaceholder.maximumSide else {
            throw ImageError.tooLarge("a BlurHash decodes to at most \(ImagePlaceholder.maximumSide) pixels a side, not \(width)×\(height)")
        }
        guard punch.isFinite, punch >= 0 else {
            throw ImageError.corruptData("a BlurHash's punch is a finite number from 0, not \(punch)")
        }
        let digits = try Self.digits(of: string)
        return Self.render(colours: Self.colours(digits, punch: punch), components: components, width: width, height: height)
    }

    /// The components in linear light, `[i + j * x]`: the DC from its sRGB bytes, the ACs from
    /// their levels, each `sign(v) · v²` of `(level − 9) / 9`, times the hash's maximum and `punch`.
    static func colours(_ digits: [Int], punch: Double) -> [SIMD3<Double>] {
        let dc = value(digits, 2, 4)
        var colours = [SIMD3(linear(dc >> 16), linear((dc >> 8) & 255), linear(dc & 255))]
        let maximum = Double(digits[1] + 1) / 166 * punch
        for start in stride(from: 6, to: digits.count, by: 2) {
            let ac = value(digits, start, 2)
            let levels = SIMD3(Double(ac / (19 * 19)), Double((ac / 19) % 19), Double(ac % 19))
            let unit = (levels - 9) / 9
            colours.append(SIMD3(signedSquare(unit.x), signedSquare(unit.y), signedSquare(unit.z)) * maximum)
        }
        return colours
    }

    /// `v²` with the sign of `v`: how a component's level maps back to its value.
    private static func signedSquare(_ v: Double) -> Double { v * abs(v) }

    private static func render(colours: [SIMD3<Double>], components: Components, width: Int, height: Int) -> Bitmap {
        let (nx, ny) = (components.x, components.y)
        let fx = PlaceholderCoding.cosines(frequencies: nx, size: width, offset: 0)
        let fy = PlaceholderCoding.cosines(frequencies: ny, size: height, offset: 0)
        // `row[i]`: the components of frequency i along x, summed over j with this row's cosines.
        var row = [SIMD3<Double>](repeating: .zero, count: nx)
        // Force-try: 1…1024 a side is a valid size.
        return try! Bitmap(width: width, height: height, pixelFormat: .rgba8) { output in
            let out = output.bindMemory(to: UInt8.self)
            for y in 0..<height {
                for i in 0..<nx {
                    var sum = SIMD3<Double>.zero
                    for j in 0..<ny { sum += colours[i + j * nx] * fy[j * height + y] }
                    row[i] = sum
                }
                for x in 0..<width {
                    var pixel = SIMD3<Double>.zero
                    for i in 0..<nx { pixel += row[i] * fx[i * width + x] }
                    let offset = (y * width + x) * 4
                    out[offset] = sRGB(pixel.x)
                    out[offset + 1] = sRGB(pixel.y)
                    out[offset + 2] = sRGB(pixel.z)
                    out[offset + 3] = 255
                }
            }
        }
    }

    // MARK: sRGB

    /// sRGB's 256 levels in linear light (IEC 61966-2-1's curve, as Wolt's code writes it).
    private static let linearLevels: [Double] = (0..<256).map { level in
        let value = Double(level) / 255
        return value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// An sRGB byte in linear light.
    static func linear(_ level: Int) -> Double { linearLevels[level & 255] }

    /// A linear value as an sRGB byte: clamped to 0…1 (not-a-number to 0) and rounded half up,
    /// as Wolt's code does.
    static func sRGB(_ value: Double) -> UInt8 {
        let v = value > 0 ? min(value, 1) : 0
        let level = v <= 0.003_130_8 ? v * 12.92 * 255 + 0.5 : (1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5
        return UInt8(min(max(Int(level), 0), 255))
    }
}
