import Foundation

/// An animated preview of a video instead of its poster: `duration` seconds of it from
/// ``ImageDecodingOptions/videoTime``, one frame every 1 / `framesPerSecond` s, each the frame a
/// player shows at that time. The decode is an animation (``ImageContainer/animation``) that
/// loops forever; encoded as animated WebP, GIF or AVIF, it plays like a short clip.
///
/// Its frames count against ``ImageDecodingOptions/maximumFrameCount`` (with the frames decoded to
/// reach them) and the animation limits, before any is decoded. A clip that runs past the end of
/// the video stops there.
///
/// ```swift
/// var options = ImageDecodingOptions()
/// options.videoTime = 10
/// options.videoClip = VideoClip(duration: 3, framesPerSecond: 10)   // 30 frames, 10 s to 13 s
/// options.thumbnail = .maxPixelSize(320)
/// let clip = try CoderRegistry.system().decode(bytes, options: options)
/// let webp = try CoderRegistry.system().encode(clip, as: .webp)
/// ```
public struct VideoClip: Sendable, Hashable {
    /// How long the clip lasts, in seconds of the video; above 0. Constant, as the initializer
    /// checks it.
    public let duration: TimeInterval
    /// Frames a second; above 0. Constant, as the initializer checks it.
    public let framesPerSecond: Double

    /// - Precondition: both are finite and above 0.
    public init(duration: TimeInterval = 3, framesPerSecond: Double = 10) {
        precondition(duration.isFinite && duration > 0, "a clip lasts more than 0 s")
        precondition(framesPerSecond.isFinite && framesPerSecond > 0, "a clip has more than 0 frames a second")
        self.duration = duration
        self.framesPerSecond = framesPerSecond
    }

    /// How many frames the clip has: one every 1 / ``framesPerSecond`` s over ``duration``, at
    /// least one (3 s at 10 frames a second: 30).
    public var frameCount: Int {
        max(1, Int(min(duration * framesPerSecond, Double(Int32.max)).rounded(.down)))
    }

    /// How long each frame is shown: 1 / ``framesPerSecond`` s, to the millisecond (animated
    /// WebP's unit), and at least 1 ms.
    public var frameDuration: Duration {
        .milliseconds(max(1, Int((1000 / framesPerSecond).rounded())))
    }

    /// The times of the frames, from `start`: those before `end` (the video's length, when known),
    /// the first always.
    package func times(from start: TimeInterval, end: TimeInterval?) -> [TimeInterval] {
        var times: [TimeInterval] = []
        for index in 0..<frameCount {
            let time = start + Double(index) / framesPerSecond
            if index > 0, let end, time >= end { break }
            times.append(time)
        }
        return times
    }

    /// The decode cache's name for the clip: "clip=3@10".
    package var cacheIdentifier: String { "clip=\(duration)@\(framesPerSecond)" }
}
