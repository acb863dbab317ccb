import Foundation

/// The frames of an animation, decoded one at a time, in order: what ``AnimatedImagePlayer``
/// plays from, so that an animation of any length plays without all its frames in memory.
///
/// A source carries the state composing needs (the canvas, what each frame's disposal leaves
/// behind) from one frame to the next, so every frame it returns is complete, composed onto
/// the full canvas exactly as the decoder's ``AnimatedImage/frames`` are. When a play of the
/// animation ends, ``nextFrame()`` returns `nil`; ``reset()`` starts the next play.
///
/// A source is owned by one thread at a time (it is not `Sendable`): the player hands it to
/// its background executor and touches it from one decoding job at a time. Its own working
/// memory (the canvas, the file's bytes) is not counted in the player's memory limit.
///
/// ```swift
/// let source = try CoderRegistry.system().makeAnimationFrameSource(for: bytes)!
/// while let frame = try source.nextFrame() {
///     show(frame.bitmap)   // for frame.displayDuration
/// }
/// try source.reset()   // the next play starts again from the first frame
/// ```
public protocol AnimationFrameSource: AnyObject {
    /// The size of every frame this source returns.
    var canvasWidth: Int { get }
    var canvasHeight: Int { get }
    /// The frames in one play, when the file states them; `nil` when only decoding tells.
    var frameCount: Int? { get }
    /// How many times the animation plays; 0 means forever (as ``AnimatedImage/loopCount``).
    var loopCount: Int { get }
    /// The EXIF orientation the file stores, not applied to the frames (as
    /// ``ImageContainer/orientation``); ``CoderRegistry/makeAnimationFrameSource(for:options:)``
    /// applies it.
    var orientation: ImageOrientation { get }

    /// The next composed frame of this play, or `nil` once the play is over.
    ///
    /// - Throws: what the decoder's ``ImageDecoder/decode(_:options:)`` would throw for the
    ///   frame: ``ImageError/tooLarge(_:)`` past a limit, ``ImageError/corruptData(_:)``.
    func nextFrame() throws -> AnimatedImage.Frame?

    /// Starts over: the next ``nextFrame()`` returns the first frame again.
    func reset() throws
}

extension AnimationFrameSource {
    public var orientation: ImageOrientation { .up }
}

extension AnimatedImage {
    /// A source over these already decoded frames, for playing an animation that is in memory
    /// anyway (a memory-cache hit) through the same ``AnimatedImagePlayer``.
    ///
    /// ```swift
    /// let animation = try registry.decode(bytes).animation!
    /// let player = AnimatedImagePlayer(source: animation.makeFrameSource())
    /// ```
    package func makeFrameSource() -> any AnimationFrameSource {
        DecodedFrameSource(animation: self)
    }
}

/// Plays the frames of an ``AnimatedImage``; the bitmaps are shared, not copied.
private final class DecodedFrameSource: AnimationFrameSource {
    let animation: AnimatedImage
    private var next = 0

    init(animation: AnimatedImage) {
        self.animation = animation
    }

    var canvasWidth: Int { animation.width }
    var canvasHeight: Int { animation.height }
    var frameCount: Int? { animation.frames.count }
    var loopCount: Int { animation.loopCount }

    func nextFrame() -> AnimatedImage.Frame? {
        guard next < animation.frames.count else { return nil }
        defer { next += 1 }
        return animation.frames[next]
    }

    func reset() {
        next = 0
    }
}

/// A decoder's source with what ``CoderRegistry/finish(_:options:sourceSize:)`` does to a full
/// decode applied to each frame: the orientation and the exact thumbnail size, so that a
/// played frame equals the same frame of the registry's decode.
final class FinishingFrameSource: AnimationFrameSource {
    private let base: any AnimationFrameSource
    private let options: ImageDecodingOptions
    let canvasWidth: Int
    let canvasHeight: Int

    init(_ base: any AnimationFrameSource, options: ImageDecodingOptions) {
        self.base = base
        self.options = options
        let orientation = options.appliesOrientation ? base.orientation : .up
        var size = orientation.swapsDimensions
            ? (width: base.canvasHeight, height: base.canvasWidth) : (width: base.canvasWidth, height: base.canvasHeight)
        if let thumbnail = options.thumbnail {
            size = thumbnail.outputSize(width: size.width, height: size.height)
            if case .size(let boxWidth, let boxHeight, .fill) = thumbnail {
                size = (min(size.width, max(boxWidth, 1)), min(size.height, max(boxHeight, 1)))
            }
        }
        canvasWidth = size.width
        canvasHeight = size.height
    }

    var frameCount: Int? { base.frameCount }
    var loopCount: Int { base.loopCount }

    func nextFrame() throws -> AnimatedImage.Frame? {
        guard var frame = try base.nextFrame() else { return nil }
        let container = ImageContainer(image: frame.bitmap, orientation: base.orientation)
        frame.bitmap = try CoderRegistry.finish(
            container, options: options, sourceSize: (base.canvasWidth, base.canvasHeight)).image
        return frame
    }

    func reset() throws {
        try base.reset()
    }
}
