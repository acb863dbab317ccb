// libjxl 0.7 (Debian 12), loaded when first used: see include/wi_lazy_libraries.h. Every libjxl
// function the Swift code in Sources/WebImageCodecs calls is defined here, hidden, under its own
// name and with its header's prototype, and forwards to the library's function.
#include "wi_lazy_libraries.h"
#include "wi_lazy_load.h"

// libjxl's header declares every function with visibility("default") (JXL_EXPORT, which it
// defines only when undefined), and a declaration's visibility wins over a later definition's:
// empty, the hidden definitions below stay hidden.
#define JXL_EXPORT
#include <jxl/decode.h>
#include <jxl/encode.h>

enum { WI_JXL, WI_JXL_LIBRARIES };

/// The soname (Debian's libjxl0.7).
static const char *const wi_jxl_sonames[WI_JXL_LIBRARIES] = {
    [WI_JXL] = "libjxl.so.0.7",
};

/// Every function forwarded.
#define WI_JXL_FUNCTIONS(X)                       \
    X(WI_JXL, JxlColorEncodingSetToSRGB)          \
    X(WI_JXL, JxlDecoderCloseInput)               \
    X(WI_JXL, JxlDecoderCreate)                   \
    X(WI_JXL, JxlDecoderDestroy)                  \
    X(WI_JXL, JxlDecoderFlushImage)               \
    X(WI_JXL, JxlDecoderGetBasicInfo)             \
    X(WI_JXL, JxlDecoderGetColorAsEncodedProfile) \
    X(WI_JXL, JxlDecoderGetColorAsICCProfile)     \
    X(WI_JXL, JxlDecoderGetFrameHeader)           \
    X(WI_JXL, JxlDecoderGetICCProfileSize)        \
    X(WI_JXL, JxlDecoderImageOutBufferSize)       \
    X(WI_JXL, JxlDecoderProcessInput)             \
    X(WI_JXL, JxlDecoderReleaseInput)             \
    X(WI_JXL, JxlDecoderSetCoalescing)            \
    X(WI_JXL, JxlDecoderSetImageOutBuffer)        \
    X(WI_JXL, JxlDecoderSetInput)                 \
    X(WI_JXL, JxlDecoderSetKeepOrientation)       \
    X(WI_JXL, JxlDecoderSetUnpremultiplyAlpha)    \
    X(WI_JXL, JxlDecoderSubscribeEvents)          \
    X(WI_JXL, JxlDecoderVersion)                  \
    X(WI_JXL, JxlEncoderAddImageFrame)            \
    X(WI_JXL, JxlEncoderCloseInput)               \
    X(WI_JXL, JxlEncoderCreate)                   \
    X(WI_JXL, JxlEncoderDestroy)                  \
    X(WI_JXL, JxlEncoderFrameSettingsCreate)      \
    X(WI_JXL, JxlEncoderFrameSettingsSetOption)   \
    X(WI_JXL, JxlEncoderInitBasicInfo)            \
    X(WI_JXL, JxlEncoderInitFrameHeader)          \
    X(WI_JXL, JxlEncoderProcessOutput)            \
    X(WI_JXL, JxlEncoderSetBasicInfo)             \
    X(WI_JXL, JxlEncoderSetColorEncoding)         \
    X(WI_JXL, JxlEncoderSetFrameDistance)         \
    X(WI_JXL, JxlEncoderSetFrameHeader)           \
    X(WI_JXL, JxlEncoderSetFrameLossless)         \
    X(WI_JXL, JxlEncoderSetICCProfile)

WI_LAZY_DEFINE(jxl, "libjxl", wi_jxl_sonames, WI_JXL_FUNCTIONS)

WI_HIDDEN void JxlColorEncodingSetToSRGB(JxlColorEncoding *color_encoding, int is_gray) {
    WI_LAZY(JxlColorEncodingSetToSRGB)(color_encoding, is_gray);
}

WI_HIDDEN void JxlDecoderCloseInput(JxlDecoder *dec) {
    WI_LAZY(JxlDecoderCloseInput)(dec);
}

WI_HIDDEN JxlDecoder *JxlDecoderCreate(const JxlMemoryManager *memory_manager) {
    return WI_LAZY(JxlDecoderCreate)(memory_manager);
}

