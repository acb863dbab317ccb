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
    package func checkAnimationWork(frameCount: Int, canvasWidth: Int, canvasHeight: Int, format: String) throws {
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

    /// The size each decoded frame of a `canvasWidth` × `canvasHeight` animation is kept at: the
    /// ``thumbnail``'s output size, else the canvas's. ``maximumAnimationBytes`` bounds the frames
    /// at this size, in every decoder: an animation asked for as a thumbnail keeps small frames.
    package func keptFrameSize(canvasWidth: Int, canvasHeight: Int) -> (width: Int, height: Int) {
        thumbnail?.outputSize(width: canvasWidth, height: canvasHeight) ?? (canvasWidth, canvasHeight)
    }

    /// Checks `frameCount` decoded frames kept at `kept` (``keptFrameSize(canvasWidth:canvasHeight:)``)
    /// against ``maximumAnimationBytes``, before they are kept. `orMore` says the count is the
    /// frames so far of a file that states none (GIF).
    ///
    /// - Throws: ``ImageError/tooLarge(_:)`` past the limit.
    package func checkKeptAnimationBytes(frameCount: Int, kept: (width: Int, height: Int), format: String, orMore: Bool = false) throws {
        let (frameBytes, overflow1) = (kept.width * 4).multipliedReportingOverflow(by: kept.height)
        let (total, overflow2) = frameBytes.multipliedReportingOverflow(by: frameCount)
        guard !overflow1, !overflow2, total <= maximumAnimationBytes else {
            throw ImageError.tooLarge(
                "\(format): \(orMore ? "more than " : "")\(orMore ? frameCount - 1 : frameCount) frames of \(kept.width)×\(kept.height) exceed the limit of \(maximumAnimationBytes) bytes of decoded frames")
        }
    }
}
