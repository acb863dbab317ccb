import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// `AnimatedImagePlayer` on real animations, frame by frame against the full decode, and its
/// rules (loops, pause, stop, trim, the memory limit) on animations made for each case.
///
/// No test sleeps or reads a clock: time is instants the test makes, and each step waits for
/// the player's decoding ahead to settle (`waitUntilBuffered`) before advancing to the moment
/// the frame on screen ends.
@Suite struct AnimatedImagePlayerTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The repository's animations: GIF, animated WebP, APNG, an AVIF sequence.
    static let animations = [
        "Demo/images/chi-animated.gif", "Demo/images/iss634-animated.webp", "Demo/images/apng-delay.png",
        "Tests/Fixtures/hopper-animated-16.webp", "Tests/Fixtures/dispose_bgnd.gif", "Tests/Fixtures/avif-animated.avif",
        "Tests/Fixtures/avif-loop-3.avif",
    ]

    /// The corpus's animations in formats with a frame source (empty without the corpus).
    static let corpusAnimations: [String] = Reference.images
        .filter { $0.decodable && ($0.frames ?? 1) > 1 && ["GIF", "PNG", "WEBP"].contains($0.format ?? "") }
        .map(\.file)

    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: repository.appendingPathComponent(path))
    }

    /// Plays `player` from `start` for `plays` plays of `frameCount` frames (or until it
    /// finishes), calling `visit` with each frame shown, its index and the time it was shown;
    /// returns the indices shown. Frames are not kept, so a long animation plays in the
    /// player's memory alone.
    @discardableResult
    static func play(
        _ player: AnimatedImagePlayer, frames frameCount: Int, plays: Int, from start: ContinuousClock.Instant,
        _ visit: (_ index: Int, _ frame: AnimatedImage.Frame, _ at: ContinuousClock.Instant) -> Void = { _, _, _ in }
    ) async -> [Int] {
        var shown: [Int] = []
        var now = start
        var idleSteps = 0
        player.play(at: now)
        // A step that shows nothing passes the end of a play; two in a row mean the player is
        // stuck (a bug), and the frames shown so far fail the caller's checks.
        while shown.count < frameCount * plays, !player.isFinished, idleSteps < 2 {
            await player.waitUntilBuffered()
            if let due = player.nextFrameDue { now = due }
            guard let frame = player.advance(to: now) else {
                idleSteps += 1
                continue
            }
            idleSteps = 0
            let index = player.currentFrameIndex ?? -1
            shown.append(index)
            visit(index, frame, now)
        }
        return shown
    }

    /// Every frame the player shows equals the same frame of the full decode, in order, with
    /// its duration, over two plays (the second after the source was reset).
    static func checkAgainstFullDecode(_ data: Data, memoryLimit: Int = AnimatedImagePlayer.defaultMemoryLimit) async throws {
        let registry = CoderRegistry.system()
        guard let animation = try registry.decode(data).animation else {
            // A file the decoder reads as a still image (an APNG whose control chunks it sets
            // aside) has no frames to play either.
            #expect(try registry.makeAnimationFrameSource(for: data) == nil)
            return
        }
        let source = try #require(try registry.makeAnimationFrameSource(for: data))
        #expect(source.loopCount == animation.loopCount)
        #expect(source.frameCount == nil || source.frameCount == animation.frames.count)
        let player = AnimatedImagePlayer(source: source, memoryLimit: memoryLimit)
        let start = ContinuousClock.now
        let plays = animation.loopCount == 1 ? 1 : 2
        var expectedAt = start
        var position = 0
        let shown = await play(player, frames: animation.frames.count, plays: plays, from: start) { shownIndex, frame, at in
            let index = position % animation.frames.count
            #expect(shownIndex == index)
            #expect(frame.duration == animation.frames[index].duration, "frame \(index)")
            #expect(frame.bitmap == animation.frames[index].bitmap, "frame \(index) of play \(position / animation.frames.count + 1)")
            // Each frame is shown when the one before it has had its display duration.
            #expect(at == expectedAt, "frame \(index)")
            expectedAt = at + animation.frames[index].displayDuration
            position += 1
        }
        #expect(player.error == nil)
        #expect(shown.count == animation.frames.count * plays)
    }

    @Test(arguments: animations)
    func framesEqualTheFullDecode(path: String) async throws {
        try await Self.checkAgainstFullDecode(try Self.data(path))
    }

    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"), arguments: corpusAnimations)
    func corpusFramesEqualTheFullDecode(file: String) async throws {
        try await Self.checkAgainstFullDecode(try Data(contentsOf: Reference.corpus!.appendingPathComponent(file)))
    }

    /// An AVIF sequence plays as often as its edit list says (make-avif-loop-fixtures.py): the
    /// player ends after one or three plays, and plays on for the infinite file and for one
    /// without an edit list.
    @Test(arguments: [("avif-loop-once.avif", 1), ("avif-loop-3.avif", 3), ("avif-loop-infinite.avif", 0), ("avif-animated.avif", 0)])
    func anAVIFPlaysAsItsEditListSays(name: String, loopCount: Int) async throws {
        let data = try Self.data("Tests/Fixtures/" + name)
        let player = AnimatedImagePlayer(source: try #require(try CoderRegistry.system().makeAnimationFrameSource(for: data)))
        #expect(player.loopCount == loopCount)
        let shown = await Self.play(player, frames: 3, plays: 5, from: .now)
        #expect(shown.count == 3 * (loopCount == 0 ? 5 : loopCount))
        #expect(player.isFinished == (loopCount != 0))
    }

    /// With room for only two frames, every frame is decoded just ahead of its turn (and the
    /// source reset for each play): still the full decode's frames.
    @Test(arguments: ["Demo/images/chi-animated.gif", "Demo/images/iss634-animated.webp", "Demo/images/apng-delay.png"])
    func framesEqualTheFullDecodeWithTwoFramesOfMemory(path: String) async throws {
        let data = try Self.data(path)
        let animation = try #require(try CoderRegistry.system().decode(data).animation)
        try await Self.checkAgainstFullDecode(data, memoryLimit: 2 * animation.frames[0].bitmap.cost)
    }

    /// Orientation and thumbnail size are applied to each frame as the registry's decode
    /// applies them.
    @Test func aThumbnailPlaysTheDecodesThumbnailFrames() async throws {
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(40)
        for path in ["Tests/Fixtures/dispose_bgnd.gif", "Tests/Fixtures/hopper-animated-16.webp", "Demo/images/apng-delay.png"] {
            let data = try Self.data(path)
            let registry = CoderRegistry.system()
            let animation = try #require(try registry.decode(data, options: options).animation)
            let source = try #require(try registry.makeAnimationFrameSource(for: data, options: options))
            #expect(source.canvasWidth == animation.width && source.canvasHeight == animation.height)
            for (index, expected) in animation.frames.enumerated() {
                #expect(try source.nextFrame()?.bitmap == expected.bitmap, "\(path) frame \(index)")
            }
            #expect(try source.nextFrame() == nil)
        }
    }

    @Test func stillImagesHaveNoFrameSource() throws {
        let registry = CoderRegistry.system()
        for path in ["Tests/Fixtures/hopper.gif", "Tests/Fixtures/apng-single_frame.png", "Tests/Fixtures/hopper.webp", "Tests/Fixtures/hopper-32.avif"] {
            #expect(try registry.makeAnimationFrameSource(for: try Self.data(path)) == nil, "\(path)")
        }
    }

    /// The canvas and the frame count are checked before any frame is composed.
    @Test func limitsApplyBeforeDecoding() throws {
        let registry = CoderRegistry.system()
        let huge = AnimatedWebPBuilder.file(width: 20_000, height: 20_000, frameCount: 2)
        #expect(throws: ImageError.self) { _ = try registry.makeAnimationFrameSource(for: huge) }
        var options = ImageDecodingOptions()
        options.maximumFrameCount = 10
        let long = AnimatedWebPBuilder.file(width: 4, height: 4, frameCount: 11)
        #expect(throws: ImageError.self) { _ = try registry.makeAnimationFrameSource(for: long, options: options) }
    }

    /// The case: 1,000 frames of 1080p (8 GB decoded, which a full decode refuses)
    /// play in order while the player never holds more than its 32 MiB.
    @Test func aLongHDAnimationPlaysWithinTheMemoryLimit() async throws {
        let frameCount = 1_000
        let data = AnimatedWebPBuilder.file(width: 1920, height: 1080, frameCount: frameCount, duration: 20)
        #expect(throws: ImageError.self) { _ = try CoderRegistry.system().decode(data) }
        let source = try #require(try CoderRegistry.system().makeAnimationFrameSource(for: data))
        let player = AnimatedImagePlayer(source: source)
        let frameBytes = 1920 * 1080 * 4
        var wellFormed = 0
        let shown = await Self.play(player, frames: frameCount, plays: 1, from: .now) { _, frame, _ in
            if frame.bitmap.width == 1920, frame.bitmap.height == 1080, frame.duration == .milliseconds(20) { wellFormed += 1 }
        }
        #expect(shown == Array(0..<frameCount))
        #expect(wellFormed == frameCount)
        #expect(player.peakBufferedBytes <= AnimatedImagePlayer.defaultMemoryLimit)
        // It did decode ahead: the limit holds four frames, and it filled them.
        #expect(player.peakBufferedBytes == 4 * frameBytes)
        #expect(player.error == nil)
    }
}

