// The PNG coder's C: libpng reports errors by longjmp, which Swift cannot survive, so every
// libpng call that can fail runs here under a setjmp owned by the function making it.

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include <zlib.h>
#include "wi_png.h"

// MARK: - Errors

/// What the error callback needs: where to jump and where to put the message. The first
/// message wins (a later one is usually a consequence).
typedef struct {
    jmp_buf jump;
    wi_png_status status;
    char *message;
    size_t capacity;
} wi_png_error_context;

static void wi_png_set_message(wi_png_error_context *context, wi_png_status status, const char *message) {
    if (context->status != WI_PNG_OK) return;
    context->status = status;
    if (context->message != NULL && context->capacity > 0) {
        strncpy(context->message, message, context->capacity - 1);
        context->message[context->capacity - 1] = '\0';
    }
}

static void wi_png_error_callback(png_structp png, png_const_charp message) {
    wi_png_error_context *context = (wi_png_error_context *)png_get_error_ptr(png);
    wi_png_set_message(context, WI_PNG_CORRUPT, message);
    longjmp(context->jump, 1);
}

/// Warnings (a bad CRC on an ancillary chunk, extra zlib data after the image) are not
/// failures: the image decodes as the file's author saw it.
static void wi_png_warning_callback(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

/// Raises a failure of our own (a limit, malloc) through libpng's error path, so the same
/// longjmp cleans up.
static void wi_png_fail(png_structp png, wi_png_status status, const char *message) {
    wi_png_error_context *context = (wi_png_error_context *)png_get_error_ptr(png);
    wi_png_set_message(context, status, message);
    longjmp(context->jump, 1);
}

// MARK: - Shared read set-up

/// Chunks libpng need not read at all: metadata we either ignore or read from our own chunk
/// walk (iCCP, eXIf). Skipping them means libpng never inflates text (the zlib-bomb vector)
/// and never allocates for them.
static const png_byte wi_png_skipped_chunks[] =
    "tEXt\0zTXt\0iTXt\0iCCP\0eXIf\0sPLT\0tIME\0pHYs\0oFFs\0pCAL\0sCAL\0hIST\0bKGD\0gAMA\0cHRM\0sRGB\0sBIT\0";

static void wi_png_configure_reader(png_structp png) {
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, wi_png_skipped_chunks,
                                (int)(sizeof(wi_png_skipped_chunks) / 5));
    // Unknown chunks (APNG's acTL/fcTL/fdAT among them) are skipped too, never stored.
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    // What is still read (PLTE, tRNS, IHDR) is tiny; cap any one chunk allocation and the
    // number of stored ancillary chunks anyway.
    png_set_chunk_malloc_max(png, 1 << 20);
    png_set_chunk_cache_max(png, 128);
    // Every chunk's CRC is still checked, so damaged bytes are still caught; zlib's Adler-32
    // over the inflated rows would only check them again, at ~5 % of the decode time.
    png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
}

/// The transformations that turn any PNG into 8-bit RGBA with straight alpha, without gamma
/// correction (the stored samples, as Pillow and browsers without colour management show
/// them). Returns the number of interlace passes.
static int wi_png_configure_rgba(png_structp png, png_infop info) {
    png_uint_32 width, height;
    int bit_depth, color_type, interlace;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
    int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (has_trns) png_set_tRNS_to_alpha(png);
    // Rounded to the nearest 8-bit value (v × 255 / 65535), not truncated to the high byte as
    // png_set_strip_16 (and Pillow) would: the two differ by 1 for about half the samples.
    if (bit_depth == 16) png_set_scale_16(png);
    if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if ((color_type & PNG_COLOR_MASK_ALPHA) == 0 && !has_trns) png_set_filler(png, 0xff, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) {
        wi_png_fail(png, WI_PNG_CORRUPT, "unexpected row layout after expanding to RGBA");
    }
    return passes;
}

// MARK: - Whole-file decoding

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
} wi_png_memory_reader;

static void wi_png_read_memory(png_structp png, png_bytep out, size_t count) {
    wi_png_memory_reader *reader = (wi_png_memory_reader *)png_get_io_ptr(png);
    if (count > reader->size - reader->offset) {
        wi_png_fail(png, WI_PNG_CORRUPT, "the file ends before the image data does (truncated)");
    }
    memcpy(out, reader->data + reader->offset, count);
    reader->offset += count;
}

