/// Samples of more than 8 bits (10- and 12-bit AVIF and HEIC) reduced to the 8 bits of a
/// ``Bitmap``, each rounded to the nearest 8-bit value: `(v × 255 + max / 2) / max`, so that
/// the full-scale value stays full scale and mid-grey stays mid-grey (a plain shift would
/// darken every sample by up to one step).
enum HighBitDepth {
    /// Reduces `count` samples of `bits` bits (stored in 16-bit words, one per sample) from
    /// `source` into `destination`. Samples above the range (a corrupt stream) are clamped.
    static func reduce(
        _ source: UnsafePointer<UInt16>, to destination: UnsafeMutablePointer<UInt8>, count: Int, bits: Int
    ) {
        let maximum = UInt32((1 << bits) - 1)
        let half = maximum / 2
        for index in 0..<count {
            let value = min(UInt32(source[index]), maximum)
            destination[index] = UInt8((value * 255 + half) / maximum)
        }
    }
}
