// The PNG thumbnail path: inflate the image data with libdeflate (about three times zlib's
// speed on photos), undo the scanline filters row by row, and average blocks of pixels as the
// rows go by, so the only RGBA bitmap made is the reduced one. See wi_png.h.
//
// Written from the PNG specification (ISO/IEC 15948, sections 9 "Filtering" and 11 "Chunk
// specifications"); the behaviour at the edges (palette indices past the palette, an invalid
// tRNS) follows what libpng does, so both paths give the same pixels.

#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include "wi_png.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

static uint32_t wi_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static wi_png_status wi_reduce_fail(wi_png_reduce_job *job, wi_png_status status, const char *message) {
    strncpy(job->message, message, sizeof(job->message) - 1);
    job->message[sizeof(job->message) - 1] = '\0';
    return status;
}

// MARK: - Chunks

/// What the chunk walk finds: the image data (one zlib stream, possibly split over many IDAT
/// chunks) and the palette and transparency that describe it.
typedef struct {
    /// The palette expanded to RGBA: entries past PLTE's are opaque black, as in libpng.
    uint8_t palette[256][4];
    int has_palette;
    /// tRNS for grey (one sample) or RGB (three samples), already masked to the bit depth.
    int has_key;
    uint16_t key[3];
    int has_palette_alpha;
    /// The IDAT payloads, in order.
    const uint8_t **idat;
    size_t *idat_size;
    size_t idat_count;
    size_t idat_total;
} wi_png_chunks;

static wi_png_status wi_walk_chunks(wi_png_reduce_job *job, wi_png_chunks *chunks) {
    const uint8_t *data = job->data;
    size_t size = job->size, offset = 33, capacity = 0;
    int seen_idat = 0;
    for (int i = 0; i < 256; i++) {
        chunks->palette[i][0] = chunks->palette[i][1] = chunks->palette[i][2] = 0;
        chunks->palette[i][3] = 255;
    }
    // A file that ends inside a chunk or without IEND keeps what came before it; whether that
    // is enough image data is for the inflate to say.
    while (size >= 12 && offset <= size - 12) {
        uint32_t length = wi_be32(data + offset);
        uint32_t type = wi_be32(data + offset + 4);
        if (length > 0x7fffffffu) return wi_reduce_fail(job, WI_PNG_CORRUPT, "a chunk length is impossible");
        if ((size_t)length > size - 12 - offset) break;
        const uint8_t *payload = data + offset + 8;
        uint32_t crc = wi_be32(payload + length);
        int critical_or_used = type == 0x49444154u || type == 0x504C5445u || type == 0x74524E53u;
        if (critical_or_used && (uint32_t)libdeflate_crc32(0, data + offset + 4, (size_t)length + 4) != crc) {
            return wi_reduce_fail(job, WI_PNG_CORRUPT, "a chunk's CRC does not match its bytes");
        }
        if (type == 0x49444154u) {  // IDAT
            if (chunks->idat_count == capacity) {
                size_t grown = capacity == 0 ? 16 : capacity * 2;
                const uint8_t **parts = (const uint8_t **)realloc((void *)chunks->idat, grown * sizeof(*parts));
                if (parts == NULL) return wi_reduce_fail(job, WI_PNG_NO_MEMORY, "out of memory for the chunk list");
                chunks->idat = parts;
                size_t *sizes = (size_t *)realloc(chunks->idat_size, grown * sizeof(*sizes));
                if (sizes == NULL) return wi_reduce_fail(job, WI_PNG_NO_MEMORY, "out of memory for the chunk list");
                chunks->idat_size = sizes;
                capacity = grown;
            }
            chunks->idat[chunks->idat_count] = payload;
            chunks->idat_size[chunks->idat_count] = length;
            chunks->idat_count += 1;
            chunks->idat_total += length;
            seen_idat = 1;
        } else if (type == 0x49454E44u) {  // IEND
            break;
        } else if (type == 0x504C5445u && !seen_idat && !chunks->has_palette) {  // PLTE
            if (length % 3 != 0 || length / 3 > 256 || length == 0) {
                return wi_reduce_fail(job, WI_PNG_CORRUPT, "PLTE has an invalid length");
            }
            for (uint32_t i = 0; i < length / 3; i++) {
                chunks->palette[i][0] = payload[3 * i];
                chunks->palette[i][1] = payload[3 * i + 1];
                chunks->palette[i][2] = payload[3 * i + 2];
            }
            chunks->has_palette = (int)(length / 3);
        } else if (type == 0x74524E53u && !seen_idat) {  // tRNS
            // libpng ignores a tRNS of the wrong length (a benign error); so does this.
            uint8_t depth = job->bit_depth;
            uint16_t mask = (uint16_t)((1u << depth) - 1);
            if (job->color_type == 0 && length == 2) {
                chunks->has_key = 1;
                chunks->key[0] = (uint16_t)(((payload[0] << 8) | payload[1]) & mask);
            } else if (job->color_type == 2 && length == 6) {
                chunks->has_key = 1;
                for (int c = 0; c < 3; c++) chunks->key[c] = (uint16_t)(((payload[2 * c] << 8) | payload[2 * c + 1]) & mask);
            } else if (job->color_type == 3 && chunks->has_palette && length > 0 && (int)length <= chunks->has_palette) {
                chunks->has_palette_alpha = 1;
                for (uint32_t i = 0; i < length; i++) chunks->palette[i][3] = payload[i];
            }
        }
        offset += (size_t)length + 12;
    }
    if (chunks->idat_count == 0) return wi_reduce_fail(job, WI_PNG_CORRUPT, "there is no image data");
    if (job->color_type == 3 && !chunks->has_palette) return wi_reduce_fail(job, WI_PNG_CORRUPT, "a palette image has no PLTE");
    return WI_PNG_OK;
}

