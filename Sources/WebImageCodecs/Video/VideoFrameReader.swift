import CFFmpeg
import Foundation
import WebImageCore

/// Decodes the frame a player shows at a time: the last frame whose presentation time is at or
/// before it (the first frame for a time before it, the last for a time past the end).
///
/// For a time after the start, the demuxer seeks to the key frame at or before it
/// (`AVSEEK_FLAG_BACKWARD`) and the frames from there are decoded, each one's time compared, until
/// one comes after the time asked. Should the seek land after the time (an index whose key
/// frame is shown later than it is decoded), the decode starts again from the beginning. At most
/// ``ImageDecodingOptions/maximumFrameCount`` frames are decoded in all, with
/// ``WorkDeadline/check(_:)`` between frames.
struct VideoFrameReader {
    let demuxer: VideoDemuxer
    let options: ImageDecodingOptions
    private let codec: UnsafeMutablePointer<AVCodecContext>
    private let packet: UnsafeMutablePointer<AVPacket>
    private var framesDecoded = 0
    /// A frame decoded past the time asked: the first candidate for a later time.
    private var lookahead: VideoFrame?
    private var packetsSent = 0
    private var draining = false

    /// The frame shown at `time` seconds from the start of `demuxer`'s file.
    static func frame(at time: TimeInterval, in demuxer: VideoDemuxer, options: ImageDecodingOptions) throws -> VideoFrame {
        try withReader(demuxer, options: options) { try $0.frame(at: time) }
    }

    /// Calls `body` with the frame shown at each of `times` (seconds from the start, ascending)
    /// and its index: one seek to the first, then one pass forward. A frame shown at several of
    /// the times is passed for each.
    static func frames(
        at times: [TimeInterval], in demuxer: VideoDemuxer, options: ImageDecodingOptions,
        _ body: (VideoFrame, Int) throws -> Void
    ) throws {
        guard let first = times.first else { return }
        try withReader(demuxer, options: options) { reader in
            var shown = try reader.frame(at: first)
            try body(shown, 0)
            for (index, time) in times.enumerated().dropFirst() {
                let target = reader.timestamp(at: time)
                while let next = try reader.nextFrame() {
                    // Without timestamps, a frame a time.
                    if let target, let when = next.timestamp, when > target {
                        reader.lookahead = next
                        break
                    }
                    shown = next
                    if target == nil { break }
                }
                try body(shown, index)
            }
        }
    }