/// The part of the decode that may longjmp. Kept apart so that no local of `wi_png_decode`
/// changes between setjmp and longjmp.
static void wi_png_decode_body(png_structp png, png_infop info, wi_png_decode_job *job, png_bytep *rows) {
    png_read_info(png, info);
    png_uint_32 width = png_get_image_width(png, info);
    png_uint_32 height = png_get_image_height(png, info);
    if (width != job->width || height != job->height) {
        wi_png_fail(png, WI_PNG_CORRUPT, "IHDR does not match the size read before decoding");
    }
    wi_png_configure_rgba(png, info);
    for (png_uint_32 y = 0; y < height; y++) rows[y] = job->pixels + (size_t)y * job->stride;
    png_read_image(png, rows);
    // png_read_end is not called: nothing after the image data matters to us, and a file
    // missing its IEND (common on the web) still shows.
    job->rows_done = height;
}

wi_png_status wi_png_decode(wi_png_decode_job *job) {
    job->rows_done = 0;
    job->message[0] = '\0';
    if (job->width == 0 || job->height == 0) {
        strcpy(job->message, "empty image");
        return WI_PNG_CORRUPT;
    }
    wi_png_error_context context;
    context.status = WI_PNG_OK;
    context.message = job->message;
    context.capacity = sizeof(job->message);
    wi_png_memory_reader reader = {job->data, job->size, 0};
    png_bytep *rows = (png_bytep *)malloc(sizeof(png_bytep) * job->height);
    if (rows == NULL) {
        strcpy(job->message, "out of memory for row pointers");
        return WI_PNG_NO_MEMORY;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context,
                                             wi_png_error_callback, wi_png_warning_callback);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        if (png) png_destroy_read_struct(&png, NULL, NULL);
        free(rows);
        strcpy(job->message, "out of memory for libpng");
        return WI_PNG_NO_MEMORY;
    }
    if (setjmp(context.jump) == 0) {
        png_set_read_fn(png, &reader, wi_png_read_memory);
        png_set_user_limits(png, job->width, job->height);
        wi_png_configure_reader(png);
        if (job->ignore_crc) png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
        wi_png_decode_body(png, info, job, rows);
    }
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    return context.status;
}

// MARK: - zlib and CRC

wi_png_status wi_png_inflate(const uint8_t *data, size_t size, size_t limit, uint8_t **out, size_t *out_size) {
    z_stream stream;
    memset(&stream, 0, sizeof(stream));
    if (inflateInit(&stream) != Z_OK) return WI_PNG_NO_MEMORY;
    uint8_t scratch[16384];
    uint8_t *buffer = NULL;
    size_t capacity = 0, produced = 0;
    wi_png_status status = WI_PNG_OK;
    stream.next_in = (Bytef *)data;
    // zlib counts in uInt; PNG chunks are below 2^31 bytes, so one call's input fits.
    stream.avail_in = (uInt)size;
    for (;;) {
        if (out != NULL) {
            if (produced == capacity) {
                size_t grown = capacity == 0 ? 16384 : capacity * 2;
                if (grown > limit + 1) grown = limit + 1;
                if (grown <= capacity) { status = WI_PNG_TOO_LARGE; break; }
                uint8_t *larger = (uint8_t *)realloc(buffer, grown);
                if (larger == NULL) { status = WI_PNG_NO_MEMORY; break; }
                buffer = larger;
                capacity = grown;
            }
            stream.next_out = buffer + produced;
            stream.avail_out = (uInt)(capacity - produced);
        } else {
            stream.next_out = scratch;
            stream.avail_out = sizeof(scratch);
        }
        uInt before = stream.avail_out;
        int result = inflate(&stream, Z_NO_FLUSH);
        produced += before - stream.avail_out;
        if (produced > limit) { status = WI_PNG_TOO_LARGE; break; }
        if (result == Z_STREAM_END) break;
        if (result == Z_BUF_ERROR && stream.avail_in == 0) { status = WI_PNG_CORRUPT; break; }
        if (result != Z_OK && result != Z_BUF_ERROR) {
            status = result == Z_MEM_ERROR ? WI_PNG_NO_MEMORY : WI_PNG_CORRUPT;
            break;
        }
    }
    inflateEnd(&stream);
    if (status != WI_PNG_OK) {
        free(buffer);
        return status;
    }
    if (out != NULL) *out = buffer;
    if (out_size != NULL) *out_size = produced;
    return WI_PNG_OK;
}

