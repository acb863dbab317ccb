import DequeModule
import Foundation
import Synchronization

/// Plays an animation (GIF, APNG, animated WebP) from frames decoded ahead of time on a
/// background executor into a buffer bounded by a memory limit, so that an animation of any
/// length plays in bounded memory: YYAnimatedImageView's design, without a toolkit.
///
/// The display drives the player with its own frame clock (GTK's tick callback, a display
/// link): on every tick it calls ``advance(to:)`` with the tick's time and shows the frame it
/// returns, if any. Frames then change on the display's refresh, and no timer of the player's
/// own drifts against it. Meanwhile the player decodes the following frames on its
/// ``BlockingExecutor``, never on the caller's thread or the cooperative pool, for as long as
/// they fit in ``memoryLimit``.
///
/// - **Durations** are the frames' ``AnimatedImage/Frame/displayDuration``: what browsers
///   show, a stored delay of 10 ms or less playing as 100 ms. A frame is due when the previous
///   one has been shown for its duration; a display that ticks late keeps the schedule when it
///   is late by less than the new frame's duration, and starts the schedule again from the
///   late tick otherwise, so a stalled display resumes at normal speed instead of racing.
/// - **Loops**: the source's ``AnimationFrameSource/loopCount`` plays (0 = forever); after
///   the last, the last frame stays on screen and ``isFinished`` is `true`.
/// - **Memory**: the frames the player holds, the one on screen included, never take more than
///   ``memoryLimit`` bytes, except that the player always keeps the frame on screen and the
///   next one: with a limit below two frames, it holds two.
/// - **Visibility and memory pressure**: ``stop()`` when the view leaves the screen (playback
///   halts and only the frame on screen is kept; ``play(at:)`` resumes from it);
///   ``trimMemory()`` under memory pressure (the frames decoded ahead are dropped and decoded
///   again as playback reaches them; `WebImageGTK`'s views call it on GIO's low-memory warning).
///
/// ```swift
/// let source = try CoderRegistry.system().makeAnimationFrameSource(for: bytes)!
/// let player = AnimatedImagePlayer(source: source)   // 32 MiB of frames at most
/// player.play(at: .now)
/// // On each tick of the display's frame clock:
/// if let frame = player.advance(to: .now) {
///     show(frame.bitmap)
/// }
/// ```
public final class AnimatedImagePlayer: Sendable {
    /// The default ``memoryLimit``: 32 MiB, four 1080p frames.
    package static let defaultMemoryLimit = 32 << 20

    /// The most bytes of decoded frames the player holds (see the type's documentation).
    public let memoryLimit: Int
    /// The size of the frames.
    public let canvasWidth: Int
    public let canvasHeight: Int
    /// How many times the animation plays; 0 means forever.
    public let loopCount: Int

    private let source: SourceBox
    private let executor: BlockingExecutor
    private let state: Mutex<PlayerState>

    /// A player of `source`'s frames.
    ///
    /// - Parameters:
    ///   - source: the frames; the player owns it from now on.
    ///   - memoryLimit: the most bytes of decoded frames to hold.
    ///   - executor: where frames are decoded; by default a one-thread executor shared by
    ///     every player, so that animations never take more than one core from the rest.
    public init(
        source: sending any AnimationFrameSource,
        memoryLimit: Int = 32 << 20,
        executor: BlockingExecutor? = nil
    ) {
        self.memoryLimit = max(0, memoryLimit)
        canvasWidth = source.canvasWidth
        canvasHeight = source.canvasHeight
        loopCount = max(0, source.loopCount)
        self.executor = executor ?? Self.decodingExecutor
        let frameBytes = source.canvasWidth.multipliedReportingOverflow(by: source.canvasHeight * 4)
        self.source = SourceBox(source)
        state = Mutex(PlayerState(frameBytes: frameBytes.overflow ? .max : frameBytes.partialValue))
    }

    /// The executor every player decodes on unless given its own: one thread.
    package static let decodingExecutor = BlockingExecutor(name: "webimage.anim", width: 1)

    // MARK: Playback

    /// Starts or resumes playback at `now`. Decoding ahead starts; the first frame is returned
    /// by the first ``advance(to:)`` after it is decoded. A paused frame keeps the time it had
    /// left. Does nothing once ``isFinished``.
    public func play(at now: ContinuousClock.Instant) {
        let starts = state.withLock { state -> Bool in
            switch state.phase {
            case .playing, .finished:
                return false
            case .stopped(let remaining), .paused(let remaining):
                state.phase = .playing
                if let remaining { state.due = now + remaining }
            }
            return state.claimDecoding(limit: memoryLimit)
        }
        if starts { startDecoding() }
    }

    /// Pauses at `now`: the frame on screen stays, with the time it has left, and the buffer
    /// keeps filling up to the limit so that ``play(at:)`` resumes without a wait.
    public func pause(at now: ContinuousClock.Instant) {
        state.withLock { state in
            guard case .playing = state.phase else { return }
            state.phase = .paused(remaining: state.due.map { max(.zero, $0 - now) })
        }
    }

    /// Stops playback and decoding, keeping only the frame on screen: for a view that is no
    /// longer visible. ``play(at:)`` resumes from that frame, which is shown for its whole
    /// duration again.
    public func stop() {
        state.withLock { state in
            switch state.phase {
            case .playing, .paused:
                state.phase = .stopped(remaining: state.current.map { $0.frame.displayDuration })
                state.dropFramesAhead()
            case .stopped, .finished:
                state.dropFramesAhead()
            }
        }
    }

