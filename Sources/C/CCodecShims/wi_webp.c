// Opaque RGBA to the YUV 4:2:0 planes libwebp's lossy encoder takes (VP8's colour space:
// ITU-R BT.601 with luma in 16-235 and chroma in 16-240), for wi_webp_import_opaque_rgba. libwebp
// converts RGBA itself, but Debian's libwebp 1.2 does luma with a scalar loop for 4-byte pixels
// and averages chroma through gamma tables, 7.7 ms of a 2560 × 1600 photo's 245 ms encode; this
// is SSE2 throughout and takes 2.1 ms, allocation included. Plain averaging of the chroma, as
// JPEG encoders do, changes the encoded photo by 0.02 dB PSNR.
//
// Fixed point with 15 fractional bits (so every coefficient fits pmaddwd's signed 16 bits):
//   Y = (8421 R + 16530 G + 3208 B) / 2^15 + 16
//   U = (-4860 R - 9540 G + 14400 B) / 2^15 + 128,  V = (14400 R - 12059 G - 2341 B) / 2^15 + 128
// the BT.601 studio-swing matrix (0.2570, 0.5045, 0.0979 / -0.1483, -0.2911, 0.4394 /
// 0.4394, -0.3680, -0.0714) times 2^15, rounded. Chroma is taken from the mean of each 2 × 2
// block (the sum of four pixels, hence a further shift of 2), the last column or row repeated
// when a side is odd. Every result is rounded to nearest.
//
// Why not libyuv's ABGRToI420 (linked for AVIF, 2.4 times as fast): its x86 chroma is biased one
// level low on half the bytes, which costs the encoded photo 0.1-0.6 dB PSNR where libwebp's own
// conversion is within 0.1 dB of this one. docs/benchmarks.md, "RGBA to YUV for the WebP
// encoder: why not libyuv"; `make bench-yuv` (Benchmarks/rgba-to-yuv) measures it again.

#include <stdint.h>
#include <stddef.h>
#include "wi_webp.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { KR = 8421, KG = 16530, KB = 3208, UR = -4860, UG = -9540, UB = 14400, VR = 14400, VG = -12059, VB = -2341 };

static inline uint8_t wi_clamp8(int v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

static inline uint8_t wi_luma(int r, int g, int b) {
    return (uint8_t)((KR * r + KG * g + KB * b + (16 << 15) + (1 << 14)) >> 15);
}

// r, g, b: sums of four pixels.
static inline uint8_t wi_chroma(int cr, int cg, int cb, int r, int g, int b) {
    return wi_clamp8((cr * r + cg * g + cb * b + (128 << 17) + (1 << 16)) >> 17);
}

static void wi_luma_row(const uint8_t *rgba, uint8_t *y, int width) {
    int x = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i k = _mm_setr_epi16(KR, KG, KB, 0, KR, KG, KB, 0);
    const __m128i offset = _mm_set1_epi32((16 << 15) + (1 << 14));
    for (; x + 16 <= width; x += 16) {
        __m128i sums[4];
        for (int i = 0; i < 4; i++) {
            // Four pixels: the products of two, then of the other two, as 32-bit pairs.
            const __m128i pixels = _mm_loadu_si128((const __m128i *)(rgba + 4 * (x + 4 * i)));
            __m128i lo = _mm_madd_epi16(_mm_unpacklo_epi8(pixels, zero), k);   // r0kr+g0kg, b0kb, r1.., b1..
            __m128i hi = _mm_madd_epi16(_mm_unpackhi_epi8(pixels, zero), k);
            lo = _mm_add_epi32(lo, _mm_shuffle_epi32(lo, _MM_SHUFFLE(2, 3, 0, 1)));      // sums in lanes 0, 2
            hi = _mm_add_epi32(hi, _mm_shuffle_epi32(hi, _MM_SHUFFLE(2, 3, 0, 1)));
            __m128i four = _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(lo), _mm_castsi128_ps(hi), _MM_SHUFFLE(2, 0, 2, 0)));
            sums[i] = _mm_srai_epi32(_mm_add_epi32(four, offset), 15);
        }
        const __m128i words = _mm_packs_epi32(sums[0], sums[1]), words2 = _mm_packs_epi32(sums[2], sums[3]);
        _mm_storeu_si128((__m128i *)(y + x), _mm_packus_epi16(words, words2));
    }
#endif
    for (; x < width; x++) y[x] = wi_luma(rgba[4 * x], rgba[4 * x + 1], rgba[4 * x + 2]);
}

