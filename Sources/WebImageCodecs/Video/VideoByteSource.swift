import CFFmpeg
import Foundation
import WebImageCore

/// The only input libavformat gets: the bytes of one file in memory, read and sought through a
/// custom `AVIOContext`. No URL, file name or protocol is ever handed to FFmpeg.
///
/// Reads are bounded: a hostile index can make a demuxer read the same bytes again and again
/// (seeking back and forth between a `moov`'s chunks, or between Matroska's clusters), so all the
/// bytes handed to FFmpeg, each seek charged as ``seekCost`` bytes, may total at most
/// ``readLimit``: four times the file, and at least 64 MiB. Past it, or past the work deadline
/// (``WorkDeadline``), the callbacks answer `AVERROR_EXIT` and the reason is kept in ``failure``,
/// for the decoder to throw instead of FFmpeg's generic error.
///
/// Used by one decode on one thread (FFmpeg calls back on the thread that called it): not
/// `Sendable`, and never shared.
final class VideoByteSource {
    /// What one seek costs against ``readLimit``: a demuxer made to seek without reading still
    /// runs out of budget.
    static let seekCost = 4096
    /// The smallest ``readLimit``, however small the file: the demuxers read headers twice.
    static let minimumReadLimit = 64 << 20
    /// The size of the buffer FFmpeg reads through.
    static let bufferSize = 32 << 10

    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    /// Bytes handed to FFmpeg so far, seeks included at ``seekCost`` each.
    private(set) var bytesRead = 0
    /// The most bytes FFmpeg may read in all.
    let readLimit: Int
    /// Why a callback stopped FFmpeg: the read budget, the deadline, or the caller leaving.
    private(set) var failure: ImageError?

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        let (fourTimes, overflow) = bytes.count.multipliedReportingOverflow(by: 4)
        readLimit = overflow ? Int.max : max(fourTimes, Self.minimumReadLimit)
    }

    /// The source behind a callback's `opaque` pointer (the decode keeps the source alive).
    static func from(_ opaque: UnsafeMutableRawPointer) -> VideoByteSource {
        Unmanaged<VideoByteSource>.fromOpaque(opaque).takeUnretainedValue()
    }

    /// The pointer the callbacks are given.
    var opaque: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    /// `read_packet`: up to `count` bytes from the current position, `AVERROR_EOF` at the end.
    func read(_ buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int32 {
        guard !interrupted() else { return wi_averror_exit }
        let available = bytes.count - position
        guard available > 0, count > 0, let base = bytes.baseAddress else { return wi_averror_eof }
        let length = min(count, available)
        guard charge(length) else { return wi_averror_exit }
        buffer.update(from: (base + position).assumingMemoryBound(to: UInt8.self), count: length)
        position += length
        return Int32(length)
    }

    /// `seek`: `AVSEEK_SIZE` answers the size; other seeks stay within the bytes.
    func seek(to offset: Int64, whence: Int32) -> Int64 {
        if whence & AVSEEK_SIZE != 0 { return Int64(bytes.count) }
        guard !interrupted(), charge(Self.seekCost) else { return Int64(wi_averror_exit) }
        let origin: Int64
        switch whence & ~AVSEEK_FORCE {
        case SEEK_SET: origin = 0
        case SEEK_CUR: origin = Int64(position)
        case SEEK_END: origin = Int64(bytes.count)
        default: return Int64(wi_averror_einval)
        }
        let (target, overflow) = origin.addingReportingOverflow(offset)
        guard !overflow, target >= 0, target <= Int64(bytes.count) else { return Int64(wi_averror_einval) }
        position = Int(target)
        return target
    }

    /// Whether FFmpeg must stop: a failure already recorded, or ``WorkDeadline/check(_:)``
    /// throwing (the deadline passed, or the caller left). FFmpeg's interrupt callback asks it
    /// too. A throw cannot cross FFmpeg's C frames, so it is caught here and kept.
    func interrupted() -> Bool {
        guard failure == nil else { return true }
        do {
            try WorkDeadline.check("reading the video")
            return false
        } catch let error as ImageError {
            failure = error
        } catch {
            failure = .cancelled
        }
        return true
    }

    /// Counts `count` bytes against the budget; `false` (with ``failure`` set) past it.
    private func charge(_ count: Int) -> Bool {
        bytesRead += count
        guard bytesRead <= readLimit else {
            failure = .tooLarge("video: more than \(readLimit) bytes read from a file of \(bytes.count) bytes (the container makes the demuxer read it again and again)")
            return false
        }
        return true
    }

    /// A custom `AVIOContext` over this source (read and seek, never write); freed with
    /// ``free(_:)``. The source must outlive it.
    func makeIOContext() throws -> UnsafeMutablePointer<AVIOContext> {
        guard let buffer = av_malloc(Self.bufferSize) else { throw ImageError.tooLarge("video: out of memory for the read buffer") }
        let context = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), Int32(Self.bufferSize), 0, opaque,
            { opaque, buffer, size in
                guard let opaque, let buffer else { return wi_averror_eof }
                return VideoByteSource.from(opaque).read(buffer, count: Int(size))
            },
            nil,
            { opaque, offset, whence in
                guard let opaque else { return Int64(wi_averror_einval) }
                return VideoByteSource.from(opaque).seek(to: offset, whence: whence)
            })
        guard let context else {
            av_free(buffer)
            throw ImageError.tooLarge("video: out of memory for the reader")
        }
        return context
    }

    /// Frees a context from ``makeIOContext()`` and its buffer (which FFmpeg may have replaced).
    static func free(_ context: UnsafeMutablePointer<AVIOContext>) {
        av_freep(&context.pointee.buffer)
        var pointer: UnsafeMutablePointer<AVIOContext>? = context
        avio_context_free(&pointer)
    }
}
