import CFFmpeg
import Foundation
import WebImageCore

/// One file opened by libavformat from its bytes alone, its video stream chosen and checked
/// against the limits before any frame is decoded (``VideoDecoder`` documents the model).
struct VideoDemuxer {
    /// The demuxers libavformat may use: ISO BMFF/QuickTime and Matroska/WebM, nothing else (no
    /// HLS, DASH, concat, image sequences, raw streams, or anything that opens another input).
    static let formatWhitelist = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm"
    /// The most streams a file may declare (libavformat refuses the next one while parsing).
    static let maximumStreamCount = 64
    /// The longest side a video's coded or displayed frame may have, whatever the pixel limit.
    static let maximumSide = 16384
    /// The highest frame rate a claimed frame count is judged by: a file claiming more frames
    /// than ``ImageDecodingOptions/maximumVideoDuration`` at this rate is refused.
    static let maximumFrameRate = 60.0

    let context: UnsafeMutablePointer<AVFormatContext>
    let source: VideoByteSource
    let streamIndex: Int32
    /// The container's format, as sniffed (`.mp4` when the sniffer does not say).
    let format: ImageFormat

    var stream: UnsafeMutablePointer<AVStream> { context.pointee.streams[Int(streamIndex)]! }
    var parameters: UnsafeMutablePointer<AVCodecParameters> { stream.pointee.codecpar }

    /// Opens `bytes` (headers only), checks the limits, and calls `body`; every FFmpeg object is
    /// freed when it returns or throws.
    static func with<T>(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions, _ body: (VideoDemuxer) throws -> T) throws -> T {
        try FFmpegSetup.prepare()
        guard bytes.count > 0 else { throw ImageError.corruptData("video: no bytes") }
        let source = VideoByteSource(bytes)
        let io = try source.makeIOContext()
        defer { VideoByteSource.free(io) }
        let isMatroska = bytes.starts(with: [0x1A, 0x45, 0xDF, 0xA3])
        var context: UnsafeMutablePointer<AVFormatContext>? = try open(io, source: source, demuxer: isMatroska ? "matroska" : "mov")
        defer { avformat_close_input(&context) }
        guard let context else { throw ImageError.corruptData("video: the container did not open") }
        let sniffed = ImageFormat(sniffing: bytes).flatMap { $0.isVideo ? $0 : nil }
        let demuxer = VideoDemuxer(
            context: context, source: source, streamIndex: try videoStream(of: context, source: source),
            format: sniffed ?? (isMatroska ? .mkv : .mp4))
        try demuxer.checkLimits(options)
        return try withExtendedLifetime(source) { try body(demuxer) }
    }

