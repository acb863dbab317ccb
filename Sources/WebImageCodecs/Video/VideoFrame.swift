import CFFmpeg
import WebImageCore

/// An `AVFrame` that frees itself: frames change hands in the decode loop (the one kept, the
/// one being decoded), and every path out of it must free both.
final class VideoFrame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() throws {
        guard let pointer = av_frame_alloc() else { throw ImageError.tooLarge("video: out of memory for a frame") }
        self.pointer = pointer
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }

    /// The presentation time, in the stream's time base: libavcodec's best guess (`nil` when
    /// it has none).
    var timestamp: Int64? {
        let value = pointer.pointee.best_effort_timestamp
        return value == wi_nopts_value ? nil : value
    }
}