    /// A reader of `demuxer`'s video stream, with its decoder and packet, for `body`.
    private static func withReader<T>(
        _ demuxer: VideoDemuxer, options: ImageDecodingOptions, _ body: (inout VideoFrameReader) throws -> T
    ) throws -> T {
        let codec = try openDecoder(for: demuxer, options: options)
        defer {
            var context: UnsafeMutablePointer<AVCodecContext>? = codec
            avcodec_free_context(&context)
        }
        guard let packet = av_packet_alloc() else { throw ImageError.tooLarge("video: out of memory for a packet") }
        defer {
            var pointer: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&pointer)
        }
        var reader = VideoFrameReader(demuxer: demuxer, options: options, codec: codec, packet: packet)
        return try body(&reader)
    }

    /// The frame shown at `time`, from the key frame at or before it.
    private mutating func frame(at time: TimeInterval) throws -> VideoFrame {
        guard time.isFinite, time > 0, let target = seek(to: time) else {
            return try decodeUntil(nil)
        }
        let frame = try decodeUntil(target)
        if let shown = frame.timestamp, shown > target, startTime < target {
            // The seek overshot: the frame shown at the time is before the key frame it found.
            try restartFromBeginning()
            return try decodeUntil(target)
        }
        return frame
    }

    /// A decoder for the stream: one thread (below), the pixel limit set in libavcodec too.
    ///
    /// One thread because a decode runs on one of the pipeline's bounded executor threads,
    /// whose width is the library's configured decode concurrency: codec threads of their own
    /// would escape that bound (a 2-core server decoding two posters would run a dozen threads),
    /// and frame threading delays the first frame by a frame per thread, the one frame we want.
    private static func openDecoder(for demuxer: VideoDemuxer, options: ImageDecodingOptions) throws -> UnsafeMutablePointer<AVCodecContext> {
        let parameters = demuxer.parameters
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw ImageError.unsupportedFormat("video: no decoder for \(demuxer.codecName)")
        }
        guard let codec = avcodec_alloc_context3(decoder) else { throw ImageError.tooLarge("video: out of memory for the decoder") }
        var opened = false
        defer {
            if !opened {
                var context: UnsafeMutablePointer<AVCodecContext>? = codec
                avcodec_free_context(&context)
            }
        }
        let copied = avcodec_parameters_to_context(codec, parameters)
        guard copied >= 0 else { throw FFmpegSetup.error(copied, doing: "reading the codec parameters") }
        codec.pointee.thread_count = 1
        codec.pointee.max_pixels = Int64(min(options.maximumPixelCount, Int(Int32.max)))
        codec.pointee.pkt_timebase = demuxer.stream.pointee.time_base
        let status = avcodec_open2(codec, decoder, nil)
        guard status >= 0 else { throw FFmpegSetup.error(status, doing: "opening the \(demuxer.codecName) decoder") }
        opened = true
        return codec
    }

    /// The stream's first timestamp (0 when the container states none).
    var startTime: Int64 {
        let start = demuxer.stream.pointee.start_time
        return start == wi_nopts_value ? 0 : start
    }

    /// `time` in the stream's time base, from its start; `nil` when the stream has no usable
    /// time base.
    private func timestamp(at time: TimeInterval) -> Int64? {
        let base = demuxer.stream.pointee.time_base
        guard base.num > 0, base.den > 0 else { return nil }
        // Microseconds first, as ffmpeg's `-ss` reads a time: 1.48 s is 1,480,000 µs exactly,
        // so a frame shown at exactly the time asked is the one found.
        let microseconds = Int64((min(time, 1e9) * 1e6).rounded())
        let offset = av_rescale_q_rnd(microseconds, AVRational(num: 1, den: 1_000_000), base, AV_ROUND_DOWN)
        return startTime.addingReportingOverflow(offset).partialValue
    }

    /// Seeks to the key frame at or before `time`; the time in the stream's time base, or
    /// `nil` when the stream has no usable time base (the frames are then decoded from the start).
    private func seek(to time: TimeInterval) -> Int64? {
        guard let target = timestamp(at: time) else { return nil }
        // A failed seek leaves the demuxer at the start, which only costs decoding.
        _ = av_seek_frame(demuxer.context, demuxer.streamIndex, target, AVSEEK_FLAG_BACKWARD)
        return target
    }

    /// Seeks back to the start and empties the decoder.
    private mutating func restartFromBeginning() throws {
        avcodec_flush_buffers(codec)
        lookahead = nil
        draining = false
        var status = av_seek_frame(demuxer.context, demuxer.streamIndex, startTime, AVSEEK_FLAG_BACKWARD)
        if status < 0 {
            // No index entry at or before the start: the first one after it.
            status = av_seek_frame(demuxer.context, demuxer.streamIndex, startTime, 0)
        }
        guard status >= 0 else { throw demuxer.source.failure ?? FFmpegSetup.error(status, doing: "seeking to the start") }
    }

    /// Decodes until a frame after `target` (or the first frame, for `nil`): the last frame at
    /// or before it, else the first one decoded. The frame after it is kept as ``lookahead``.
    private mutating func decodeUntil(_ target: Int64?) throws -> VideoFrame {
        var kept: VideoFrame?
        while let current = try nextFrame() {
            guard let target else { return current }
            if let time = current.timestamp, time > target {
                guard let kept else { return current }
                lookahead = current
                return kept
            }
            kept = current
        }
        guard let kept else { throw demuxer.source.failure ?? ImageError.corruptData("video: no frame decodes") }
        return kept
    }

    /// The next frame: ``lookahead``, else the next one decoded; `nil` at the end of the stream.
    private mutating func nextFrame() throws -> VideoFrame? {
        if let frame = lookahead {
            lookahead = nil
            return frame
        }
        let current = try VideoFrame()
        while true {
            let status = avcodec_receive_frame(codec, current.pointer)
            if status == 0 {
                framesDecoded += 1
                guard framesDecoded <= options.maximumFrameCount else {
                    throw ImageError.tooLarge("video: more than \(options.maximumFrameCount) frames decoded to reach \(options.videoTime) s")
                }
                try WorkDeadline.check("decoding the video")
                return current
            } else if status == wi_averror_eof {
                return nil
            } else if status == wi_averror_eagain {
                try sendNextPacket()
            } else {
                throw demuxer.source.failure ?? FFmpegSetup.error(status, doing: "decoding a frame")
            }
        }
    }

    /// Sends the stream's next packet to the decoder, or the end of the stream at the end of the
    /// file (or at a demuxing error: the frames decoded so far are kept). Packets that fail to
    /// decode are skipped, as players skip them; they count against the frame limit with twice
    /// its number, so a stream of undecodable packets still ends.
    private mutating func sendNextPacket() throws {
        if draining {
            throw demuxer.source.failure ?? ImageError.corruptData("video: the decoder wants more after the end of the stream")
        }
        while true {
            let status = av_read_frame(demuxer.context, packet)
            if status < 0 {
                if let failure = demuxer.source.failure { throw failure }
                draining = true
                _ = avcodec_send_packet(codec, nil)
                return
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == demuxer.streamIndex else { continue }
            packetsSent += 1
            guard packetsSent <= options.maximumFrameCount.multipliedReportingOverflow(by: 2).partialValue + 64 else {
                throw ImageError.tooLarge("video: more than \(options.maximumFrameCount) frames' packets read to reach \(options.videoTime) s")
            }
            try WorkDeadline.check("decoding the video")
            // A packet that does not decode is skipped (its error is not ours to report: the
            // frames around it may still decode); the receive that follows asks for the next.
            _ = avcodec_send_packet(codec, packet)
            return
        }
    }
}
