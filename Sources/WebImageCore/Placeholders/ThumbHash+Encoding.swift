extension ThumbHash {
    /// Encodes any bitmap of any pixel format; reduces it to at most 100 px a side first (a box
    /// average to straight-alpha RGBA: transparent pixels add no colour, grey is spread to R, G
    /// and B, premultiplied colour is divided back by alpha).
    ///
    /// After the reduction, each of at most 42 terms is one pass over at most 10,000 pixels, with
    /// the cosines tabulated once per axis (a fraction of a millisecond), summed in the
    /// reference's order so that the bytes are the reference's. The bitmap's orientation is taken
    /// as it is; decoders have applied the EXIF orientation already.
    ///
    /// ```swift
    /// let hash = ThumbHash(encoding: photo)
    /// print(hash.base64)
    /// ```
    public init(encoding bitmap: Bitmap) {
        self.init(validated: Self.encode(bitmap.placeholderReduction()))
    }

    /// The hash of a tightly packed rgba8 bitmap of at most 100 px a side, as the reference's
    /// `rgbaToThumbHash` computes it.
    static func encode(_ image: Bitmap) -> [UInt8] {
        let (width, height) = (image.width, image.height)
        let planes = Planes(image)
        // Fewer luminance terms when alpha takes part of the space; along each axis in
        // proportion to the image's sides (rounded half up, as JavaScript's `Math.round`).
        let limit = planes.hasAlpha ? 5.0 : 7.0
        let longer = Double(max(width, height))
        let lx = max(1, Int((limit * Double(width) / longer).rounded()))
        let ly = max(1, Int((limit * Double(height) / longer).rounded()))
        let fx = PlaceholderCoding.cosines(frequencies: 7, size: width, offset: 0.5)
        let fy = PlaceholderCoding.cosines(frequencies: 7, size: height, offset: 0.5)
        func channel(_ plane: [Double], _ nx: Int, _ ny: Int) -> Channel {
            Channel(encoding: plane, width: width, height: height, nx: nx, ny: ny, fx: fx, fy: fy)
        }
        let luminance = channel(planes.l, max(3, lx), max(3, ly))
        let p = channel(planes.p, 3, 3), q = channel(planes.q, 3, 3)
        let alpha = planes.hasAlpha ? channel(planes.a, 5, 5) : nil
        return pack(luminance: luminance, p: p, q: q, alpha: alpha,
                    luminanceCount: width > height ? ly : lx, isLandscape: width > height)
    }

    /// The bytes: the header's fields quantised (rounded half up, then clamped to their bits),
    /// then every AC term normalised by its channel's scale to 0…1 and stored in four bits.
    private static func pack(luminance: Channel, p: Channel, q: Channel, alpha: Channel?, luminanceCount: Int, isLandscape: Bool) -> [UInt8] {
        func field(_ value: Double, _ maximum: UInt32) -> UInt32 {
            UInt32(min(max(value.rounded(), 0), Double(maximum)))
        }
        let alphaFlag: UInt32 = alpha == nil ? 0 : 1 << 23
        let landscapeFlag: UInt32 = isLandscape ? 1 << 15 : 0
        let colourDC = field(31.5 + 31.5 * p.dc, 63) << 6 | field(31.5 + 31.5 * q.dc, 63) << 12
        let header24 = field(63 * luminance.dc, 63) | colourDC | field(31 * luminance.scale, 31) << 18 | alphaFlag
        let colourScales = field(63 * p.scale, 63) << 3 | field(63 * q.scale, 63) << 9
        let header16 = UInt32(luminanceCount) | colourScales | landscapeFlag
        var bytes: [UInt8] = [header24, header24 >> 8, header24 >> 16, header16, header16 >> 8].map { UInt8(truncatingIfNeeded: $0) }
        if let alpha {
            bytes.append(UInt8(field(15 * alpha.dc, 15) | field(15 * alpha.scale, 15) << 4))
        }
        let start = bytes.count
        var index = 0
        for channel in [luminance, p, q] + (alpha.map { [$0] } ?? []) {
            for term in channel.ac {
                // A channel without variation keeps its zero terms as they are (the reference
                // normalises only by a positive scale).
                let normalised = channel.scale > 0 ? 0.5 + 0.5 / channel.scale * term : term
                if index & 1 == 0 { bytes.append(0) }
                bytes[start + (index >> 1)] |= UInt8(field(15 * normalised, 15) << ((index & 1) << 2))
                index += 1
            }
        }
        return bytes
    }

    /// The image as four planes of doubles: luminance, yellow–blue, red–green and alpha, each
    /// pixel's colour composited over the image's average colour first (so transparent pixels
    /// add no colour of their own), as the reference converts RGBA to LPQA.
    struct Planes {
        var l: [Double], p: [Double], q: [Double], a: [Double]
        var hasAlpha: Bool

        init(_ image: Bitmap) {
            let count = image.width * image.height
            let pixels = image.pixels
            func colour(_ i: Int) -> SIMD3<Double> {
                SIMD3(Double(pixels[i * 4]), Double(pixels[i * 4 + 1]), Double(pixels[i * 4 + 2]))
            }
            // The alpha-weighted average colour, and the total alpha. (Each product in the
            // reference's order, so the planes are bit for bit the reference's.)
            var average = SIMD3<Double>(repeating: 0)
            var totalAlpha = 0.0
            for i in 0..<count {
                let alpha = Double(pixels[i * 4 + 3]) / 255
                let weight: Double = alpha / 255
                average += weight * colour(i)
                totalAlpha += alpha
            }
            if totalAlpha > 0 { average /= totalAlpha }
            hasAlpha = totalAlpha < Double(count)
            l = [Double](repeating: 0, count: count)
            p = l
            q = l
            a = l
            for i in 0..<count {
                let alpha = Double(pixels[i * 4 + 3]) / 255
                let weight: Double = alpha / 255
                let background: SIMD3<Double> = average * (1 - alpha)
                let rgb: SIMD3<Double> = background + weight * colour(i)
                l[i] = (rgb.x + rgb.y + rgb.z) / 3
                p[i] = (rgb.x + rgb.y) / 2 - rgb.z
                q[i] = rgb.x - rgb.y
                a[i] = alpha
            }
        }
    }
}