/// The player's rules on in-memory animations whose frames are told apart by colour.
@Suite struct AnimatedImagePlayerRulesTests {
    /// `count` frames of 8×8, frame *i* filled with grey *i*, each lasting `duration`.
    static func animation(frames count: Int, duration: Duration = .milliseconds(50), loopCount: Int = 0) throws -> AnimatedImage {
        let frames = try (0..<count).map { index in
            AnimatedImage.Frame(
                bitmap: try Bitmap(width: 8, height: 8, pixelFormat: .rgba8, pixels: [UInt8](repeating: UInt8(index), count: 8 * 8 * 4)),
                duration: duration)
        }
        return AnimatedImage(frames: frames, loopCount: loopCount)
    }

    static let frameBytes = 8 * 8 * 4

    /// Advances `player` to `now` once its decoding has settled.
    static func step(_ player: AnimatedImagePlayer, to now: ContinuousClock.Instant) async -> AnimatedImage.Frame? {
        await player.waitUntilBuffered()
        return player.advance(to: now)
    }

    @Test func aTwoLoopAnimationEndsAfterTwoLoopsOnItsLastFrame() async throws {
        let player = AnimatedImagePlayer(source: try Self.animation(frames: 3, loopCount: 2).makeFrameSource())
        #expect(player.loopCount == 2)
        let shown = await AnimatedImagePlayerTests.play(player, frames: 3, plays: 5, from: .now)
        #expect(shown == [0, 1, 2, 0, 1, 2])
        #expect(player.isFinished)
        #expect(player.loopsCompleted == 2)
        #expect(player.currentFrameIndex == 2)
        #expect(player.advance(to: .now + .seconds(3600)) == nil)
        // Nothing is decoded past the last play.
        #expect(player.bufferedBytes == Self.frameBytes)
    }

