#ifndef WI_WEBP_H
#define WI_WEBP_H
// webp helpers owned by the webp coder (see CCodecShims.h).
// Empty on purpose: Swift imports libwebp's static inline initialisers (WebPInitDecoderConfig,
// WebPGetFeatures, WebPDemux, WebPAnimDecoderNew, WebPConfigPreset, WebPPictureInit,
// WebPMuxCreate, …) and its ABI-version macros directly, so the WebP coder needs no C.
#endif
