import WebImage

extension RecipeCanvas {
    /// The blur thumbor's `fill(blur)` gives the image: its blur filter of radius 50, a Gaussian
    /// of σ 50 cut off at ±50 pixels (one σ) and normalised. So cut, its spread is σ · √0.291,
    /// about 27 pixels: the Gaussian of that σ looks the same, and the library blurs at any σ
    /// in time that does not grow with it.
    static let backdropSigma = 27.0

    /// thumbor's `fill(blur)` background: the image (as it is after the rest of the work) blurred
    /// at its own size, then stretched over the whole canvas, whatever its aspect ratio.
    static func backdrop(of bitmap: Bitmap, width: Int, height: Int) throws -> Bitmap {
        try bitmap.blurred(radius: backdropSigma).resized(width: width, height: height)
    }
}