    /// `avformat_open_input` over the custom I/O, with the demuxer named (no probing of every
    /// demuxer FFmpeg has), the whitelists, and every way out closed.
    private static func open(_ io: UnsafeMutablePointer<AVIOContext>, source: VideoByteSource, demuxer: String) throws -> UnsafeMutablePointer<AVFormatContext> {
        guard let context = avformat_alloc_context() else { throw ImageError.tooLarge("video: out of memory for the demuxer") }
        context.pointee.pb = io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        context.pointee.max_streams = Int32(maximumStreamCount)
        // Every other input a demuxer might open (a `dref`'s file or URL, a playlist's segment,
        // a concat script's entry) goes through `io_open`: refused, whatever the URL.
        context.pointee.io_open = { _, _, _, _, _ in wi_averror_eperm }
        context.pointee.interrupt_callback = AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 1 }
                return VideoByteSource.from(opaque).interrupted() ? 1 : 0
            },
            opaque: source.opaque)
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        av_dict_set(&options, "format_whitelist", formatWhitelist, 0)
        // No protocol is named "none": nothing may be opened by URL, should anything try.
        av_dict_set(&options, "protocol_whitelist", "none", 0)
        // The mov demuxer's external tracks (off by default; off here whatever the default).
        av_dict_set(&options, "enable_drefs", "0", 0)
        av_dict_set(&options, "use_absolute_path", "0", 0)
        var opened: UnsafeMutablePointer<AVFormatContext>? = context
        // On failure avformat_open_input frees the context it was given (not our I/O).
        let status = avformat_open_input(&opened, "", av_find_input_format(demuxer), &options)
        guard status >= 0, let opened else {
            throw source.failure ?? FFmpegSetup.error(status, doing: "reading the container")
        }
        return opened
    }

    /// The video stream a player shows (libavformat's choice: the default one, else the largest),
    /// every other stream discarded so that the demuxer skips its packets.
    private static func videoStream(of context: UnsafeMutablePointer<AVFormatContext>, source: VideoByteSource) throws -> Int32 {
        let count = Int(context.pointee.nb_streams)
        guard count <= maximumStreamCount else {
            throw ImageError.tooLarge("video: \(count) streams, over the limit of \(maximumStreamCount)")
        }
        let index = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0, Int(index) < count else {
            throw source.failure ?? ImageError.unsupportedFormat("video: the file has no video stream")
        }
        for other in 0..<count where other != Int(index) {
            context.pointee.streams[other]?.pointee.discard = AVDISCARD_ALL
        }
        return index
    }

    /// The limits, from the headers: frame size (coded and displayed), duration, claimed frames.
    func checkLimits(_ options: ImageDecodingOptions) throws {
        let width = Int(parameters.pointee.width), height = Int(parameters.pointee.height)
        guard width > 0, height > 0 else { throw ImageError.corruptData("video: the stream states no frame size") }
        try VideoGeometry.checkSize(width: width, height: height, what: "coded frame", options: options)
        let display = VideoGeometry.displaySize(width: width, height: height, sampleAspectRatio: av_guess_sample_aspect_ratio(context, stream, nil))
        try VideoGeometry.checkSize(width: display.width, height: display.height, what: "displayed frame", options: options)
        if let duration, duration > options.maximumVideoDuration {
            throw ImageError.tooLarge("video: \(Int(duration)) s long, over the limit of \(Int(options.maximumVideoDuration)) s")
        }
        let frames = stream.pointee.nb_frames
        let allowed = min(max(options.maximumVideoDuration, 0) * Self.maximumFrameRate, 1e15)
        if frames > 0, Double(frames) > allowed {
            throw ImageError.tooLarge("video: \(frames) frames claimed, over \(Int(allowed)) (\(Int(Self.maximumFrameRate)) a second for \(Int(options.maximumVideoDuration)) s)")
        }
    }

    /// The longest of the container's and the stream's durations, in seconds, when stated.
    var duration: TimeInterval? {
        var longest: Double?
        let container = context.pointee.duration
        if container != wi_nopts_value, container > 0 {
            longest = Double(container) / Double(AV_TIME_BASE)
        }
        let base = stream.pointee.time_base, own = stream.pointee.duration
        if own != wi_nopts_value, own > 0, base.num > 0, base.den > 0 {
            let seconds = Double(own) * Double(base.num) / Double(base.den)
            longest = max(longest ?? 0, seconds)
        }
        return longest
    }

    /// Frames per second as the container states them (average, else the base rate).
    var frameRate: Double? {
        for rate in [stream.pointee.avg_frame_rate, stream.pointee.r_frame_rate] where rate.num > 0 && rate.den > 0 {
            return Double(rate.num) / Double(rate.den)
        }
        return nil
    }

    /// The frame count the container claims, when it claims one.
    var frameCount: Int? {
        let frames = stream.pointee.nb_frames
        return frames > 0 ? Int(frames) : nil
    }

    /// The codec's short name (`h264`, `hevc`, `vp9`, `av1`, `mjpeg`…).
    var codecName: String {
        String(cString: avcodec_get_name(parameters.pointee.codec_id))
    }
}