// MARK: - Filters

/// The Paeth predictor of left `a`, above `b` and upper-left `c`. The specification picks
/// whichever of a, b, c is nearest to p = a + b - c (ties: a, then b). Written with lo/hi the
/// smaller/larger of a and b, that choice is: lo when 3c >= 2hi + lo, else hi when
/// 3c <= hi + 2lo, else c. The two agree on all 2^24 inputs (checked by the tests through
/// PNGs using every filter), and this form has no data-dependent branches and a shorter
/// dependency on `a`, which chains from pixel to pixel.
static inline uint8_t wi_paeth(int a, int b, int c) {
    int lo = a < b ? a : b, hi = a < b ? b : a, three_c = 3 * c;
    return (uint8_t)(three_c >= 2 * hi + lo ? lo : three_c <= hi + 2 * lo ? hi : c);
}

#if defined(__SSE2__)
static inline __m128i wi_load_pixel(const uint8_t *p) {
    uint32_t word;
    memcpy(&word, p, 4);
    return _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)word), _mm_setzero_si128());
}

/// The Paeth predictor as in wi_paeth, in its compare-with-3c form, for 16-bit lanes.
static inline __m128i wi_paeth_sse2(__m128i a, __m128i b, __m128i c) {
    __m128i lo = _mm_min_epi16(a, b), hi = _mm_max_epi16(a, b);
    __m128i sum = _mm_add_epi16(lo, hi);
    __m128i three_c = _mm_add_epi16(_mm_add_epi16(c, c), c);
    __m128i above_hi = _mm_cmpgt_epi16(three_c, _mm_add_epi16(sum, lo));   // 3c > hi + 2lo
    __m128i below_lo = _mm_cmpgt_epi16(_mm_add_epi16(sum, hi), three_c);   // 3c < 2hi + lo
    __m128i inner = _mm_xor_si128(hi, _mm_and_si128(_mm_xor_si128(c, hi), above_hi));
    return _mm_xor_si128(lo, _mm_and_si128(_mm_xor_si128(inner, lo), below_lo));
}