void wi_png_free(void *pointer) { free(pointer); }

uint32_t wi_png_crc32(uint32_t crc, const uint8_t *data, size_t size) {
    uLong value = crc;
    while (size > 0) {
        uInt part = size > 0x40000000u ? 0x40000000u : (uInt)size;
        value = crc32(value, data, part);
        data += part;
        size -= part;
    }
    return (uint32_t)value;
}

// MARK: - Progressive decoding

struct wi_png_stream {
    wi_png_error_context context;
    png_structp png;
    png_infop info;
    uint64_t max_pixels;
    uint8_t *canvas;
    size_t stride;
    wi_png_stream_state state;
    /// In the pass in progress, the last image row libpng delivered pixels for.
    int current_pass;
    int64_t last_row_in_pass;
    char message[160];
};

static void wi_png_stream_info(png_structp png, png_infop info) {
    wi_png_stream *stream = (wi_png_stream *)png_get_progressive_ptr(png);
    png_uint_32 width, height;
    int bit_depth, color_type, interlace;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
    if ((uint64_t)width * height > stream->max_pixels) {
        wi_png_fail(png, WI_PNG_TOO_LARGE, "the image has more pixels than the decoding limit allows");
    }
    wi_png_configure_rgba(png, info);
    stream->stride = (size_t)width * 4;
    stream->canvas = (uint8_t *)calloc((size_t)height, stream->stride);
    if (stream->canvas == NULL) wi_png_fail(png, WI_PNG_NO_MEMORY, "out of memory for the canvas");
    stream->state.width = width;
    stream->state.height = height;
    stream->state.interlaced = interlace != PNG_INTERLACE_NONE;
    stream->state.has_header = 1;
    stream->current_pass = 0;
    stream->last_row_in_pass = -1;
}

static void wi_png_stream_row(png_structp png, png_bytep row, png_uint_32 row_number, int pass) {
    wi_png_stream *stream = (wi_png_stream *)png_get_progressive_ptr(png);
    if (row_number >= stream->state.height) return;
    if (pass != stream->current_pass) {
        // libpng moves on only once a pass is finished (and skips empty ones).
        stream->current_pass = pass;
        stream->state.passes_done = pass;
        stream->last_row_in_pass = -1;
    }
    if (row == NULL) return;
    png_progressive_combine_row(png, stream->canvas + (size_t)row_number * stream->stride, row);
    stream->last_row_in_pass = row_number;
    stream->state.rows_delivered += 1;
}

static void wi_png_stream_end(png_structp png, png_infop info) {
    (void)info;
    wi_png_stream *stream = (wi_png_stream *)png_get_progressive_ptr(png);
    stream->state.done = 1;
    stream->state.passes_done = stream->state.interlaced ? 7 : 1;
}

wi_png_stream *wi_png_stream_create(uint64_t max_pixels) {
    wi_png_stream *stream = (wi_png_stream *)calloc(1, sizeof(wi_png_stream));
    if (stream == NULL) return NULL;
    stream->max_pixels = max_pixels;
    stream->context.message = stream->message;
    stream->context.capacity = sizeof(stream->message);
    stream->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &stream->context,
                                         wi_png_error_callback, wi_png_warning_callback);
    stream->info = stream->png ? png_create_info_struct(stream->png) : NULL;
    if (stream->png == NULL || stream->info == NULL) {
        if (stream->png) png_destroy_read_struct(&stream->png, NULL, NULL);
        free(stream);
        return NULL;
    }
    if (setjmp(stream->context.jump) == 0) {
        png_set_user_limits(stream->png, 0x7fffffff, 0x7fffffff);
        wi_png_configure_reader(stream->png);
        png_set_progressive_read_fn(stream->png, stream, wi_png_stream_info, wi_png_stream_row, wi_png_stream_end);
    } else {
        stream->state.failure = stream->context.status;
    }
    return stream;
}

void wi_png_stream_destroy(wi_png_stream *stream) {
    if (stream == NULL) return;
    png_destroy_read_struct(&stream->png, &stream->info, NULL);
    free(stream->canvas);
    free(stream);
}