    @Test func aLoopCountOfZeroPlaysOn() async throws {
        let player = AnimatedImagePlayer(source: try Self.animation(frames: 2, loopCount: 0).makeFrameSource())
        let shown = await AnimatedImagePlayerTests.play(player, frames: 2, plays: 20, from: .now)
        #expect(shown.count == 40)
        #expect(!player.isFinished)
        #expect(player.loopsCompleted == 19)
    }

    /// Stored delays of 10 ms or less play as 100 ms, as in browsers.
    @Test func shortDelaysPlayAsBrowsersPlayThem() async throws {
        for stored in [Duration.zero, .milliseconds(10)] {
            let player = AnimatedImagePlayer(source: try Self.animation(frames: 2, duration: stored).makeFrameSource())
            let start = ContinuousClock.now
            player.play(at: start)
            #expect(await Self.step(player, to: start) != nil)
            #expect(player.nextFrameDue == start + .milliseconds(100))
            #expect(player.currentFrame?.duration == stored)
        }
    }

    @Test func pauseKeepsThePositionAndTheTimeLeft() async throws {
        let player = AnimatedImagePlayer(source: try Self.animation(frames: 4).makeFrameSource())
        let start = ContinuousClock.now
        player.play(at: start)
        _ = await Self.step(player, to: start)
        _ = await Self.step(player, to: start + .milliseconds(50))
        #expect(player.currentFrameIndex == 1)
        // Paused 20 ms into frame 1's 50 ms.
        player.pause(at: start + .milliseconds(70))
        #expect(player.nextFrameDue == nil)
        #expect(await Self.step(player, to: start + .seconds(60)) == nil)
        #expect(player.currentFrameIndex == 1)
        let resumed = start + .seconds(100)
        player.play(at: resumed)
        #expect(player.nextFrameDue == resumed + .milliseconds(30))
        #expect(await Self.step(player, to: resumed + .milliseconds(29)) == nil)
        let next = await Self.step(player, to: resumed + .milliseconds(30))
        #expect(next?.bitmap.pixels.first == 2)
        #expect(player.currentFrameIndex == 2)
    }