    /// Drops every frame decoded ahead, keeping the one on screen: for memory pressure.
    /// Playback goes on, and the frames are decoded again as it reaches them.
    public func trimMemory() {
        let starts = state.withLock { state -> Bool in
            state.dropFramesAhead()
            return state.claimDecoding(limit: memoryLimit)
        }
        if starts { startDecoding() }
    }

    /// The frame to show at `now`, when it differs from the one shown before; `nil` when the
    /// frame on screen stays (it is not over yet, the next one is still being decoded, the
    /// player is paused, stopped or finished).
    ///
    /// Call it on every tick of the display's frame clock, with the tick's time. At most one
    /// frame is returned per call: frames are shown late rather than skipped.
    public func advance(to now: ContinuousClock.Instant) -> AnimatedImage.Frame? {
        let (frame, starts) = state.withLock { state -> (AnimatedImage.Frame?, Bool) in
            let frame = state.advance(to: now, loopCount: loopCount)
            return (frame, frame != nil && state.claimDecoding(limit: memoryLimit))
        }
        if starts { startDecoding() }
        return frame
    }

    // MARK: What it shows

    /// The frame on screen: the last one ``advance(to:)`` returned.
    public var currentFrame: AnimatedImage.Frame? {
        state.withLock { $0.current?.frame }
    }

    /// The position of ``currentFrame`` within a play of the animation (0 for the first).
    public var currentFrameIndex: Int? {
        state.withLock { $0.current?.index }
    }

    /// When the frame on screen ends, while playing; `nil` otherwise.
    public var nextFrameDue: ContinuousClock.Instant? {
        state.withLock { state in
            guard case .playing = state.phase else { return nil }
            return state.due
        }
    }

    /// The plays completed so far.
    public var loopsCompleted: Int {
        state.withLock { $0.loopsCompleted }
    }

    /// Whether every play is over; the last frame stays on screen.
    public var isFinished: Bool {
        state.withLock { state in
            if case .finished = state.phase { return true }
            return false
        }
    }

    /// Why decoding stopped, if a frame failed to decode. Playback shows the frames decoded
    /// before it, then stops as if the animation ended.
    public var error: ImageError? {
        state.withLock { $0.error }
    }

    /// Bytes of decoded frames the player holds now, the frame on screen included.
    package var bufferedBytes: Int {
        state.withLock { $0.bufferedBytes }
    }

    /// The most ``bufferedBytes`` has been.
    package var peakBufferedBytes: Int {
        state.withLock { $0.peakBufferedBytes }
    }

    /// Returns once decoding ahead has stopped for now: the buffer is full, every frame still
    /// to play is decoded, decoding failed, or playback is stopped. A binding awaits it to show
    /// the first frame before the view appears; tests, to step through frames without a
    /// clock.
    package func waitUntilBuffered() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard state.isDecoding else { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    // MARK: Decoding ahead

    /// Runs the decoding job; the caller has claimed it (`PlayerState.claimDecoding(limit:)`).
    private func startDecoding() {
        executor.submit { [self] in decodeAhead() }
    }

    /// Decodes frames until the buffer is full or nothing is left to decode, one at a time,
    /// the lock released while a frame decodes.
    private func decodeAhead() {
        while let wanted = state.withLock({ $0.nextDecode(limit: memoryLimit) }) {
            let decoded = Result { try source.decode(index: wanted.index) }
            state.withLock { state in
                state.deliver(decoded, for: wanted, loopCount: loopCount)
            }
        }
    }
}

/// The player's source, touched only by its decoding job.
///
/// `@unchecked Sendable`, and sound: `source`, `yielded` and `ended` are used only inside
/// ``decode(index:)``, called only from ``AnimatedImagePlayer``'s `decodeAhead`, and one such
/// job runs at a time: a job is started only by the caller that set `PlayerState.isDecoding`
/// from `false` to `true` under the player's lock, and the job clears it under the lock after
/// its last use of the source, so every job's uses happen after the previous job's (the
/// lock's release and acquire order them). The player takes the source as `sending`, so no
/// one else holds it.
private final class SourceBox: @unchecked Sendable {
    private let source: any AnimationFrameSource
    /// Frames the source has returned in its current play.
    private var yielded = 0
    /// The source returned `nil`: its play is over until it is reset.
    private var ended = false

    init(_ source: any AnimationFrameSource) {
        self.source = source
    }

    /// The frame at `index` of a play, or `nil` past the last one. Playing on in order costs
    /// one frame; any other position (the next play; a position after a trim dropped the
    /// frames ahead) resets the source and decodes up to it.
    func decode(index: Int) throws -> AnimatedImage.Frame? {
        if index < yielded || ended {
            try source.reset()
            yielded = 0
            ended = false
        }
        while yielded < index {
            guard try source.nextFrame() != nil else {
                throw ImageError.corruptData("the animation ends at frame \(yielded) on a later play, not \(index)")
            }
            yielded += 1
        }
        guard let frame = try source.nextFrame() else {
            ended = true
            return nil
        }
        yielded += 1
        return frame
    }
}