// Chroma of one row of 2 × 2 blocks from rows `top` and `bottom` (the same row when the image
// ends on an odd row).
static void wi_chroma_row(const uint8_t *top, const uint8_t *bottom, uint8_t *u, uint8_t *v, int width) {
    const int blocks = (width + 1) / 2;
    int b = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i ku = _mm_setr_epi16(UR, UG, UB, 0, UR, UG, UB, 0);
    const __m128i kv = _mm_setr_epi16(VR, VG, VB, 0, VR, VG, VB, 0);
    const __m128i offset = _mm_set1_epi32((128 << 17) + (1 << 16));
    // Eight blocks (16 pixels of each row) an iteration, whole blocks only.
    for (; 2 * b + 16 <= width; b += 8) {
        __m128i us[2], vs[2];
        for (int half = 0; half < 2; half++) {
            __m128i blockSums[2];
            for (int i = 0; i < 2; i++) {
                const int pixel = 2 * b + 8 * half + 4 * i;
                const __m128i t = _mm_loadu_si128((const __m128i *)(top + 4 * pixel));
                const __m128i d = _mm_loadu_si128((const __m128i *)(bottom + 4 * pixel));
                // Vertical pairs added as 16-bit: pixels p, p+1 in lo, p+2, p+3 in hi.
                const __m128i lo = _mm_add_epi16(_mm_unpacklo_epi8(t, zero), _mm_unpacklo_epi8(d, zero));
                const __m128i hi = _mm_add_epi16(_mm_unpackhi_epi8(t, zero), _mm_unpackhi_epi8(d, zero));
                // Horizontal pairs: lanes 0-3 of each now hold R4 G4 B4 A4 of one block.
                const __m128i blockA = _mm_add_epi16(lo, _mm_srli_si128(lo, 8));
                const __m128i blockB = _mm_add_epi16(hi, _mm_srli_si128(hi, 8));
                blockSums[i] = _mm_unpacklo_epi64(blockA, blockB);   // two blocks
            }
            // Four blocks: per block, two 32-bit partial sums; add the pairs, keep lanes 0, 2.
            __m128i uA = _mm_madd_epi16(blockSums[0], ku), uB = _mm_madd_epi16(blockSums[1], ku);
            __m128i vA = _mm_madd_epi16(blockSums[0], kv), vB = _mm_madd_epi16(blockSums[1], kv);
            uA = _mm_add_epi32(uA, _mm_shuffle_epi32(uA, _MM_SHUFFLE(2, 3, 0, 1)));
            uB = _mm_add_epi32(uB, _mm_shuffle_epi32(uB, _MM_SHUFFLE(2, 3, 0, 1)));
            vA = _mm_add_epi32(vA, _mm_shuffle_epi32(vA, _MM_SHUFFLE(2, 3, 0, 1)));
            vB = _mm_add_epi32(vB, _mm_shuffle_epi32(vB, _MM_SHUFFLE(2, 3, 0, 1)));
            us[half] = _mm_srai_epi32(_mm_add_epi32(_mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(uA), _mm_castsi128_ps(uB), _MM_SHUFFLE(2, 0, 2, 0))), offset), 17);
            vs[half] = _mm_srai_epi32(_mm_add_epi32(_mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(vA), _mm_castsi128_ps(vB), _MM_SHUFFLE(2, 0, 2, 0))), offset), 17);
        }
        const __m128i uWords = _mm_packs_epi32(us[0], us[1]), vWords = _mm_packs_epi32(vs[0], vs[1]);
        _mm_storel_epi64((__m128i *)(u + b), _mm_packus_epi16(uWords, uWords));
        _mm_storel_epi64((__m128i *)(v + b), _mm_packus_epi16(vWords, vWords));
    }
#endif
    for (; b < blocks; b++) {
        const int x0 = 2 * b, x1 = 2 * b + 1 < width ? 2 * b + 1 : 2 * b;
        const int r = top[4 * x0] + top[4 * x1] + bottom[4 * x0] + bottom[4 * x1];
        const int g = top[4 * x0 + 1] + top[4 * x1 + 1] + bottom[4 * x0 + 1] + bottom[4 * x1 + 1];
        const int bl = top[4 * x0 + 2] + top[4 * x1 + 2] + bottom[4 * x0 + 2] + bottom[4 * x1 + 2];
        u[b] = wi_chroma(UR, UG, UB, r, g, bl);
        v[b] = wi_chroma(VR, VG, VB, r, g, bl);
    }
}

void wi_webp_rgba_to_yuv420(const uint8_t *rgba, size_t stride, int width, int height,
                            uint8_t *y, int yStride, uint8_t *u, uint8_t *v, int uvStride) {
    for (int row = 0; row < height; row++) {
        wi_luma_row(rgba + (size_t)row * stride, y + (size_t)row * yStride, width);
    }
    for (int row = 0; 2 * row < height; row++) {
        const uint8_t *top = rgba + (size_t)(2 * row) * stride;
        const uint8_t *bottom = 2 * row + 1 < height ? top + stride : top;
        wi_chroma_row(top, bottom, u + (size_t)row * uvStride, v + (size_t)row * uvStride, width);
    }
}

// Whether every alpha byte of the rows is 255.
static int wi_rgba_is_opaque(const uint8_t *rgba, size_t stride, int width, int height) {
    for (int row = 0; row < height; row++) {
        const uint8_t *p = rgba + (size_t)row * stride;
        int x = 0;
#if defined(__SSE2__)
        // Colour bytes forced to 255: the 16 bytes are all 255 exactly when the 4 alphas are.
        const __m128i colours = _mm_set1_epi32(0x00ffffff), ones = _mm_set1_epi32(-1);
        __m128i all = ones;
        for (; x + 4 <= width; x += 4) {
            all = _mm_and_si128(all, _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + 4 * x)), colours));
        }
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(all, ones)) != 0xffff) return 0;
#endif
        for (; x < width; x++) {
            if (p[4 * x + 3] != 255) return 0;
        }
    }
    return 1;
}

int wi_webp_import_opaque_rgba(WebPPicture *picture, const uint8_t *rgba, size_t stride) {
    if (!wi_rgba_is_opaque(rgba, stride, picture->width, picture->height)) return 0;
    picture->use_argb = 0;
    picture->colorspace = WEBP_YUV420;
    if (!WebPPictureAlloc(picture)) {
        // libwebp 1.2 leaves the error code at VP8_ENC_OK when its allocation fails.
        if (picture->error_code == VP8_ENC_OK) picture->error_code = VP8_ENC_ERROR_OUT_OF_MEMORY;
        return -1;
    }
    wi_webp_rgba_to_yuv420(rgba, stride, picture->width, picture->height,
                           picture->y, picture->y_stride, picture->u, picture->v, picture->uv_stride);
    return 1;
}