/// Paeth for 3- and 4-byte pixels, one pixel at a time in 16-bit lanes (the pixels depend on
/// each other left to right, their channels do not). Each step loads and stores four bytes;
/// for 3-byte pixels the fourth lane's predictor is zero, so the byte after the pixel is
/// written back unchanged, and the next pixel is loaded before this one is stored. The last
/// pixel of a 3-byte row, where four bytes would run past the row, is done in scalar code.
static void wi_unpaeth_sse2(uint8_t *cur, const uint8_t *prev, size_t rowbytes, size_t bpp) {
    const __m128i zero = _mm_setzero_si128();
    const __m128i lanes = bpp == 4 ? _mm_set1_epi16(-1) : _mm_set_epi16(0, 0, 0, 0, 0, -1, -1, -1);
    __m128i a = zero, c = zero;
    size_t x = 0;
    if (rowbytes < 4) goto scalar;
    __m128i d = wi_load_pixel(cur);
    while (x + 4 <= rowbytes) {
        __m128i b = wi_load_pixel(prev + x);
        __m128i predictor = wi_paeth_sse2(a, b, c);
        d = _mm_and_si128(_mm_add_epi16(d, _mm_and_si128(predictor, lanes)), _mm_set1_epi16(0xff));
        __m128i next = x + bpp + 4 <= rowbytes ? wi_load_pixel(cur + x + bpp) : zero;
        uint32_t word = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(d, d));
        memcpy(cur + x, &word, 4);
        a = d;
        c = b;
        x += bpp;
        d = next;
    }
scalar:
    for (; x < rowbytes; x++) {
        int left = x >= bpp ? cur[x - bpp] : 0, corner = x >= bpp ? prev[x - bpp] : 0;
        cur[x] = (uint8_t)(cur[x] + wi_paeth(left, prev[x], corner));
    }
}

/// The bytes of the pixel at byte `x` of a row of `rowbytes`: four, or only the pixel's three
/// at the very end of a 3-byte row, so nothing past the row is read.
static inline __m128i wi_load_pixel_in(const uint8_t *row, size_t x, size_t rowbytes) {
    uint32_t word;
    if (x + 4 <= rowbytes) memcpy(&word, row + x, 4);
    else word = (uint32_t)row[x] | (uint32_t)row[x + 1] << 8 | (uint32_t)row[x + 2] << 16;
    return _mm_cvtsi32_si128((int)word);
}

static inline void wi_store_pixel_in(uint8_t *row, size_t x, size_t rowbytes, uint32_t word) {
    if (x + 4 <= rowbytes) {
        memcpy(row + x, &word, 4);
    } else {
        row[x] = (uint8_t)word;
        row[x + 1] = (uint8_t)(word >> 8);
        row[x + 2] = (uint8_t)(word >> 16);
    }
}

/// Paeth on two consecutive rows at once, both Paeth-filtered, 3- or 4-byte pixels. Each row's
/// pixels form a chain (each needs its left neighbour), so one row alone waits on that chain;
/// the second row only needs the pixel of the first above and above-left of it, so it runs one
/// pixel behind in the upper half of the same registers and the two chains overlap. Step k
/// makes pixel k of `row0` (low half: a = row0[k-1], b = prev[k], c = prev[k-1]) and pixel
/// k-1 of `row1` (high half: a = row1[k-2], b = row0[k-1], c = row0[k-2]), all of which are in
/// registers from the steps before. Loads and stores are as in wi_unpaeth_sse2.
static void wi_unpaeth2_sse2(uint8_t *row0, uint8_t *row1, const uint8_t *prev, size_t rowbytes, size_t bpp) {
    const __m128i zero = _mm_setzero_si128();
    const __m128i lanes = bpp == 4 ? _mm_set1_epi16(-1) : _mm_set_epi16(0, -1, -1, -1, 0, -1, -1, -1);
    const __m128i low_half = _mm_set_epi32(0, 0, -1, -1);
    const size_t count = rowbytes / bpp;
    // d: this step's result; the two before it, and the previous b.
    __m128i d_before = zero, d_before2 = zero, b_before = zero;
    // Raw (filtered) bytes for step 0: row0's pixel 0, nothing for row1.
    __m128i raw = _mm_unpacklo_epi8(wi_load_pixel_in(row0, 0, rowbytes), zero);
    for (size_t k = 0; k <= count; k++) {
        __m128i above = k < count ? wi_load_pixel_in(prev, k * bpp, rowbytes) : zero;
        __m128i a = d_before;
        __m128i b = _mm_unpacklo_epi64(_mm_unpacklo_epi8(above, zero), d_before);
        __m128i c = _mm_unpacklo_epi64(b_before, d_before2);
        __m128i predictor = _mm_and_si128(wi_paeth_sse2(a, b, c), lanes);
        // The next step's raw bytes, loaded before this step's stores overlap them.
        __m128i next0 = k + 1 < count ? wi_load_pixel_in(row0, (k + 1) * bpp, rowbytes) : zero;
        __m128i next1 = k < count ? wi_load_pixel_in(row1, k * bpp, rowbytes) : zero;
        __m128i next = _mm_unpacklo_epi8(_mm_unpacklo_epi32(next0, next1), zero);
        __m128i d = _mm_add_epi8(raw, predictor);  // lanes' high bytes stay zero
        if (k == 0) d = _mm_and_si128(d, low_half);  // row1 has no pixel -1: its left is zero
        __m128i packed = _mm_packus_epi16(d, d);
        if (k < count) wi_store_pixel_in(row0, k * bpp, rowbytes, (uint32_t)_mm_cvtsi128_si32(packed));
        if (k > 0) wi_store_pixel_in(row1, (k - 1) * bpp, rowbytes, (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(packed, 4)));
        d_before2 = d_before;
        d_before = d;
        b_before = b;
        raw = next;
    }
}
#endif