wi_png_status wi_png_stream_feed(wi_png_stream *stream, const uint8_t *data, size_t size) {
    if (stream->state.failure != WI_PNG_OK) return stream->state.failure;
    if (stream->state.done || size == 0) return WI_PNG_OK;
    if (setjmp(stream->context.jump) == 0) {
        png_process_data(stream->png, stream->info, (png_bytep)data, size);
    } else {
        stream->state.failure = stream->context.status == WI_PNG_OK ? WI_PNG_CORRUPT : stream->context.status;
    }
    return stream->state.failure;
}

void wi_png_stream_get_state(const wi_png_stream *stream, wi_png_stream_state *state) {
    *state = stream->state;
}

const char *wi_png_stream_message(const wi_png_stream *stream) { return stream->message; }

void wi_png_stream_render(const wi_png_stream *stream, uint8_t *out, size_t stride) {
    const wi_png_stream_state *state = &stream->state;
    if (!state->has_header) return;
    size_t width = state->width, height = state->height;
    if (!state->interlaced || state->done) {
        for (size_t y = 0; y < height; y++) {
            memcpy(out + y * stride, stream->canvas + y * stream->stride, width * 4);
        }
        return;
    }
    // Adam7 block sizes once 1…7 passes are complete: after pass n every pixel whose
    // coordinates are multiples of the block size is final.
    static const int block_width[7] = {8, 4, 4, 2, 2, 1, 1};
    static const int block_height[7] = {8, 8, 4, 4, 2, 2, 1};
    int passes = state->passes_done;
    size_t bw = passes == 0 ? 8 : (size_t)block_width[passes - 1];
    size_t bh = passes == 0 ? 8 : (size_t)block_height[passes - 1];
    // During the first pass only the block rows delivered so far are known.
    int64_t known_rows = passes == 0 ? stream->last_row_in_pass + 1 : (int64_t)height;
    for (size_t y = 0; y < height; y++) {
        size_t source_y = y - y % bh;
        uint8_t *target = out + y * stride;
        if ((int64_t)source_y >= known_rows) {
            memset(target, 0, width * 4);
            continue;
        }
        const uint8_t *source = stream->canvas + source_y * stream->stride;
        for (size_t x = 0; x < width; x += bw) {
            uint32_t pixel;
            memcpy(&pixel, source + x * 4, 4);
            size_t end = x + bw < width ? x + bw : width;
            for (size_t i = x; i < end; i++) memcpy(target + i * 4, &pixel, 4);
        }
    }
}

// MARK: - Encoding

typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
} wi_png_memory_writer;

static void wi_png_write_memory(png_structp png, png_bytep data, size_t count) {
    wi_png_memory_writer *writer = (wi_png_memory_writer *)png_get_io_ptr(png);
    if (count > writer->capacity - writer->size) {
        size_t capacity = writer->capacity < 65536 ? 65536 : writer->capacity;
        while (count > capacity - writer->size) {
            if (capacity > SIZE_MAX / 2) wi_png_fail(png, WI_PNG_NO_MEMORY, "the encoded file is too large");
            capacity *= 2;
        }
        uint8_t *larger = (uint8_t *)realloc(writer->data, capacity);
        if (larger == NULL) wi_png_fail(png, WI_PNG_NO_MEMORY, "out of memory for the encoded file");
        writer->data = larger;
        writer->capacity = capacity;
    }
    memcpy(writer->data + writer->size, data, count);
    writer->size += count;
}

static void wi_png_flush_memory(png_structp png) { (void)png; }

/// Whether every pixel is opaque and whether every pixel is grey, in one pass that stops as
/// soon as neither can hold.
static void wi_png_analyse(const wi_png_encode_job *job, int *opaque, int *gray) {
    int channels = job->channels;
    int is_opaque = channels == 2 || channels == 4;
    int is_gray = channels == 3 || channels == 4;
    for (uint32_t y = 0; y < job->height && (is_opaque || is_gray); y++) {
        const uint8_t *row = job->pixels + (size_t)y * job->stride;
        for (uint32_t x = 0; x < job->width; x++) {
            const uint8_t *p = row + (size_t)x * channels;
            if (channels == 2) {
                if (p[1] != 255) { is_opaque = 0; break; }
            } else {
                if (is_gray && (p[0] != p[1] || p[1] != p[2])) is_gray = 0;
                if (is_opaque && channels == 4 && p[3] != 255) is_opaque = 0;
                if (!is_opaque && !is_gray) break;
            }
        }
    }
    *opaque = channels == 2 || channels == 4 ? is_opaque : 1;
    *gray = channels == 1 || channels == 2 ? 1 : is_gray;
}

