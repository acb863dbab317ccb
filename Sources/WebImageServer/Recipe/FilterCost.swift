import WebImage

/// The cost check every expensive filter makes before it runs: its taps (kernel items) a pixel
/// × the pixels of every frame it will touch. A 15 × 15 `convolution()` on a 4096 px output took
/// 13 s of one core (hostile-input finding 5); past ``budget`` the request is refused with a
/// typed error before any of that work, and what the check lets through is still bounded by the
/// request's work budget (``WorkDeadline``), which the filters check as they go.
enum FilterCost {
    /// Multiply-adds one filter may do on one image, frames included: 2^31, about two seconds
    /// of one core in the release build's convolution.
    static let budget = 1 << 31

    /// Throws `ImageError/tooLarge(_:)` when `tapsPerPixel` × the pixels of `image`'s frames
    /// passes ``budget``; `name` names the filter in the message.
    static func check(_ image: ImageContainer, tapsPerPixel: Int, name: String) throws {
        let frames = image.animation?.frames.count ?? 1
        let (pixels, overflow1) = (image.image.width * image.image.height).multipliedReportingOverflow(by: frames)
        let (taps, overflow2) = pixels.multipliedReportingOverflow(by: tapsPerPixel)
        guard !overflow1, !overflow2, taps <= budget else {
            throw ImageError.tooLarge(
                "\(name) on \(frames) frame(s) of \(image.image.width)×\(image.image.height) would take \(overflow1 || overflow2 ? "too many" : "\(taps)") multiply-adds, more than \(budget)")
        }
    }
}
