import CFFmpeg
import Foundation
import WebImageCore

/// A poster frame of a video, through FFmpeg: MP4 and QuickTime (H.264, HEVC, AV1, MJPEG…),
/// WebM and Matroska (VP8, VP9, AV1…).
///
/// - **The frame**: the first frame by default; with ``ImageDecodingOptions/videoTime``, the frame
///   a player shows at that time (the last frame whose presentation time is at or before it, not
///   the nearest key frame: the decode seeks to the key frame before the time and decodes forward
///   to it); past the end, the last frame.
/// - **As displayed**: the sample aspect ratio widens the frame (the width times the ratio, as
///   ffmpeg's `scale=iw*sar:ih`), and the container's display matrix is reported as the
///   ``ImageContainer/orientation`` (90°, 180°, 270°, with their mirrorings, as ffmpeg's
///   `autorotate` reads it), which ``CoderRegistry`` applies like an EXIF orientation. A thumbnail
///   is converted from the frame straight to its size.
/// - **Colour**: the frame's matrix and range, BT.601 when unspecified (as ffmpeg's command line
///   converts); 10- and 12-bit frames reduced to 8 bits; PQ and HLG (HDR) frames tone-mapped to
///   sRGB (Hable's curve on the brightest component, BT.2020 to BT.709 in
///   linear light).
///
/// **Security**: libavformat can open files, URLs and playlists on its own (HLS, DASH, concat
/// scripts, `dref` references inside a QuickTime file). Here it reads nothing but the bytes
/// given: they are handed over through a custom `AVIOContext` with no file name; the demuxer is
/// named (QuickTime/MP4 or Matroska/WebM), and the format whitelist allows no other; the
/// protocol whitelist allows none; the context's `io_open`, through which any demuxer opens a
/// further input, refuses every URL; QuickTime's external references are off.
///
/// **Limits**, from the headers before any frame is decoded: at most 64 streams; coded and
/// displayed frame sizes within ``ImageDecodingOptions/maximumPixelCount`` and 16,384 a side;
/// the duration within ``ImageDecodingOptions/maximumVideoDuration``, and no more frames claimed
/// than that duration at 60 frames a second (a file claiming 100,000 × 100,000 pixels or a million
/// frames fails at once with ``ImageError/tooLarge(_:)``). Then, while decoding: at most
/// ``ImageDecodingOptions/maximumFrameCount`` frames decoded to reach the time; at most four times
/// the file's size (and at least 64 MiB) read by the demuxer, seeks included; the work deadline
/// checked between frames and whenever FFmpeg reads. The codec decodes on the
/// caller's thread alone (`thread_count` 1): a decode runs on one of the pipeline's bounded
/// executor threads, and codec threads would escape that bound. Anything malformed is an
/// ``ImageError``, and every FFmpeg object is freed on every path.
///
/// With ``ImageDecodingOptions/videoClip``, the decode is an animated preview instead: the frames
/// shown at each of the clip's times from ``ImageDecodingOptions/videoTime`` (one seek, then one
/// pass forward), each converted to its output size as it comes.
///
/// ```swift
/// var options = ImageDecodingOptions()
/// options.videoTime = 12.5                  // the frame shown at 12.5 s
/// options.thumbnail = .maxPixelSize(320)
/// let poster = try CoderRegistry.system().decode(bytes, options: options)
/// ```
public struct VideoDecoder: ImageDecoder {
    public init() {}

    public var formats: Set<ImageFormat> { [.mp4, .mov, .webm, .mkv] }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        try data.withUnsafeBytes { bytes in
            try VideoDemuxer.with(bytes, options: options) { demuxer in
                if let clip = options.videoClip, !options.firstFrameOnly {
                    return try Self.clip(clip, of: demuxer, options: options)
                }
                let frame = try VideoFrameReader.frame(at: options.videoTime, in: demuxer, options: options)
                let geometry = try VideoGeometry(frame: frame.pointer, in: demuxer, options: options)
                let size = geometry.outputSize(for: options.thumbnail)
                try VideoGeometry.checkSize(width: size.width, height: size.height, what: "poster", options: options)
                let bitmap = try VideoFrameConversion.rgba(frame.pointer, width: size.width, height: size.height, stream: demuxer.stream)
                return ImageContainer(image: bitmap, format: demuxer.format, orientation: geometry.orientation)
            }
        }
    }

    /// The frames of `clip` from ``ImageDecodingOptions/videoTime``, as an animation looping
    /// forever. The animation limits are checked with the stream's displayed size before the
    /// first frame is decoded; each frame is converted to its output size as it comes.
    private static func clip(_ clip: VideoClip, of demuxer: VideoDemuxer, options: ImageDecodingOptions) throws -> ImageContainer {
        // The frames asked for, before their times are listed: a clip cut short by the end of
        // the video is checked as asked.
        let parameters = demuxer.parameters.pointee
        try options.checkAnimationWork(frameCount: clip.frameCount, canvasWidth: Int(parameters.width), canvasHeight: Int(parameters.height), format: "video")
        let times = clip.times(from: max(0, options.videoTime), end: demuxer.duration)
        var frames: [AnimatedImage.Frame] = []
        var orientation = ImageOrientation.up
        // Every frame at the first one's size: an animation has one canvas, and a stream may
        // change its frame size midway (VP9 can).
        var size = (width: 0, height: 0)
        try VideoFrameReader.frames(at: times, in: demuxer, options: options) { frame, index in
            let geometry = try VideoGeometry(frame: frame.pointer, in: demuxer, options: options)
            if index == 0 {
                size = geometry.outputSize(for: options.thumbnail)
                try VideoGeometry.checkSize(width: size.width, height: size.height, what: "clip", options: options)
                try options.checkKeptAnimationBytes(frameCount: times.count, kept: size, format: "video")
                orientation = geometry.orientation
            }
            let bitmap = try VideoFrameConversion.rgba(frame.pointer, width: size.width, height: size.height, stream: demuxer.stream)
            frames.append(AnimatedImage.Frame(bitmap: bitmap, duration: clip.frameDuration))
        }
        let animation = AnimatedImage(frames: frames, loopCount: 0)
        var container = ImageContainer(image: frames[0].bitmap, format: demuxer.format, orientation: orientation)
        container.animation = animation
        return container
    }
}
