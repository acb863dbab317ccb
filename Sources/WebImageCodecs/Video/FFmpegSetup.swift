import CFFmpeg
import WebImageCore

/// FFmpeg's process-wide state, set once before the first video is opened.
enum FFmpegSetup {
    /// FFmpeg logs to standard error by default: every malformed file a server is sent would
    /// print its complaints there. Our errors say what failed, so its log is silenced. The level
    /// is process-wide (an application that logs FFmpeg itself sets it again after).
    ///
    /// A `static let` is initialised exactly once, under the runtime's own lock, however many
    /// threads decode their first video at the same time.
    ///
    /// One allocation of FFmpeg's is also bounded, to ``largestAllocation``: the mov demuxer
    /// grows its sample tables by what a box claims, and a 2.3 KB file found by fuzz-video made
    /// it ask for 1.28 GB in one `realloc` (the demuxer then fails with `ENOMEM`, a typed error
    /// here). Also process-wide; FFmpeg's own default is `INT_MAX`.
    private static let silenced: Bool = {
        av_log_set_level(AV_LOG_QUIET)
        av_max_alloc(largestAllocation)
        return true
    }()

    /// The most one FFmpeg allocation may take: 256 MiB, above a plane of the largest frame the
    /// default pixel limit lets through (100 megapixels at 16 bits a sample: 200 MB) and far
    /// above a four-hour index (under 16 MB).
    static let largestAllocation = 256 << 20

    /// Loads FFmpeg's libraries, once a process (they are opened when first used, not linked:
    /// ``LazyLibrary``), and runs the one-time setup (cheap after the first call). Every path
    /// into FFmpeg starts here.
    ///
    /// - Throws: ``ImageError/unsupportedFormat(_:)`` when the libraries are not installed (or
    ///   lack a function the decoder calls): no FFmpeg function is called then.
    static func prepare() throws {
        try LazyLibrary.ffmpeg.load()
        _ = silenced
    }

    /// FFmpeg's message for an error code, on one line.
    static func message(_ status: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        guard av_strerror(status, &buffer, buffer.count) == 0 else { return "error \(status)" }
        let text = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return LibraryMessage.oneLine(String(decoding: text, as: UTF8.self))
    }

    /// An FFmpeg failure as an ``ImageError``: memory as ``ImageError/tooLarge(_:)``, anything else
    /// as ``ImageError/corruptData(_:)`` (a file FFmpeg cannot read is, to us, a damaged one).
    static func error(_ status: Int32, doing: String) -> ImageError {
        if status == wi_averror_enomem {
            return .tooLarge("video: out of memory \(doing)")
        }
        return .corruptData("video: \(message(status)) (\(doing))")
    }
}