#if defined(__SSE2__)
/// Sub (filter 1) for 3- and 4-byte pixels, a pixel a step, with the same four-byte loads and
/// stores as wi_unpaeth_sse2 (fourth lane left unchanged for 3-byte pixels, next pixel loaded
/// before this one is stored, last 3-byte pixel in scalar code): the byte-serial scalar loop
/// is 2.5× slower. (Average done the same way measured no faster than the scalar loop.)
static void wi_unsub_sse2(uint8_t *cur, size_t rowbytes, size_t bpp) {
    const __m128i lanes = bpp == 4 ? _mm_set1_epi32(-1) : _mm_set_epi32(0, 0, 0, 0x00ffffff);
    __m128i a = _mm_setzero_si128();
    size_t x = 0;
    if (rowbytes >= 4) {
        uint32_t word;
        memcpy(&word, cur, 4);
        __m128i d = _mm_cvtsi32_si128((int)word);
        while (x + 4 <= rowbytes) {
            d = _mm_add_epi8(d, _mm_and_si128(a, lanes));
            __m128i next = _mm_setzero_si128();
            if (x + bpp + 4 <= rowbytes) {
                memcpy(&word, cur + x + bpp, 4);
                next = _mm_cvtsi32_si128((int)word);
            }
            word = (uint32_t)_mm_cvtsi128_si32(d);
            memcpy(cur + x, &word, 4);
            a = d;
            x += bpp;
            d = next;
        }
    }
    for (x = x < bpp ? bpp : x; x < rowbytes; x++) cur[x] = (uint8_t)(cur[x] + cur[x - bpp]);
}
#endif

/// Undoes one row's filter in place. `prev` is the previous row after unfiltering (zeros for
/// the first row); `bpp` is the filter's byte distance (bytes per pixel, at least 1).
static int wi_unfilter(uint8_t filter, uint8_t *cur, const uint8_t *prev, size_t rowbytes, size_t bpp) {
    size_t i;
    switch (filter) {
    case 0:
        return 1;
    case 1:
#if defined(__SSE2__)
        if (bpp == 3 || bpp == 4) {
            wi_unsub_sse2(cur, rowbytes, bpp);
            return 1;
        }
#endif
        for (i = bpp; i < rowbytes; i++) cur[i] = (uint8_t)(cur[i] + cur[i - bpp]);
        return 1;
    case 2:
        for (i = 0; i < rowbytes; i++) cur[i] = (uint8_t)(cur[i] + prev[i]);
        return 1;
    case 3:
        // Average stays scalar: the compiler's code is as fast as an SSE2 version here.
        for (i = 0; i < bpp && i < rowbytes; i++) cur[i] = (uint8_t)(cur[i] + (prev[i] >> 1));
        for (; i < rowbytes; i++) cur[i] = (uint8_t)(cur[i] + ((cur[i - bpp] + prev[i]) >> 1));
        return 1;
    case 4:
#if defined(__SSE2__)
        if (bpp == 3 || bpp == 4) {
            wi_unpaeth_sse2(cur, prev, rowbytes, bpp);
            return 1;
        }
#endif
        for (i = 0; i < bpp && i < rowbytes; i++) cur[i] = (uint8_t)(cur[i] + prev[i]);
        for (; i < rowbytes; i++) cur[i] = (uint8_t)(cur[i] + wi_paeth(cur[i - bpp], prev[i], prev[i - bpp]));
        return 1;
    default:
        return 0;
    }
}