    /// A display that ticks a little late keeps the schedule; one that stalled starts it
    /// again from its late tick instead of racing through frames.
    @Test func aLateTickKeepsOrRestartsTheSchedule() async throws {
        let player = AnimatedImagePlayer(source: try Self.animation(frames: 4).makeFrameSource())
        let start = ContinuousClock.now
        player.play(at: start)
        _ = await Self.step(player, to: start)
        _ = await Self.step(player, to: start + .milliseconds(53))
        #expect(player.nextFrameDue == start + .milliseconds(100))
        _ = await Self.step(player, to: start + .milliseconds(400))
        #expect(player.currentFrameIndex == 2)
        #expect(player.nextFrameDue == start + .milliseconds(450))
    }

    /// The buffer fills to the limit and no further, counting the frame on screen.
    @Test func theBufferFillsToTheLimit() async throws {
        let player = AnimatedImagePlayer(
            source: try Self.animation(frames: 20).makeFrameSource(), memoryLimit: 5 * Self.frameBytes + 10)
        let start = ContinuousClock.now
        player.play(at: start)
        await player.waitUntilBuffered()
        #expect(player.bufferedBytes == 5 * Self.frameBytes)
        var now = start
        for _ in 0..<30 {
            _ = await Self.step(player, to: now)
            now = player.nextFrameDue ?? now
            #expect(player.bufferedBytes <= 5 * Self.frameBytes)
        }
        #expect(player.peakBufferedBytes == 5 * Self.frameBytes)
    }

    /// With a limit under two frames, the player still keeps the frame on screen and the next.
    @Test func aLimitUnderTwoFramesHoldsTwo() async throws {
        let player = AnimatedImagePlayer(source: try Self.animation(frames: 6).makeFrameSource(), memoryLimit: 1)
        let shown = await AnimatedImagePlayerTests.play(player, frames: 6, plays: 2, from: .now)
        #expect(shown == [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5])
        #expect(player.peakBufferedBytes == 2 * Self.frameBytes)
    }

    /// Trimming drops all but the frame on screen, at once; playback goes on with the right
    /// frames, decoded again.
    @Test func trimDropsToOneFrameAndPlaybackGoesOn() async throws {
        let executor = BlockingExecutor(name: "test.trim", width: 1)
        defer { executor.shutdown() }
        let player = AnimatedImagePlayer(
            source: try Self.animation(frames: 10).makeFrameSource(), memoryLimit: 10 * Self.frameBytes, executor: executor)
        let start = ContinuousClock.now
        player.play(at: start)
        _ = await Self.step(player, to: start)
        _ = await Self.step(player, to: start + .milliseconds(50))
        await player.waitUntilBuffered()   // the refill that showing frame 1 started
        #expect(player.bufferedBytes == 10 * Self.frameBytes)   // frame 1 on screen; 2–9, then 0, ahead
        // Hold the executor so that the decoding that trimming restarts cannot run yet.
        let gate = DispatchSemaphore(value: 0)
        executor.submit { gate.wait() }
        player.trimMemory()
        #expect(player.bufferedBytes == Self.frameBytes)
        #expect(player.currentFrameIndex == 1)
        gate.signal()
        var now = start + .milliseconds(50)
        var indices: [Int] = []
        for _ in 0..<10 {
            now = now + .milliseconds(50)
            let frame = await Self.step(player, to: now)
            indices.append(Int(frame?.bitmap.pixels.first ?? 255))
        }
        #expect(indices == [2, 3, 4, 5, 6, 7, 8, 9, 0, 1])
    }

    /// Stopping (the view left the screen) halts playback and decoding and keeps one frame;
    /// playing again resumes from it, shown for its whole duration.
    @Test func stopKeepsOneFrameAndPlayResumesFromIt() async throws {
        let player = AnimatedImagePlayer(source: try Self.animation(frames: 10).makeFrameSource())
        let start = ContinuousClock.now
        player.play(at: start)
        _ = await Self.step(player, to: start)
        _ = await Self.step(player, to: start + .milliseconds(50))
        player.stop()
        await player.waitUntilBuffered()
        #expect(player.bufferedBytes == Self.frameBytes)
        #expect(player.nextFrameDue == nil)
        #expect(player.advance(to: start + .seconds(10)) == nil)
        #expect(player.bufferedBytes == Self.frameBytes)
        let resumed = start + .seconds(20)
        player.play(at: resumed)
        #expect(player.nextFrameDue == resumed + .milliseconds(50))
        let next = await Self.step(player, to: resumed + .milliseconds(50))
        #expect(next?.bitmap.pixels.first == 2)
    }
}
