/// The frames of an animated image (GIF, APNG, animated WebP), each already composed onto the
/// full canvas, so any frame can be shown on its own.
///
/// ```swift
/// let animation = AnimatedImage(frames: [
///     .init(bitmap: bitmap, duration: .milliseconds(100)),
///     .init(bitmap: bitmap.grayscaled(), duration: .milliseconds(100)),
/// ], loopCount: 0)
/// print(animation.totalDuration)   // 0.2 seconds
/// ```
public struct AnimatedImage: Sendable, Hashable {
    /// One composed frame and how long it stays on screen.
    public struct Frame: Sendable, Hashable {
        public var bitmap: Bitmap
        /// The delay the file stores, unchanged (GIF's hundredths of a second, APNG's fraction,
        /// WebP's milliseconds).
        public var duration: Duration

        public init(bitmap: Bitmap, duration: Duration) {
            self.bitmap = bitmap
            self.duration = duration
        }

        /// How long to show the frame: ``duration``, except that delays of 10 ms or less become
        /// 100 ms, as every major browser does, because many GIFs store 0 or 1 hundredth
        /// meaning "as fast as sensible".
        public var displayDuration: Duration {
            duration <= .milliseconds(10) ? .milliseconds(100) : duration
        }
    }

    /// The composed frames in display order; never empty.
    public var frames: [Frame]
    /// How many times the animation plays; 0 means forever.
    public var loopCount: Int

    /// - Precondition: `frames` is not empty.
    public init(frames: [Frame], loopCount: Int) {
        precondition(!frames.isEmpty, "an animation has at least one frame")
        self.frames = frames
        self.loopCount = loopCount
    }

    /// The canvas every frame is composed onto.
    public var width: Int { frames[0].bitmap.width }
    public var height: Int { frames[0].bitmap.height }

    /// The sum of the frame durations: one play of the animation.
    public var totalDuration: Duration {
        frames.reduce(.zero) { $0 + $1.duration }
    }

    /// Bytes of pixel storage over all frames.
    package var cost: Int {
        frames.reduce(0) { $0 + $1.bitmap.cost }
    }
}
