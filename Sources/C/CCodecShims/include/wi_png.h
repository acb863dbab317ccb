#ifndef WI_PNG_H
#define WI_PNG_H
// PNG helpers owned by the PNG coder (see CCodecShims.h): libpng's classic reader, progressive
// reader and writer longjmp out of errors, so the setjmp that catches them lives here, in C.
// Every function reports failure through a status code and a message; none ever exits or
// longjmps into Swift.

#include <stddef.h>
#include <stdint.h>

/// Outcome of a PNG call.
typedef enum {
    WI_PNG_OK = 0,
    /// The bytes are not a decodable PNG (bad chunk, CRC, zlib data, truncated stream).
    WI_PNG_CORRUPT = 1,
    /// A limit was exceeded (pixels, inflated size).
    WI_PNG_TOO_LARGE = 2,
    /// malloc failed.
    WI_PNG_NO_MEMORY = 3,
} wi_png_status;

/// Decodes one complete PNG datastream to 8-bit straight-alpha RGBA (R first): every colour
/// type and bit depth, palette and tRNS expanded, 16-bit channels rounded to 8 bits,
/// grey replicated to RGB, Adam7 undone. No gamma or colour transform is applied: the samples
/// are the stored ones. Text, iCCP, eXIf and other metadata chunks are skipped (the caller
/// reads what it wants from its own chunk walk), so nothing here inflates metadata.
typedef struct {
    const uint8_t *data;
    size_t size;
    /// The destination: `height` rows of `stride` bytes.
    uint8_t *pixels;
    size_t stride;
    /// The size the caller expects (read from IHDR before allocating `pixels`); the decode
    /// fails unless IHDR says exactly this.
    uint32_t width;
    uint32_t height;
    /// Skip CRC checks: for the streams the APNG decoder synthesizes after checking the CRCs
    /// of the original chunks itself.
    int ignore_crc;
    /// Rows written before a failure (all of them on success).
    uint32_t rows_done;
    char message[160];
} wi_png_decode_job;

wi_png_status wi_png_decode(wi_png_decode_job *job);

/// Inflates a zlib stream of `size` bytes, giving up once more than `limit` bytes come out.
/// With `out` non-NULL the result is returned in a malloc'd buffer the caller frees with
/// `wi_png_free`; with `out` NULL the data is only counted (a fixed scratch buffer), which
/// is how text chunks are checked for zlib bombs without keeping them.
/// Returns WI_PNG_OK (`*out_size` set), WI_PNG_TOO_LARGE past `limit`, WI_PNG_CORRUPT for a
/// bad or unfinished stream, WI_PNG_NO_MEMORY.
wi_png_status wi_png_inflate(const uint8_t *data, size_t size, size_t limit,
                             uint8_t **out, size_t *out_size);

void wi_png_free(void *pointer);

/// The PNG/zlib CRC-32 of `size` bytes, continuing from `crc` (0 to start).
uint32_t wi_png_crc32(uint32_t crc, const uint8_t *data, size_t size);

// MARK: - Reduced decoding (thumbnails)

/// Decodes a non-interlaced PNG of at most 8 bits per sample straight to a box-reduced RGBA
/// bitmap: the image data is inflated with libdeflate, each row is unfiltered and added to the
/// sums of its `reduce_x` × `reduce_y` blocks as it goes by, and only the reduced image is
/// written. Colours are averaged weighted by alpha, so transparent pixels add no colour. The
/// last block of a row or column may be narrower; it averages what there is. With blocks of
/// one pixel (`reduce_x` and `reduce_y` 1) each row is written expanded to RGBA as it is
/// unfiltered: the full image, as libpng's expansion to RGBA writes it.
///
/// The caller has walked the chunks and checked IHDR (and the pixel limit); `width`,
/// `height`, `bit_depth` and `color_type` are IHDR's. The raw scanlines take
/// `height * (1 + rowbytes)` bytes, never more than 4 bytes a pixel plus one a row. Chunks
/// after the image data and the zlib Adler-32 are not read; the CRCs of IDAT, PLTE and tRNS
/// are checked. Returns WI_PNG_CORRUPT when the data does not inflate to exactly the
/// scanlines IHDR describes (truncated, damaged, or extra data), WI_PNG_NO_MEMORY.
typedef struct {
    const uint8_t *data;
    size_t size;
    uint32_t width;
    uint32_t height;
    uint8_t bit_depth;
    uint8_t color_type;
    /// Block size; `reduce_x * reduce_y` at most 65536 (the sums are 32-bit).
    uint32_t reduce_x;
    uint32_t reduce_y;
    /// The destination: ceil(height / reduce_y) rows of `stride` bytes, each
    /// ceil(width / reduce_x) RGBA pixels.
    uint8_t *pixels;
    size_t stride;
    char message[160];
} wi_png_reduce_job;