// MARK: - Pixels

/// Expands one unfiltered row of any colour type at 8 bits or less to RGBA.
static void wi_expand_row(const wi_png_reduce_job *job, const wi_png_chunks *chunks, const uint8_t *row, uint8_t *out) {
    uint32_t width = job->width;
    uint8_t depth = job->bit_depth;
    switch (job->color_type) {
    case 0: {  // grey, 1…8 bits
        unsigned scale = depth == 8 ? 1 : depth == 4 ? 0x11 : depth == 2 ? 0x55 : 0xff;
        unsigned mask = (1u << depth) - 1, per_byte = 8u / depth;
        for (uint32_t x = 0; x < width; x++) {
            unsigned shift = 8 - depth - (x % per_byte) * depth;
            unsigned sample = (row[x / per_byte] >> shift) & mask;
            uint8_t grey = (uint8_t)(sample * scale);
            out[4 * x] = out[4 * x + 1] = out[4 * x + 2] = grey;
            out[4 * x + 3] = (chunks->has_key && sample == chunks->key[0]) ? 0 : 255;
        }
        break;
    }
    case 3: {  // palette, 1…8 bits
        unsigned mask = (1u << depth) - 1, per_byte = 8u / depth;
        for (uint32_t x = 0; x < width; x++) {
            unsigned shift = 8 - depth - (x % per_byte) * depth;
            memcpy(out + 4 * x, chunks->palette[(row[x / per_byte] >> shift) & mask], 4);
        }
        break;
    }
    case 2:  // RGB, 8 bits
        for (uint32_t x = 0; x < width; x++) {
            const uint8_t *p = row + 3 * x;
            out[4 * x] = p[0];
            out[4 * x + 1] = p[1];
            out[4 * x + 2] = p[2];
            out[4 * x + 3] = (chunks->has_key && p[0] == chunks->key[0] && p[1] == chunks->key[1] && p[2] == chunks->key[2]) ? 0 : 255;
        }
        break;
    case 4:  // grey + alpha, 8 bits
        for (uint32_t x = 0; x < width; x++) {
            out[4 * x] = out[4 * x + 1] = out[4 * x + 2] = row[2 * x];
            out[4 * x + 3] = row[2 * x + 1];
        }
        break;
    default:  // RGBA, 8 bits
        memcpy(out, row, (size_t)width * 4);
        break;
    }
}

/// Adds a row of 3- or 4-byte opaque pixels (alpha ignored) to the block sums, `block` pixels
/// per sum; the last block may be narrower.
static void wi_add_opaque(const uint8_t *pixels, size_t bytes_per_pixel, uint32_t width, uint32_t block, uint32_t *sums) {
    uint32_t x = 0;
    while (x < width) {
        uint32_t end = x + block < width ? x + block : width;
        uint32_t r = 0, g = 0, b = 0;
        for (; x < end; x++) {
            const uint8_t *p = pixels + (size_t)x * bytes_per_pixel;
            r += p[0];
            g += p[1];
            b += p[2];
        }
        sums[0] += r;
        sums[1] += g;
        sums[2] += b;
        sums += 4;
    }
}

