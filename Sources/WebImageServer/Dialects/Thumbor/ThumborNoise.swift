import WebImage

/// thumbor's `noise(amount[,seed])`: each pixel's R, G and B moved by the same random whole
/// number, uniform over the `amount` values from `−⌊amount/2⌋` (thumbor's
/// `random() % amount − amount / 2`), clamped to 0–255; alpha left alone, grey kept grey.
///
/// thumbor draws from the C library's `random()`, seeded only when the URL gives a seed, so
/// its noise differs from one request to the next. Here it is deterministic: the generator is
/// seeded from ``seed`` (derived from the recipe: the source, the amount and the URL's seed) and
/// the frame's index, so the cached variant, a CDN's copy and a fresh render are the same bytes.
/// The pixels are not thumbor's (its generator is glibc's), but their statistics are.
struct ThumborNoise: ImageProcessor, Hashable {
    var amount: Int
    var seed: UInt64

    var identifier: String { "thumbor-noise(\(amount),\(seed))" }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        guard amount > 1 else { return image }
        var frame: UInt64 = 0
        return try image.mappingFrames { bitmap in
            defer { frame += 1 }
            return try apply(bitmap, generator: Generator(seed: seed &+ frame &* 0x9E37_79B9_7F4A_7C15))
        }
    }

    private func apply(_ bitmap: Bitmap, generator: Generator) throws -> Bitmap {
        var generator = generator
        let format = bitmap.pixelFormat, step = format.bytesPerPixel
        let colours = format.channels == .gray || format.channels == .grayAlpha ? 1 : 3
        let low = amount / 2
        return try Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: format, bytesPerRow: bitmap.bytesPerRow, scale: bitmap.scale) { buffer in
            let out = buffer.bindMemory(to: UInt8.self)
            _ = out.initialize(from: bitmap.pixels)
            for row in 0..<bitmap.height {
                var offset = row * bitmap.bytesPerRow
                for _ in 0..<bitmap.width {
                    let delta = Int(generator.next(below: UInt64(amount))) - low
                    // Premultiplied colour may not exceed its alpha.
                    let ceiling = format.alpha == .premultiplied ? Int(out[offset + step - 1]) : 255
                    for channel in 0..<colours {
                        out[offset + channel] = UInt8(min(ceiling, max(0, Int(out[offset + channel]) + delta)))
                    }
                    offset += step
                }
            }
        }
    }

    /// SplitMix64: small, fast, and the same sequence on every platform and run (the standard
    /// library's generator is neither seedable nor stable).
    struct Generator {
        var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        /// Uniform in `0..<bound` (the modulo bias of a 64-bit draw over at most 100 values is
        /// below 10⁻¹⁷).
        mutating func next(below bound: UInt64) -> UInt64 { next() % bound }
    }

    /// A stable seed from the recipe's words (FNV-1a: `Hasher` is seeded per process).
    static func seed(_ parts: [String]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in parts.joined(separator: "\u{1F}").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