int wi_png_reduced_channels(const wi_png_encode_job *job) {
    int opaque = 1, gray = 0;
    wi_png_analyse(job, &opaque, &gray);
    return (gray ? 1 : 3) + (opaque ? 0 : 1);
}

/// Copies one row from the source layout to the output layout (channel counts 1…4).
static void wi_png_pack_row(const uint8_t *source, int source_channels, uint8_t *target, int target_channels, uint32_t width) {
    for (uint32_t x = 0; x < width; x++) {
        const uint8_t *p = source + (size_t)x * source_channels;
        uint8_t *q = target + (size_t)x * target_channels;
        uint8_t alpha = source_channels == 2 ? p[1] : source_channels == 4 ? p[3] : 255;
        // A grey source has one colour sample; RGB sources reach grey targets only when
        // R = G = B, so their red sample is the grey.
        uint8_t green = source_channels >= 3 ? p[1] : p[0];
        uint8_t blue = source_channels >= 3 ? p[2] : p[0];
        switch (target_channels) {
        case 1: q[0] = p[0]; break;
        case 2: q[0] = p[0]; q[1] = alpha; break;
        case 3: q[0] = p[0]; q[1] = green; q[2] = blue; break;
        default: q[0] = p[0]; q[1] = green; q[2] = blue; q[3] = alpha; break;
        }
    }
}

static void wi_png_encode_body(png_structp png, png_infop info, wi_png_encode_job *job, uint8_t *row_buffer, int target_channels) {
    static const int color_types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    png_set_IHDR(png, info, job->width, job->height, 8, color_types[target_channels],
                 job->interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, job->level);
    if (job->icc != NULL && job->icc_size >= 132) {
        png_set_iCCP(png, info, "ICC Profile", PNG_COMPRESSION_TYPE_BASE, job->icc, (png_uint_32)job->icc_size);
    }
    png_write_info(png, info);
    int passes = png_set_interlace_handling(png);
    for (int pass = 0; pass < passes; pass++) {
        for (uint32_t y = 0; y < job->height; y++) {
            const uint8_t *source = job->pixels + (size_t)y * job->stride;
            if (row_buffer == NULL) {
                png_write_row(png, (png_const_bytep)source);
            } else {
                wi_png_pack_row(source, job->channels, row_buffer, target_channels, job->width);
                png_write_row(png, row_buffer);
            }
        }
    }
    png_write_end(png, NULL);
}

wi_png_status wi_png_encode(wi_png_encode_job *job) {
    job->output = NULL;
    job->output_size = 0;
    job->message[0] = '\0';
    if (job->width == 0 || job->height == 0 || job->channels < 1 || job->channels > 4) {
        strcpy(job->message, "nothing to encode");
        return WI_PNG_CORRUPT;
    }
    int target_channels = job->output_channels;
    if (target_channels < 1 || target_channels > 4) {
        target_channels = job->reduce ? wi_png_reduced_channels(job) : job->channels;
    }
    uint8_t *row_buffer = NULL;
    if (target_channels != job->channels) {
        row_buffer = (uint8_t *)malloc((size_t)job->width * 4);
        if (row_buffer == NULL) {
            strcpy(job->message, "out of memory for a row");
            return WI_PNG_NO_MEMORY;
        }
    }
    wi_png_error_context context;
    context.status = WI_PNG_OK;
    context.message = job->message;
    context.capacity = sizeof(job->message);
    wi_png_memory_writer writer = {NULL, 0, 0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &context,
                                              wi_png_error_callback, wi_png_warning_callback);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        if (png) png_destroy_write_struct(&png, NULL);
        free(row_buffer);
        strcpy(job->message, "out of memory for libpng");
        return WI_PNG_NO_MEMORY;
    }
    if (setjmp(context.jump) == 0) {
        png_set_write_fn(png, &writer, wi_png_write_memory, wi_png_flush_memory);
        wi_png_encode_body(png, info, job, row_buffer, target_channels);
    }
    png_destroy_write_struct(&png, &info);
    free(row_buffer);
    if (context.status != WI_PNG_OK) {
        free(writer.data);
        return context.status;
    }
    job->output = writer.data;
    job->output_size = writer.size;
    return WI_PNG_OK;
}
