extension ImageDecodingOptions {
    /// Checks an animation's work against ``maximumFrameCount`` and ``maximumAnimationPixels``
    /// before its frames are composed: `frameCount` frames, each composed on a canvas of
    /// `canvasWidth` × `canvasHeight`. Decoders call it once when the file states its frame
    /// count, or before each frame with the count so far (the frame about to be composed
    /// included) when it does not.
    ///
    /// - Parameter format: the format's name, for the error message.
    /// - Throws: ``ImageError/tooLarge(_:)`` past either limit.
    ///
    /// ```swift
    /// try options.checkAnimationWork(frameCount: 4000, canvasWidth: 4096, canvasHeight: 4096, format: "WebP")
    /// // throws: 4000 frames of a 4096×4096 canvas compose more than 536870912 pixels
    /// ```
    public func checkAnimationWork(frameCount: Int, canvasWidth: Int, canvasHeight: Int, format: String) throws {
        guard frameCount <= maximumFrameCount else {
            throw ImageError.tooLarge("\(format): \(frameCount) frames exceed the limit of \(maximumFrameCount)")
        }
        let (canvas, overflow1) = canvasWidth.multipliedReportingOverflow(by: canvasHeight)
        let (work, overflow2) = canvas.multipliedReportingOverflow(by: frameCount)
        guard !overflow1, !overflow2, work <= maximumAnimationPixels else {
            throw ImageError.tooLarge(
                "\(format): \(frameCount) frames of a \(canvasWidth)×\(canvasHeight) canvas compose more than \(maximumAnimationPixels) pixels")
        }
    }
}