/// Adds a row of straight-alpha RGBA to the block sums, colours weighted by their alpha
/// (premultiplied), so transparent pixels add nothing to the colour of a block.
static void wi_add_alpha(const uint8_t *pixels, uint32_t width, uint32_t block, uint32_t *sums) {
    uint32_t x = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i keep_colour = _mm_set_epi32(0, -1, -1, -1), alpha_weight = _mm_set_epi32(0x00010001, 0, 0, 0);
#endif
    while (x < width) {
        uint32_t end = x + block < width ? x + block : width;
#if defined(__SSE2__)
        // Two pixels a step, bytes interleaved and widened (r1 r2 g1 g2 b1 b2 a1 a2); the
        // weights are (a1 a2) for the colours and (1 1) for alpha, so one multiply-add gives
        // r1·a1 + r2·a2, g…, b…, a1 + a2 (each product fits 16 bits: 255 · 255).
        __m128i total = zero;
        for (; x + 2 <= end; x += 2) {
            __m128i two = _mm_loadl_epi64((const __m128i *)(const void *)(pixels + (size_t)x * 4));
            __m128i pair = _mm_unpacklo_epi8(_mm_unpacklo_epi8(two, _mm_srli_si128(two, 4)), zero);
            __m128i weights = _mm_or_si128(_mm_and_si128(_mm_shuffle_epi32(pair, 0xFF), keep_colour), alpha_weight);
            total = _mm_add_epi32(total, _mm_madd_epi16(pair, weights));
        }
        uint32_t lanes[4];
        _mm_storeu_si128((__m128i *)lanes, total);
        uint32_t r = lanes[0], g = lanes[1], b = lanes[2], a = lanes[3];
#else
        uint32_t r = 0, g = 0, b = 0, a = 0;
#endif
        for (; x < end; x++) {
            const uint8_t *p = pixels + (size_t)x * 4;
            uint32_t alpha = p[3];
            r += p[0] * alpha;
            g += p[1] * alpha;
            b += p[2] * alpha;
            a += alpha;
        }
        sums[0] += r;
        sums[1] += g;
        sums[2] += b;
        sums[3] += a;
        sums += 4;
    }
}

/// Writes one reduced row: each block's average, rounded, colour un-premultiplied.
static void wi_store_row(const uint32_t *sums, uint32_t out_width, uint32_t width, uint32_t block, uint32_t rows,
                         int alpha, uint8_t *out) {
    for (uint32_t x = 0; x < out_width; x++, sums += 4, out += 4) {
        uint32_t columns = (x + 1) * block <= width ? block : width - x * block;
        uint32_t count = columns * rows;
        if (!alpha) {
            out[0] = (uint8_t)((sums[0] + count / 2) / count);
            out[1] = (uint8_t)((sums[1] + count / 2) / count);
            out[2] = (uint8_t)((sums[2] + count / 2) / count);
            out[3] = 255;
        } else if (sums[3] == 0) {
            out[0] = out[1] = out[2] = out[3] = 0;
        } else {
            uint32_t a = sums[3];
            out[0] = (uint8_t)((sums[0] + a / 2) / a);
            out[1] = (uint8_t)((sums[1] + a / 2) / a);
            out[2] = (uint8_t)((sums[2] + a / 2) / a);
            out[3] = (uint8_t)((a + count / 2) / count);
        }
    }
}

/// Box-reduces an interleaved 8-bit image already in memory (3 bytes a pixel: RGB, opaque; 4:
/// RGBA, straight alpha) into `out` (RGBA, `out_stride` bytes a row), `rx` × `ry` pixels a
/// block, the last ones narrower; with alpha the colours are weighted by it. The same sums and
/// rounding as the PNG decode's reduction, for decoders whose library hands over whole rows
/// (HEIF). 0, or -1 when the sums cannot be allocated. The caller keeps `rx · ry` within 65,536
/// (the 32-bit sums of alpha-weighted colours).
int wi_box_reduce_interleaved(const uint8_t *pixels, size_t stride, uint32_t width, uint32_t height,
                              uint32_t bytes_per_pixel, uint32_t rx, uint32_t ry, uint8_t *out, size_t out_stride) {
    if (rx == 0 || ry == 0 || (bytes_per_pixel != 3 && bytes_per_pixel != 4)) return -1;
    uint32_t out_width = (width + rx - 1) / rx;
    uint32_t *sums = calloc((size_t)out_width * 4, sizeof(uint32_t));
    if (sums == NULL) return -1;
    for (uint32_t top = 0; top < height; top += ry) {
        uint32_t rows = top + ry <= height ? ry : height - top;
        memset(sums, 0, (size_t)out_width * 4 * sizeof(uint32_t));
        for (uint32_t y = top; y < top + rows; y++) {
            const uint8_t *row = pixels + (size_t)y * stride;
            if (bytes_per_pixel == 4) wi_add_alpha(row, width, rx, sums);
            else wi_add_opaque(row, 3, width, rx, sums);
        }
        wi_store_row(sums, out_width, width, rx, rows, bytes_per_pixel == 4, out + (size_t)(top / ry) * out_stride);
    }
    free(sums);
    return 0;
}

