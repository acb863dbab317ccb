#ifndef WI_WEBP_H
#define WI_WEBP_H
// webp helpers owned by the webp coder (see CCodecShims.h). Swift imports libwebp's static
// inline initialisers (WebPInitDecoderConfig, WebPConfigPreset, WebPPictureInit, …) and its
// ABI-version macros directly; the C here is for speed (wi_webp.c).

#include <stddef.h>
#include <stdint.h>
#include <webp/encode.h>

/// Fills `picture` (its width and height set) with the YUV 4:2:0 planes of `rgba`, 8-bit RGBA
/// rows `stride` bytes apart, when every pixel is opaque: returns 1. Returns 0, allocating
/// nothing, when a pixel is not opaque (libwebp's WebPPictureImportRGBA then keeps the alpha),
/// and -1 when the planes cannot be allocated (the picture's error_code says why).
int wi_webp_import_opaque_rgba(WebPPicture *picture, const uint8_t *rgba, size_t stride);

/// The conversion wi_webp_import_opaque_rgba makes (alpha ignored): `y` gets `height` rows of
/// `width` bytes, `u` and `v` each `(height + 1) / 2` rows of `(width + 1) / 2`.
void wi_webp_rgba_to_yuv420(const uint8_t *rgba, size_t stride, int width, int height,
                            uint8_t *y, int yStride, uint8_t *u, uint8_t *v, int uvStride);

#endif
