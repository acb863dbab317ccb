import CCodecShims
import CWebP
import WebImageCore

/// libwebp's encoder error codes as ``ImageError``s that name their cause: no failure is
/// reported as a bare number.
enum WebPEncodingFailure {
    static func error(_ code: WebPEncodingError, _ doing: String) -> ImageError {
        let reason = reason(code)
        switch code {
        case VP8_ENC_ERROR_BAD_DIMENSION, VP8_ENC_ERROR_NULL_PARAMETER, VP8_ENC_ERROR_INVALID_CONFIGURATION:
            return .unsupportedFormat("WebP: libwebp refused \(doing): \(reason)")
        case VP8_ENC_ERROR_USER_ABORT:
            return .cancelled
        default:
            return .tooLarge("WebP: libwebp failed \(doing): \(reason)")
        }
    }

    /// What `code` means, in words.
    static func reason(_ code: WebPEncodingError) -> String {
        switch code {
        case VP8_ENC_ERROR_OUT_OF_MEMORY: "out of memory"
        case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY: "out of memory for the bitstream"
        case VP8_ENC_ERROR_NULL_PARAMETER: "a missing parameter"
        case VP8_ENC_ERROR_INVALID_CONFIGURATION: "invalid settings"
        case VP8_ENC_ERROR_BAD_DIMENSION: "a width or height of 0 or above 16383"
        case VP8_ENC_ERROR_PARTITION0_OVERFLOW: "the first partition passed 512 KiB (lower the quality)"
        case VP8_ENC_ERROR_PARTITION_OVERFLOW: "a partition passed 16 MiB (lower the quality)"
        case VP8_ENC_ERROR_BAD_WRITE: "out of memory for the output"
        case VP8_ENC_ERROR_FILE_TOO_BIG: "the file would pass 4 GiB"
        case VP8_ENC_ERROR_USER_ABORT: "cancelled"
        // libwebp 1.2 leaves VP8_ENC_OK on some failed allocations.
        case VP8_ENC_OK: "out of memory (libwebp gave no code)"
        default: "an error libwebp \(WEBP_ENCODER_ABI_VERSION >> 8).x does not name (code \(code.rawValue))"
        }
    }
}