// MARK: - The decode

/// The raw scanlines are written once by the inflater and read once: for a large image the
/// cost of first touching fresh pages (a fault and a zeroed 4 KiB page each) is a good part of
/// the decode, so on Linux they are mapped with transparent huge pages asked for, which cuts
/// the faults 512-fold where the kernel allows it (`madvise` mode, the usual default).
static const size_t wi_huge_threshold = (size_t)8 << 20;

static uint8_t *wi_alloc_scanlines(size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= wi_huge_threshold) {
        void *memory = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED) return NULL;
        (void)madvise(memory, size, MADV_HUGEPAGE);
        return (uint8_t *)memory;
    }
#endif
    return (uint8_t *)malloc(size);
}

static void wi_free_scanlines(uint8_t *memory, size_t size) {
    if (memory == NULL) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= wi_huge_threshold) {
        munmap(memory, size);
        return;
    }
#endif
    free(memory);
}

wi_png_status wi_png_decode_reduced(wi_png_reduce_job *job) {
    job->message[0] = '\0';
    const uint32_t width = job->width, height = job->height;
    const uint8_t depth = job->bit_depth, type = job->color_type;
    const uint32_t rx = job->reduce_x, ry = job->reduce_y;
    int channels = type == 0 || type == 3 ? 1 : type == 4 ? 2 : type == 2 ? 3 : type == 6 ? 4 : 0;
    if (width == 0 || height == 0 || channels == 0 || depth > 8 || (depth != 8 && type != 0 && type != 3) ||
        (depth & (depth - 1)) != 0 || rx == 0 || ry == 0 || (uint64_t)rx * ry > 65536 || job->size < 33) {
        return wi_reduce_fail(job, WI_PNG_CORRUPT, "not an image the reducing decoder takes");
    }
    const size_t rowbytes = ((size_t)width * channels * depth + 7) / 8;
    const size_t bpp = depth == 8 ? (size_t)channels : 1;
    const uint32_t out_width = (width + rx - 1) / rx, out_height = (height + ry - 1) / ry;
    // Everything the raw scanlines can take: checked against the caller's pixel limit before
    // it allocated the output, and never more than the RGBA bitmap (4 bytes per pixel) plus
    // one filter byte per row.
    const size_t raw_size = (size_t)height * (rowbytes + 1);

    wi_png_chunks chunks;
    memset(&chunks, 0, sizeof(chunks));
    uint8_t *joined = NULL, *raw = NULL, *zero_row = NULL, *expanded = NULL;
    uint32_t *sums = NULL;
    struct libdeflate_decompressor *inflater = NULL;
    wi_png_status status = wi_walk_chunks(job, &chunks);
    if (status != WI_PNG_OK) goto done;

    if (chunks.idat_total < 2) {
        status = wi_reduce_fail(job, WI_PNG_CORRUPT, "the image data is too short for a zlib stream");
        goto done;
    }
    // The zlib stream, in one piece.
    const uint8_t *stream = chunks.idat[0];
    if (chunks.idat_count > 1) {
        joined = (uint8_t *)malloc(chunks.idat_total);
        if (joined == NULL) { status = wi_reduce_fail(job, WI_PNG_NO_MEMORY, "out of memory for the image data"); goto done; }
        size_t at = 0;
        for (size_t i = 0; i < chunks.idat_count; i++) {
            memcpy(joined + at, chunks.idat[i], chunks.idat_size[i]);
            at += chunks.idat_size[i];
        }
        stream = joined;
    }
    // The zlib header: deflate, a window of at most 32 KiB, no preset dictionary, a valid check.
    if ((stream[0] & 0x0f) != 8 || (stream[0] >> 4) > 7 || (stream[1] & 0x20) != 0 ||
        ((stream[0] << 8) | stream[1]) % 31 != 0) {
        status = wi_reduce_fail(job, WI_PNG_CORRUPT, "the image data is not a zlib stream");
        goto done;
    }
    raw = wi_alloc_scanlines(raw_size);
    zero_row = (uint8_t *)calloc(rowbytes, 1);
    expanded = (uint8_t *)malloc((size_t)width * 4);
    sums = (uint32_t *)malloc((size_t)out_width * 4 * sizeof(uint32_t));
    inflater = libdeflate_alloc_decompressor();
    if (raw == NULL || zero_row == NULL || expanded == NULL || sums == NULL || inflater == NULL) {
        status = wi_reduce_fail(job, WI_PNG_NO_MEMORY, "out of memory for the scanlines");
        goto done;
    }
    // The Adler-32 after the deflate data is not checked (libpng is set to skip it too): the
    // chunk CRCs already cover these bytes.
    size_t consumed = 0, produced = 0;
    enum libdeflate_result result = libdeflate_deflate_decompress_ex(
        inflater, stream + 2, chunks.idat_total - 2, raw, raw_size, &consumed, &produced);
    if (result != LIBDEFLATE_SUCCESS || produced != raw_size) {
        status = wi_reduce_fail(job, WI_PNG_CORRUPT,
                                result == LIBDEFLATE_INSUFFICIENT_SPACE ? "the image data inflates to more than the scanlines"
                                : result == LIBDEFLATE_SUCCESS ? "the image data inflates to fewer bytes than the scanlines (truncated?)"
                                                               : "the image data is not a valid deflate stream (truncated or damaged)");
        goto done;
    }

    const int has_alpha = type == 4 || type == 6 || chunks.has_key || chunks.has_palette_alpha;
    const uint8_t *prev = zero_row;
    uint32_t y = 0;
    // Consecutive Paeth rows of 3- or 4-byte pixels are unfiltered two at a time.
#if defined(__SSE2__)
    const int pairs = bpp == 3 || bpp == 4;
#endif
    int unfiltered_ahead = 0;
    for (uint32_t out_y = 0; out_y < out_height; out_y++) {
        memset(sums, 0, (size_t)out_width * 4 * sizeof(uint32_t));
        uint32_t rows = 0;
        for (; rows < ry && y < height; rows++, y++) {
            uint8_t *line = raw + (size_t)y * (rowbytes + 1);
            uint8_t *cur = line + 1;
            if (unfiltered_ahead) {
                // Done with the row before, as the second of a Paeth pair.
                unfiltered_ahead = 0;
#if defined(__SSE2__)
            } else if (pairs && line[0] == 4 && y + 1 < height && line[rowbytes + 1] == 4) {
                wi_unpaeth2_sse2(cur, cur + rowbytes + 1, prev, rowbytes, bpp);
                unfiltered_ahead = 1;
#endif
            } else if (!wi_unfilter(line[0], cur, prev, rowbytes, bpp)) {
                status = wi_reduce_fail(job, WI_PNG_CORRUPT, "a scanline names an unknown filter type");
                goto done;
            }
            prev = cur;
            if (rx == 1 && ry == 1) {
                // No reduction: the row, expanded to RGBA, is the output's row.
                uint8_t *out = job->pixels + (size_t)y * job->stride;
                if (type == 6) memcpy(out, cur, (size_t)width * 4);
                else wi_expand_row(job, &chunks, cur, out);
                continue;
            }
            if (type == 6) {
                wi_add_alpha(cur, width, rx, sums);
            } else if (type == 2 && !has_alpha) {
                wi_add_opaque(cur, 3, width, rx, sums);
            } else {
                wi_expand_row(job, &chunks, cur, expanded);
                if (has_alpha) wi_add_alpha(expanded, width, rx, sums);
                else wi_add_opaque(expanded, 4, width, rx, sums);
            }
        }
        if (rx > 1 || ry > 1) wi_store_row(sums, out_width, width, rx, rows, has_alpha, job->pixels + (size_t)out_y * job->stride);
    }
    status = WI_PNG_OK;

done:
    if (inflater) libdeflate_free_decompressor(inflater);
    free(sums);
    free(expanded);
    free(zero_row);
    wi_free_scanlines(raw, raw_size);
    free(joined);
    free((void *)chunks.idat);
    free(chunks.idat_size);
    return status;
}