wi_png_status wi_png_decode_reduced(wi_png_reduce_job *job);

/// Box-reduces interleaved 8-bit RGB (3 bytes a pixel) or straight RGBA (4) in memory into RGBA,
/// `rx` × `ry` pixels a block, as the PNG reduction does (wi_png_reduce.c). 0, or -1 on failure.
int wi_box_reduce_interleaved(const uint8_t *pixels, size_t stride, uint32_t width, uint32_t height,
                              uint32_t bytes_per_pixel, uint32_t rx, uint32_t ry, uint8_t *out, size_t out_stride);

// MARK: - Progressive decoding

/// A progressive (push) decoder: feed the file as it arrives; rows land in an RGBA canvas
/// that starts fully transparent (calloc), so a preview shows the rows decoded so far.
typedef struct wi_png_stream wi_png_stream;

typedef struct {
    /// IHDR has been read and the canvas allocated.
    int has_header;
    uint32_t width;
    uint32_t height;
    int interlaced;
    /// Adam7 passes fully decoded (0…7; non-interlaced images count as one pass).
    int passes_done;
    /// Rows delivered by libpng so far, over all passes: grows with every row.
    uint64_t rows_delivered;
    /// The image is complete.
    int done;
    /// A failure stopped decoding; see `wi_png_stream_message`.
    wi_png_status failure;
} wi_png_stream_state;

/// `max_pixels` is checked against IHDR before the canvas is allocated.
wi_png_stream *wi_png_stream_create(uint64_t max_pixels);
void wi_png_stream_destroy(wi_png_stream *stream);

/// Pushes the next bytes. Returns the failure status once decoding has failed (and on every
/// later call); bytes after the end of the image are ignored.
wi_png_status wi_png_stream_feed(wi_png_stream *stream, const uint8_t *data, size_t size);
void wi_png_stream_get_state(const wi_png_stream *stream, wi_png_stream_state *state);
const char *wi_png_stream_message(const wi_png_stream *stream);

/// Writes the canvas as it stands into `out` (`height` rows of `stride` bytes). For an
/// interlaced image whose passes are not all done, every pixel is replicated from the top-left
/// pixel of its Adam7 block at the finest pass completed so far, so the early passes already
/// give a coarse full image instead of a sparse grid of dots.
void wi_png_stream_render(const wi_png_stream *stream, uint8_t *out, size_t stride);

// MARK: - Encoding

typedef struct {
    /// Source pixels: `height` rows of `stride` bytes, `channels` bytes per pixel (1 grey,
    /// 2 grey+alpha, 3 RGB, 4 RGBA; 8 bits each, straight alpha).
    const uint8_t *pixels;
    size_t stride;
    uint32_t width;
    uint32_t height;
    int channels;
    /// Write the smallest colour type that holds the pixels exactly (drop an all-opaque alpha
    /// channel, write grey when every pixel has R = G = B). Costs one pass over the pixels.
    int reduce;
    /// When non-zero, the channel count to write (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA)
    /// regardless of `reduce`: the frames of an APNG must share one colour type.
    int output_channels;
    /// zlib level 0…9.
    int level;
    int interlace;
    /// An ICC profile to embed as iCCP, or NULL.
    const uint8_t *icc;
    size_t icc_size;
    /// The encoded file, malloc'd; free with `wi_png_free`.
    uint8_t *output;
    size_t output_size;
    char message[160];
} wi_png_encode_job;

wi_png_status wi_png_encode(wi_png_encode_job *job);

/// The channel count `wi_png_encode` writes for the job's pixels with `reduce` set.
int wi_png_reduced_channels(const wi_png_encode_job *job);

#endif
