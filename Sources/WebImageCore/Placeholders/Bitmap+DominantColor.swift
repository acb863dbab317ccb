extension Bitmap {
    /// The most common colour (a coarse histogram of the ≤100 px reduction, the mean of the
    /// fullest bin), ignoring transparent pixels.
    ///
    /// The histogram has 16 levels a channel (4,096 bins of 16 × 16 × 16 sRGB values): coarse
    /// enough that the noise and gradients of a photo's large areas fall into one bin, fine
    /// enough that a sky and a sea stay apart. Each pixel counts by its alpha, so fully
    /// transparent pixels not at all and an anti-aliased edge partly; the answer is the
    /// alpha-weighted mean of the fullest bin's pixels, rounded (the lowest bin wins a tie).
    /// A bitmap with no visible pixel answers black.
    package var dominantColor: RGBColor {
        let image = placeholderReduction()
        var weights = [Int](repeating: 0, count: 4096)
        var sums = [SIMD3<Int>](repeating: .zero, count: 4096)
        let pixels = image.pixels
        for offset in stride(from: 0, to: image.width * image.height * 4, by: 4) {
            let alpha = Int(pixels[offset + 3])
            guard alpha > 0 else { continue }
            let colour = SIMD3(Int(pixels[offset]), Int(pixels[offset + 1]), Int(pixels[offset + 2]))
            let bin = (colour.x >> 4) << 8 | (colour.y >> 4) << 4 | colour.z >> 4
            weights[bin] += alpha
            sums[bin] &+= colour &* alpha
        }
        var fullest = 0
        for bin in 1..<weights.count where weights[bin] > weights[fullest] { fullest = bin }
        let weight = weights[fullest]
        guard weight > 0 else { return RGBColor(red: 0, green: 0, blue: 0) }
        let mean = (sums[fullest] &+ weight / 2) / weight
        return RGBColor(red: UInt8(clamping: mean.x), green: UInt8(clamping: mean.y), blue: UInt8(clamping: mean.z))
    }
}