WI_HIDDEN void JxlDecoderDestroy(JxlDecoder *dec) {
    WI_LAZY(JxlDecoderDestroy)(dec);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderFlushImage(JxlDecoder *dec) {
    return WI_LAZY(JxlDecoderFlushImage)(dec);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderGetBasicInfo(const JxlDecoder *dec, JxlBasicInfo *info) {
    return WI_LAZY(JxlDecoderGetBasicInfo)(dec, info);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderGetColorAsEncodedProfile(const JxlDecoder *dec,
                                                              const JxlPixelFormat *unused_format,
                                                              JxlColorProfileTarget target,
                                                              JxlColorEncoding *color_encoding) {
    return WI_LAZY(JxlDecoderGetColorAsEncodedProfile)(dec, unused_format, target, color_encoding);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderGetColorAsICCProfile(const JxlDecoder *dec,
                                                          const JxlPixelFormat *unused_format,
                                                          JxlColorProfileTarget target,
                                                          uint8_t *icc_profile, size_t size) {
    return WI_LAZY(JxlDecoderGetColorAsICCProfile)(dec, unused_format, target, icc_profile, size);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderGetFrameHeader(const JxlDecoder *dec, JxlFrameHeader *header) {
    return WI_LAZY(JxlDecoderGetFrameHeader)(dec, header);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderGetICCProfileSize(const JxlDecoder *dec,
                                                       const JxlPixelFormat *unused_format,
                                                       JxlColorProfileTarget target, size_t *size) {
    return WI_LAZY(JxlDecoderGetICCProfileSize)(dec, unused_format, target, size);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderImageOutBufferSize(const JxlDecoder *dec,
                                                        const JxlPixelFormat *format,
                                                        size_t *size) {
    return WI_LAZY(JxlDecoderImageOutBufferSize)(dec, format, size);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderProcessInput(JxlDecoder *dec) {
    return WI_LAZY(JxlDecoderProcessInput)(dec);
}

WI_HIDDEN size_t JxlDecoderReleaseInput(JxlDecoder *dec) {
    return WI_LAZY(JxlDecoderReleaseInput)(dec);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderSetCoalescing(JxlDecoder *dec, int coalescing) {
    return WI_LAZY(JxlDecoderSetCoalescing)(dec, coalescing);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderSetImageOutBuffer(JxlDecoder *dec,
                                                       const JxlPixelFormat *format, void *buffer,
                                                       size_t size) {
    return WI_LAZY(JxlDecoderSetImageOutBuffer)(dec, format, buffer, size);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderSetInput(JxlDecoder *dec, const uint8_t *data, size_t size) {
    return WI_LAZY(JxlDecoderSetInput)(dec, data, size);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderSetKeepOrientation(JxlDecoder *dec, int skip_reorientation) {
    return WI_LAZY(JxlDecoderSetKeepOrientation)(dec, skip_reorientation);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderSetUnpremultiplyAlpha(JxlDecoder *dec, int unpremul_alpha) {
    return WI_LAZY(JxlDecoderSetUnpremultiplyAlpha)(dec, unpremul_alpha);
}

WI_HIDDEN JxlDecoderStatus JxlDecoderSubscribeEvents(JxlDecoder *dec, int events_wanted) {
    return WI_LAZY(JxlDecoderSubscribeEvents)(dec, events_wanted);
}

WI_HIDDEN uint32_t JxlDecoderVersion(void) {
    return WI_LAZY(JxlDecoderVersion)();
}

WI_HIDDEN JxlEncoderStatus JxlEncoderAddImageFrame(const JxlEncoderFrameSettings *frame_settings,
                                                   const JxlPixelFormat *pixel_format,
                                                   const void *buffer, size_t size) {
    return WI_LAZY(JxlEncoderAddImageFrame)(frame_settings, pixel_format, buffer, size);
}

WI_HIDDEN void JxlEncoderCloseInput(JxlEncoder *enc) {
    WI_LAZY(JxlEncoderCloseInput)(enc);
}

WI_HIDDEN JxlEncoder *JxlEncoderCreate(const JxlMemoryManager *memory_manager) {
    return WI_LAZY(JxlEncoderCreate)(memory_manager);
}

WI_HIDDEN void JxlEncoderDestroy(JxlEncoder *enc) {
    WI_LAZY(JxlEncoderDestroy)(enc);
}

WI_HIDDEN JxlEncoderFrameSettings *JxlEncoderFrameSettingsCreate(JxlEncoder *enc,
                                                                 const JxlEncoderFrameSettings *source) {
    return WI_LAZY(JxlEncoderFrameSettingsCreate)(enc, source);
}

WI_HIDDEN JxlEncoderStatus JxlEncoderFrameSettingsSetOption(JxlEncoderFrameSettings *frame_settings,
                                                            JxlEncoderFrameSettingId option,
                                                            int64_t value) {
    return WI_LAZY(JxlEncoderFrameSettingsSetOption)(frame_settings, option, value);
}

WI_HIDDEN void JxlEncoderInitBasicInfo(JxlBasicInfo *info) {
    WI_LAZY(JxlEncoderInitBasicInfo)(info);
}

WI_HIDDEN void JxlEncoderInitFrameHeader(JxlFrameHeader *frame_header) {
    WI_LAZY(JxlEncoderInitFrameHeader)(frame_header);
}

WI_HIDDEN JxlEncoderStatus JxlEncoderProcessOutput(JxlEncoder *enc, uint8_t **next_out,
                                                   size_t *avail_out) {
    return WI_LAZY(JxlEncoderProcessOutput)(enc, next_out, avail_out);
}

WI_HIDDEN JxlEncoderStatus JxlEncoderSetBasicInfo(JxlEncoder *enc, const JxlBasicInfo *info) {
    return WI_LAZY(JxlEncoderSetBasicInfo)(enc, info);
}

WI_HIDDEN JxlEncoderStatus JxlEncoderSetColorEncoding(JxlEncoder *enc,
                                                      const JxlColorEncoding *color) {
    return WI_LAZY(JxlEncoderSetColorEncoding)(enc, color);
}

WI_HIDDEN JxlEncoderStatus JxlEncoderSetFrameDistance(JxlEncoderFrameSettings *frame_settings,
                                                      float distance) {
    return WI_LAZY(JxlEncoderSetFrameDistance)(frame_settings, distance);
}

WI_HIDDEN JxlEncoderStatus JxlEncoderSetFrameHeader(JxlEncoderFrameSettings *frame_settings,
                                                    const JxlFrameHeader *frame_header) {
    return WI_LAZY(JxlEncoderSetFrameHeader)(frame_settings, frame_header);
}

WI_HIDDEN JxlEncoderStatus JxlEncoderSetFrameLossless(JxlEncoderFrameSettings *frame_settings,
                                                      int lossless) {
    return WI_LAZY(JxlEncoderSetFrameLossless)(frame_settings, lossless);
}

WI_HIDDEN JxlEncoderStatus JxlEncoderSetICCProfile(JxlEncoder *enc, const uint8_t *icc_profile,
                                                   size_t size) {
    return WI_LAZY(JxlEncoderSetICCProfile)(enc, icc_profile, size);
}
