import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

/// Animated previews of a video (``VideoClip``): each frame against ffmpeg's own decode of the
/// frame shown at its time, with the posters' tolerances (a mean of 0.5/255, at most 2 per
/// channel: the same libswscale conversion). The clips are ``VideoTestFiles/pattern``: 2 s of
/// 25 frames a second, a key frame a second (`-g 25`).
@Suite(.enabled(if: Requirement.met(VideoTestFiles.ffmpegInstalled), "ffmpeg is not installed (make deps)"))
struct VideoClipTests {
    typealias Files = VideoTestFiles

    /// The clip of `file` from `start`, finished as the registry finishes a decode.
    func clip(_ file: URL, from start: Double, _ clip: VideoClip, options: ImageDecodingOptions = .init()) throws -> ImageContainer {
        var options = options
        options.videoTime = start
        options.videoClip = clip
        return try CoderRegistry.finish(try VideoDecoder().decode(try Data(contentsOf: file), options: options), options: options)
    }

    func expectFrames(_ container: ImageContainer, match times: [Double], of file: URL, in folder: TemporaryDirectory,
                      filter: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let animation = try #require(container.animation, sourceLocation: sourceLocation)
        #expect(animation.frames.count == times.count, sourceLocation: sourceLocation)
        for (frame, time) in zip(animation.frames, times) {
            let reference = try Files.reference(file, at: time, filter: filter, in: folder)
            let difference = try #require(Files.difference(frame.bitmap, reference), sourceLocation: sourceLocation)
            #expect(difference.mean <= 0.5 && difference.max <= 2, "the frame for \(time) s: \(difference)", sourceLocation: sourceLocation)
        }
    }

    /// 1 s at 5 frames a second from 0.4 s: five frames, across the key frame at 1 s, each
    /// shown 200 ms, looping forever; the image is the first.
    @Test func framesMatchFFmpegAtTheirTimes() throws {
        let folder = TemporaryDirectory("clip-times")
        defer { folder.remove() }
        let file = try Files.make("h264.mp4", in: folder, ["-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p"])
        let container = try clip(file, from: 0.4, VideoClip(duration: 1, framesPerSecond: 5))
        try expectFrames(container, match: [0.4, 0.6, 0.8, 1.0, 1.2], of: file, in: folder)
        let animation = try #require(container.animation)
        #expect(animation.loopCount == 0 && animation.frames.allSatisfy { $0.duration == .milliseconds(200) })
        #expect(container.image == animation.frames[0].bitmap)
        // Not five copies of one frame.
        let moved = try #require(Files.difference(animation.frames[4].bitmap, try Files.reference(file, at: 0.4, in: folder)))
        #expect(moved.mean > 5, "\(moved)")
    }

    /// At 50 frames a second over a 25 fps video each frame is shown twice (the frame a player
    /// shows at 0.02 s is the one of 0 s), and a clip that runs past the end stops there.
    @Test func framesBetweenFramesAndPastTheEnd() throws {
        let folder = TemporaryDirectory("clip-edges")
        defer { folder.remove() }
        let file = try Files.make("vp9.webm", in: folder, ["-c:v", "libvpx-vp9", "-g", "25", "-deadline", "realtime", "-cpu-used", "8"])
        let fast = try clip(file, from: 0, VideoClip(duration: 0.1, framesPerSecond: 50))
        try expectFrames(fast, match: [0, 0, 0.04, 0.04, 0.08], of: file, in: folder)

        let late = try clip(file, from: 1.8, VideoClip(duration: 1, framesPerSecond: 10))
        try expectFrames(late, match: [1.8, 1.88], of: file, in: folder)
    }

    /// A thumbnail's frames are converted to its size (64 × 48, as ffmpeg's `scale=64:48`), a
    /// rotated video's turned; with `firstFrameOnly` the decode is the poster.
    @Test func thumbnailsRotationAndFirstFrameOnly() throws {
        let folder = TemporaryDirectory("clip-size")
        defer { folder.remove() }
        let file = try Files.make("h264.mp4", in: folder, ["-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p"])
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(64)
        let small = try clip(file, from: 0.2, VideoClip(duration: 0.5, framesPerSecond: 4), options: options)
        try expectFrames(small, match: [0.2, 0.44], of: file, in: folder, filter: "scale=64:48")

        let rotated = folder.url.appendingPathComponent("rotated.mp4")
        try Files.run(["-i", file.path, "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated.path])
        let turned = try clip(rotated, from: 0.4, VideoClip(duration: 0.4, framesPerSecond: 5))
        #expect(turned.image.width == 120 && turned.image.height == 160)
        try expectFrames(turned, match: [0.4, 0.6], of: rotated, in: folder)

        options.firstFrameOnly = true
        let poster = try clip(file, from: 0.4, VideoClip(), options: options)
        #expect(poster.animation == nil && poster.image.width == 64)
    }

    /// The frames asked for are checked against the limits before any is decoded: 30 frames
    /// over a limit of 10 (as asked, though the video ends at 2 s), and 20 frames of 160 × 120
    /// over 1 MiB of decoded frames.
    @Test func limitsComeFirst() throws {
        let folder = TemporaryDirectory("clip-limits")
        defer { folder.remove() }
        let file = try Files.make("h264.mp4", in: folder, ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
        var options = ImageDecodingOptions()
        options.maximumFrameCount = 10
        #expect(throws: ImageError.tooLarge("video: 30 frames exceed the limit of 10")) {
            try clip(file, from: 0, VideoClip(duration: 3, framesPerSecond: 10), options: options)
        }
        options = ImageDecodingOptions()
        options.maximumAnimationBytes = 1 << 20
        #expect(throws: ImageError.tooLarge("video: 20 frames of 160×120 exceed the limit of 1048576 bytes of decoded frames")) {
            try clip(file, from: 0, VideoClip(duration: 2, framesPerSecond: 10), options: options)
        }
    }
}
