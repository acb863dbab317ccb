import CLazyLibraries
import WebImageCore

/// A codec library opened when its first file is decoded or encoded, not linked
/// (`CLazyLibraries`): few runs need one, and loading each at every start cost every process
/// and renderer child its dependencies' loading and binding.
///
/// Every path into one of these libraries starts with ``load()``.
enum LazyLibrary {
    case ffmpeg, poppler, jxl, heif, avif

    /// Opens the library, once a process (cheap after the first call; thread-safe).
    ///
    /// - Throws: ``ImageError/unsupportedFormat(_:)`` naming the format and the Debian package
    ///   when the library is not installed (or lacks a function the codec calls): none of its
    ///   functions is called then.
    func load() throws {
        guard !isAvailable else { return }
        let failure = failureMessage.map { " (\(LibraryMessage.oneLine($0)))" } ?? ""
        throw ImageError.unsupportedFormat("\(format): \(notInstalled)\(failure)")
    }

    /// Whether the library is loaded, loading it on the first call.
    var isAvailable: Bool {
        switch self {
        case .ffmpeg: wi_lazy_ffmpeg_available() != 0
        case .poppler: wi_lazy_poppler_available() != 0
        case .jxl: wi_lazy_jxl_available() != 0
        case .heif: wi_lazy_heif_available() != 0
        case .avif: wi_lazy_avif_available() != 0
        }
    }

    /// dlopen's or dlsym's message when the library could not be loaded.
    private var failureMessage: String? {
        let failure: UnsafePointer<CChar>? = switch self {
        case .ffmpeg: wi_lazy_ffmpeg_failure()
        case .poppler: wi_lazy_poppler_failure()
        case .jxl: wi_lazy_jxl_failure()
        case .heif: wi_lazy_heif_failure()
        case .avif: wi_lazy_avif_failure()
        }
        return failure.map { String(cString: $0) }
    }

    /// The format, as our errors name it.
    private var format: String {
        switch self {
        case .ffmpeg: "video"
        case .poppler: "PDF"
        case .jxl: "JPEG XL"
        case .heif: "HEIF"
        case .avif: "AVIF"
        }
    }

    /// What is missing, with the Debian packages that install it (the runtime, not the `-dev`).
    private var notInstalled: String {
        switch self {
        case .ffmpeg: "FFmpeg's libraries (libavformat59, libavcodec59, libswscale6, libavutil57) are not installed"
        case .poppler: "poppler-glib (libpoppler-glib8) is not installed"
        case .jxl: "libjxl (libjxl0.7) is not installed"
        case .heif: "libheif (libheif1) is not installed"
        case .avif: "libavif (libavif15) is not installed"
        }
    }
}
