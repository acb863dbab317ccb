// libavif 0.11 (Debian 12), loaded when first used: see include/wi_lazy_libraries.h. Every libavif
// function the Swift code in Sources/WebImageCodecs calls is defined here, hidden, under its own
// name and with its header's prototype, and forwards to the library's function.
#include "wi_lazy_libraries.h"
#include "wi_lazy_load.h"

// AVIF_API is empty unless AVIF_DLL is defined (it is not): the definitions below stay hidden.
#include <avif/avif.h>

enum { WI_AVIF, WI_AVIF_LIBRARIES };

/// The soname (Debian's libavif15).
static const char *const wi_avif_sonames[WI_AVIF_LIBRARIES] = {
    [WI_AVIF] = "libavif.so.15",
};

/// Every function forwarded.
#define WI_AVIF_FUNCTIONS(X)                        \
    X(WI_AVIF, avifCodecVersions)                   \
    X(WI_AVIF, avifCropRectConvertCleanApertureBox) \
    X(WI_AVIF, avifDecoderCreate)                   \
    X(WI_AVIF, avifDecoderDecodedRowCount)          \
    X(WI_AVIF, avifDecoderDestroy)                  \
    X(WI_AVIF, avifDecoderNextImage)                \
    X(WI_AVIF, avifDecoderParse)                    \
    X(WI_AVIF, avifDecoderReset)                    \
    X(WI_AVIF, avifDecoderSetIO)                    \
    X(WI_AVIF, avifDecoderSetIOMemory)              \
    X(WI_AVIF, avifEncoderAddImage)                 \
    X(WI_AVIF, avifEncoderCreate)                   \
    X(WI_AVIF, avifEncoderDestroy)                  \
    X(WI_AVIF, avifEncoderFinish)                   \
    X(WI_AVIF, avifImageAllocatePlanes)             \
    X(WI_AVIF, avifImageCreate)                     \
    X(WI_AVIF, avifImageDestroy)                    \
    X(WI_AVIF, avifImageRGBToYUV)                   \
    X(WI_AVIF, avifImageSetProfileICC)              \
    X(WI_AVIF, avifImageYUVToRGB)                   \
    X(WI_AVIF, avifRGBImageSetDefaults)             \
    X(WI_AVIF, avifRWDataFree)                      \
    X(WI_AVIF, avifResultToString)                  \
    X(WI_AVIF, avifVersion)

WI_LAZY_DEFINE(avif, "libavif", wi_avif_sonames, WI_AVIF_FUNCTIONS)

WI_HIDDEN void avifCodecVersions(char *outBuffer) {
    WI_LAZY(avifCodecVersions)(outBuffer);
}

WI_HIDDEN avifBool avifCropRectConvertCleanApertureBox(avifCropRect *cropRect,
                                                       const avifCleanApertureBox *clap,
                                                       uint32_t imageW, uint32_t imageH,
                                                       avifPixelFormat yuvFormat,
                                                       avifDiagnostics *diag) {
    return WI_LAZY(avifCropRectConvertCleanApertureBox)(cropRect, clap, imageW, imageH, yuvFormat,
                                                        diag);
}

WI_HIDDEN avifDecoder *avifDecoderCreate(void) {
    return WI_LAZY(avifDecoderCreate)();
}

WI_HIDDEN uint32_t avifDecoderDecodedRowCount(const avifDecoder *decoder) {
    return WI_LAZY(avifDecoderDecodedRowCount)(decoder);
}

WI_HIDDEN void avifDecoderDestroy(avifDecoder *decoder) {
    WI_LAZY(avifDecoderDestroy)(decoder);
}

WI_HIDDEN avifResult avifDecoderNextImage(avifDecoder *decoder) {
    return WI_LAZY(avifDecoderNextImage)(decoder);
}

WI_HIDDEN avifResult avifDecoderParse(avifDecoder *decoder) {
    return WI_LAZY(avifDecoderParse)(decoder);
}

WI_HIDDEN avifResult avifDecoderReset(avifDecoder *decoder) {
    return WI_LAZY(avifDecoderReset)(decoder);
}

WI_HIDDEN void avifDecoderSetIO(avifDecoder *decoder, avifIO *io) {
    WI_LAZY(avifDecoderSetIO)(decoder, io);
}

WI_HIDDEN avifResult avifDecoderSetIOMemory(avifDecoder *decoder, const uint8_t *data,
                                            size_t size) {
    return WI_LAZY(avifDecoderSetIOMemory)(decoder, data, size);
}

WI_HIDDEN avifResult avifEncoderAddImage(avifEncoder *encoder, const avifImage *image,
                                         uint64_t durationInTimescales,
                                         avifAddImageFlags addImageFlags) {
    return WI_LAZY(avifEncoderAddImage)(encoder, image, durationInTimescales, addImageFlags);
}

WI_HIDDEN avifEncoder *avifEncoderCreate(void) {
    return WI_LAZY(avifEncoderCreate)();
}

WI_HIDDEN void avifEncoderDestroy(avifEncoder *encoder) {
    WI_LAZY(avifEncoderDestroy)(encoder);
}

WI_HIDDEN avifResult avifEncoderFinish(avifEncoder *encoder, avifRWData *output) {
    return WI_LAZY(avifEncoderFinish)(encoder, output);
}

WI_HIDDEN avifResult avifImageAllocatePlanes(avifImage *image, avifPlanesFlags planes) {
    return WI_LAZY(avifImageAllocatePlanes)(image, planes);
}

WI_HIDDEN avifImage *avifImageCreate(uint32_t width, uint32_t height, uint32_t depth,
                                     avifPixelFormat yuvFormat) {
    return WI_LAZY(avifImageCreate)(width, height, depth, yuvFormat);
}

WI_HIDDEN void avifImageDestroy(avifImage *image) {
    WI_LAZY(avifImageDestroy)(image);
}

WI_HIDDEN avifResult avifImageRGBToYUV(avifImage *image, const avifRGBImage *rgb) {
    return WI_LAZY(avifImageRGBToYUV)(image, rgb);
}

WI_HIDDEN void avifImageSetProfileICC(avifImage *image, const uint8_t *icc, size_t iccSize) {
    WI_LAZY(avifImageSetProfileICC)(image, icc, iccSize);
}

WI_HIDDEN avifResult avifImageYUVToRGB(const avifImage *image, avifRGBImage *rgb) {
    return WI_LAZY(avifImageYUVToRGB)(image, rgb);
}

WI_HIDDEN void avifRGBImageSetDefaults(avifRGBImage *rgb, const avifImage *image) {
    WI_LAZY(avifRGBImageSetDefaults)(rgb, image);
}

WI_HIDDEN void avifRWDataFree(avifRWData *raw) {
    WI_LAZY(avifRWDataFree)(raw);
}

WI_HIDDEN const char *avifResultToString(avifResult result) {
    return WI_LAZY(avifResultToString)(result);
}

WI_HIDDEN const char *avifVersion(void) {
    return WI_LAZY(avifVersion)();
}
