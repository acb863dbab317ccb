// libjpeg decompression and compression for the JPEG coder: see include/wi_jpeg.h.
//
// libjpeg reports fatal errors by calling error_exit, which must not return; we longjmp back to
// the wi_jpeg_* entry point that set the jump buffer, and every later call fails at once.
// Warnings (corrupt or truncated entropy-coded data) are counted, never printed: libjpeg then
// goes on with what it has, which is how a truncated file yields a partial image.

#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>
#include <lcms2.h>
#include "wi_jpeg.h"

const uint32_t wi_lcms_type_rgba_8 = TYPE_RGBA_8;
const uint32_t wi_lcms_type_rgb_8 = TYPE_RGB_8;
const uint32_t wi_lcms_type_cmyk_8_rev = TYPE_CMYK_8_REV;
const uint32_t wi_lcms_type_gray_in_rgba_8 = COLORSPACE_SH(PT_GRAY) | CHANNELS_SH(1) | BYTES_SH(1) | EXTRA_SH(3);
const uint32_t wi_lcms_type_gray_in_rgb_8 = COLORSPACE_SH(PT_GRAY) | CHANNELS_SH(1) | BYTES_SH(1) | EXTRA_SH(2);

struct wi_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr error;
    struct jpeg_source_mgr source;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    int failed;
    int unsupported;           // the failure is a valid file this libjpeg build cannot decode
    int warnings;
    char message[JMSG_LENGTH_MAX];

    // Input: borrowed (complete) or owned (appended chunk by chunk).
    const uint8_t *borrowed;
    size_t borrowed_count;
    uint8_t *owned;
    size_t owned_count;        // valid bytes in `owned`, from its start
    size_t owned_capacity;
    size_t discarded;          // bytes dropped from the front of `owned` (consumed earlier)
    size_t received;           // total bytes of the file received
    size_t pending_skip;       // bytes libjpeg asked to skip that have not arrived yet
    int complete;

    int header_done;
    size_t header_end;         // file offset where the first scan's data starts
    int started;
    int buffered;
    int cmyk;
    int inverted;
    int keeps_cmyk;            // leave CMYK samples as they are, for a conversion through the file's profile
};

static const JOCTET fake_eoi[2] = {0xFF, JPEG_EOI};

// MARK: - Errors

static void wi_error_exit(j_common_ptr cinfo) {
    wi_jpeg_decoder *decoder = (wi_jpeg_decoder *)cinfo;
    (*cinfo->err->format_message)(cinfo, decoder->message);
    switch (cinfo->err->msg_code) {
    case JERR_BAD_PRECISION:       // 12- or 16-bit samples: this build reads 8-bit only
    case JERR_SOF_UNSUPPORTED:     // lossless and hierarchical JPEG
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
    case JERR_CONVERSION_NOTIMPL:
        decoder->unsupported = 1;
        break;
    default:
        break;
    }
    longjmp(decoder->jump, 1);
}

static void wi_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return; // trace messages
    wi_jpeg_decoder *decoder = (wi_jpeg_decoder *)cinfo;
    if (decoder->warnings == 0) (*cinfo->err->format_message)(cinfo, decoder->message);
    decoder->warnings++;
    cinfo->err->num_warnings++;
}

static void wi_output_message(j_common_ptr cinfo) {
    (void)cinfo; // never print: the caller gets the message through wi_jpeg_message
}

static void wi_fail(wi_jpeg_decoder *decoder, const char *message) {
    snprintf(decoder->message, sizeof decoder->message, "%s", message);
    longjmp(decoder->jump, 1);
}

// Called by libjpeg while it reads a multi-scan file without buffered-image mode.
static void wi_progress(j_common_ptr cinfo) {
    wi_jpeg_decoder *decoder = (wi_jpeg_decoder *)cinfo;
    if (decoder->cinfo.input_scan_number > WI_JPEG_MAX_SCANS) {
        wi_fail(decoder, "more than 500 scans");
    }
}

// MARK: - Source

static const uint8_t *input_start(const wi_jpeg_decoder *decoder) {
    return decoder->borrowed ? decoder->borrowed : decoder->owned;
}

// The file offset libjpeg has consumed up to (committed, not counting a pending skip).
static size_t consumed_offset(const wi_jpeg_decoder *decoder) {
    const JOCTET *next = decoder->source.next_input_byte;
    if (next == NULL) return 0;
    if (next >= fake_eoi && next <= fake_eoi + 2) return decoder->received;
    return decoder->discarded + (size_t)(next - input_start(decoder));
}

static void source_init(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean source_fill(j_decompress_ptr cinfo) {
    wi_jpeg_decoder *decoder = (wi_jpeg_decoder *)cinfo;
    // libjpeg only asks once it has used every byte it was given.
    if (!decoder->complete) return FALSE; // suspend: resume when more bytes are appended
    WARNMS(cinfo, JWRN_JPEG_EOF);
    decoder->source.next_input_byte = fake_eoi;
    decoder->source.bytes_in_buffer = 2;
    return TRUE;
}

static void source_skip(j_decompress_ptr cinfo, long count) {
    wi_jpeg_decoder *decoder = (wi_jpeg_decoder *)cinfo;
    if (count <= 0) return;
    struct jpeg_source_mgr *source = &decoder->source;
    if ((size_t)count <= source->bytes_in_buffer) {
        source->next_input_byte += count;
        source->bytes_in_buffer -= (size_t)count;
        return;
    }
    // Skip what we have; the rest is dropped from the next bytes to arrive (or, at the end of
    // the input, the next fill inserts the end-of-image marker).
    if (!decoder->complete) decoder->pending_skip += (size_t)count - source->bytes_in_buffer;
    source->next_input_byte += source->bytes_in_buffer;
    source->bytes_in_buffer = 0;
}

static void source_term(j_decompress_ptr cinfo) { (void)cinfo; }

// MARK: - Life cycle

wi_jpeg_decoder *wi_jpeg_create(void) {
    wi_jpeg_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) return NULL;
    decoder->cinfo.err = jpeg_std_error(&decoder->error);
    decoder->error.error_exit = wi_error_exit;
    decoder->error.emit_message = wi_emit_message;
    decoder->error.output_message = wi_output_message;
    if (setjmp(decoder->jump)) {
        // jpeg_create_decompress fails only when out of memory.
        jpeg_destroy_decompress(&decoder->cinfo);
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    decoder->source.init_source = source_init;
    decoder->source.fill_input_buffer = source_fill;
    decoder->source.skip_input_data = source_skip;
    decoder->source.resync_to_restart = jpeg_resync_to_restart;
    decoder->source.term_source = source_term;
    decoder->cinfo.src = &decoder->source;
    decoder->progress.progress_monitor = wi_progress;
    decoder->cinfo.progress = &decoder->progress;
    // Keep APP1 (EXIF) and APP2 (ICC) segments. Their memory comes from libjpeg's pool and is
    // bounded by the size of the input.
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 2, 0xFFFF);
    return decoder;
}

void wi_jpeg_destroy(wi_jpeg_decoder *decoder) {
    if (decoder == NULL) return;
    jpeg_destroy_decompress(&decoder->cinfo);
    free(decoder->owned);
    free(decoder);
}

void wi_jpeg_set_input(wi_jpeg_decoder *decoder, const uint8_t *bytes, size_t count) {
    decoder->borrowed = bytes;
    decoder->borrowed_count = count;
    decoder->received = count;
    decoder->complete = 1;
    decoder->source.next_input_byte = bytes;
    decoder->source.bytes_in_buffer = count;
}

wi_jpeg_status wi_jpeg_append(wi_jpeg_decoder *decoder, const uint8_t *bytes, size_t count) {
    if (decoder->failed) return WI_JPEG_ERROR;
    if (decoder->borrowed || decoder->complete) {
        snprintf(decoder->message, sizeof decoder->message, "bytes appended after the end of the input");
        return WI_JPEG_ERROR;
    }
    decoder->received += count;
    size_t skip = decoder->pending_skip < count ? decoder->pending_skip : count;
    decoder->pending_skip -= skip;
    bytes += skip;
    count -= skip;
    // Drop what libjpeg has consumed, keep the rest at the front.
    size_t unconsumed = decoder->source.bytes_in_buffer;
    size_t consumed = decoder->owned_count - unconsumed;
    if (consumed > 0 && unconsumed > 0) memmove(decoder->owned, decoder->owned + consumed, unconsumed);
    decoder->discarded += consumed + skip;
    decoder->owned_count = unconsumed;
    if (unconsumed + count > decoder->owned_capacity) {
        size_t capacity = decoder->owned_capacity ? decoder->owned_capacity : 16384;
        while (capacity < unconsumed + count) capacity *= 2;
        uint8_t *grown = realloc(decoder->owned, capacity);
        if (grown == NULL) {
            decoder->failed = 1;
            snprintf(decoder->message, sizeof decoder->message, "out of memory buffering input");
            return WI_JPEG_ERROR;
        }
        decoder->owned = grown;
        decoder->owned_capacity = capacity;
    }
    if (count > 0) memcpy(decoder->owned + unconsumed, bytes, count);
    decoder->owned_count = unconsumed + count;
    decoder->source.next_input_byte = decoder->owned;
    decoder->source.bytes_in_buffer = decoder->owned_count;
    return WI_JPEG_OK;
}

void wi_jpeg_end_input(wi_jpeg_decoder *decoder) {
    decoder->complete = 1;
    decoder->pending_skip = 0;
}

// MARK: - Header and markers

#define WI_TRY(decoder)                                   \
    do {                                                  \
        if ((decoder)->failed) return WI_JPEG_ERROR;      \
        if (setjmp((decoder)->jump)) {                    \
            (decoder)->failed = 1;                        \
            return WI_JPEG_ERROR;                         \
        }                                                 \
    } while (0)

static int32_t color_of(J_COLOR_SPACE space) {
    switch (space) {
    case JCS_GRAYSCALE: return WI_JPEG_COLOR_GRAY;
    case JCS_RGB: return WI_JPEG_COLOR_RGB;
    case JCS_YCbCr: return WI_JPEG_COLOR_YCBCR;
    case JCS_CMYK: return WI_JPEG_COLOR_CMYK;
    case JCS_YCCK: return WI_JPEG_COLOR_YCCK;
    default: return WI_JPEG_COLOR_UNKNOWN;
    }
}

wi_jpeg_status wi_jpeg_read_header(wi_jpeg_decoder *decoder, wi_jpeg_info *info) {
    WI_TRY(decoder);
    if (!decoder->header_done) {
        if (jpeg_read_header(&decoder->cinfo, TRUE) == JPEG_SUSPENDED) return WI_JPEG_SUSPENDED;
        decoder->header_done = 1;
        decoder->header_end = consumed_offset(decoder) + decoder->pending_skip;
    }
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    info->width = cinfo->image_width;
    info->height = cinfo->image_height;
    info->components = cinfo->num_components;
    info->color = color_of(cinfo->jpeg_color_space);
    info->progressive = cinfo->progressive_mode;
    info->arithmetic = cinfo->arith_code;
    info->multiple_scans = jpeg_has_multiple_scans(cinfo);
    info->saw_adobe_marker = cinfo->saw_Adobe_marker;
    info->adobe_transform = cinfo->Adobe_transform;
    return WI_JPEG_OK;
}

size_t wi_jpeg_scan_bytes(const wi_jpeg_decoder *decoder) {
    if (!decoder->header_done || decoder->received < decoder->header_end) return 0;
    return decoder->received - decoder->header_end;
}

size_t wi_jpeg_buffered_bytes(const wi_jpeg_decoder *decoder) {
    return decoder->borrowed ? 0 : decoder->source.bytes_in_buffer;
}

const uint8_t *wi_jpeg_exif(const wi_jpeg_decoder *decoder, size_t *count) {
    static const char tag[6] = {'E', 'x', 'i', 'f', 0, 0};
    for (jpeg_saved_marker_ptr marker = decoder->cinfo.marker_list; marker; marker = marker->next) {
        if (marker->marker == JPEG_APP0 + 1 && marker->data_length > 6 && memcmp(marker->data, tag, 6) == 0) {
            *count = marker->data_length - 6;
            return marker->data + 6;
        }
    }
    *count = 0;
    return NULL;
}

uint8_t *wi_jpeg_copy_icc(wi_jpeg_decoder *decoder, size_t *count) {
    *count = 0;
    if (decoder->failed || !decoder->header_done) return NULL;
    JOCTET *data = NULL;
    unsigned int length = 0;
    // jpeg_read_icc_profile only warns (never fails) on inconsistent chunks; the jump buffer
    // is set anyway in case a future version raises an error.
    if (setjmp(decoder->jump)) {
        decoder->failed = 1;
        return NULL;
    }
    if (!jpeg_read_icc_profile(&decoder->cinfo, &data, &length)) return NULL;
    *count = length;
    return data;
}

void wi_jpeg_free(void *pointer) { free(pointer); }

// MARK: - Decompression

void wi_jpeg_set_keeps_cmyk(wi_jpeg_decoder *decoder, int keeps) {
    decoder->keeps_cmyk = keeps;
}

void wi_jpeg_set_block_smoothing(wi_jpeg_decoder *decoder, int enabled) {
    decoder->cinfo.do_block_smoothing = enabled ? TRUE : FALSE;
}

wi_jpeg_status wi_jpeg_start(wi_jpeg_decoder *decoder, int scale_eighths, int buffered,
                             uint32_t *width, uint32_t *height) {
    WI_TRY(decoder);
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (!decoder->started) {
        if (!decoder->header_done) wi_fail(decoder, "decompression started before the header was read");
        if (scale_eighths < 1 || scale_eighths > 8) wi_fail(decoder, "scale out of range");
        decoder->cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
        // Adobe's inverted CMYK (0 = full ink) whether or not the APP14 marker is there, as
        // Chrome, Firefox and Pillow read it: Photoshop writes nearly every CMYK JPEG, and files
        // without the marker are rare. The marker's transform flag has already told libjpeg
        // whether the four channels are YCCK (2) or CMYK (0).
        decoder->inverted = 1;
        cinfo->scale_num = (unsigned int)scale_eighths;
        cinfo->scale_denom = 8;
        // libjpeg-turbo writes RGBA straight from YCbCr, RGB or grey (alpha 255).
        cinfo->out_color_space = decoder->cmyk ? JCS_CMYK : JCS_EXT_RGBA;
        cinfo->buffered_image = buffered ? TRUE : FALSE;
        decoder->buffered = buffered;
        if (!buffered && jpeg_has_multiple_scans(cinfo) && !decoder->complete) {
            wi_fail(decoder, "a multi-scan file needs buffered-image mode to decode incrementally");
        }
        if (!jpeg_start_decompress(cinfo)) return WI_JPEG_SUSPENDED;
        decoder->started = 1;
    }
    *width = cinfo->output_width;
    *height = cinfo->output_height;
    return WI_JPEG_OK;
}

void wi_jpeg_cmyk_to_rgba(uint8_t *pixels, size_t count, int inverted) {
    // With inverted (Adobe) values, the remaining light per channel is c·k/255. Rounded the
    // way Pillow's CMYK to RGB conversion rounds: r = k - (255 - c)·k/255.
    for (size_t index = 0; index < count; index++) {
        uint8_t *pixel = pixels + index * 4;
        unsigned c = pixel[0], m = pixel[1], y = pixel[2], k = pixel[3];
        if (!inverted) {
            c = 255 - c;
            m = 255 - m;
            y = 255 - y;
            k = 255 - k;
        }
        unsigned t;
        t = (255 - c) * k + 128;
        pixel[0] = (uint8_t)(k - (((t >> 8) + t) >> 8));
        t = (255 - m) * k + 128;
        pixel[1] = (uint8_t)(k - (((t >> 8) + t) >> 8));
        t = (255 - y) * k + 128;
        pixel[2] = (uint8_t)(k - (((t >> 8) + t) >> 8));
        pixel[3] = 255;
    }
}

// Reads rows until the pass is complete or the input runs out. Returns 1 when complete.
static int read_pass_rows(wi_jpeg_decoder *decoder, uint8_t *rgba, size_t stride) {
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    enum { batch = 16 };
    JSAMPROW rows[batch];
    while (cinfo->output_scanline < cinfo->output_height) {
        JDIMENSION first = cinfo->output_scanline;
        JDIMENSION wanted = cinfo->output_height - first;
        if (wanted > batch) wanted = batch;
        for (JDIMENSION index = 0; index < wanted; index++) rows[index] = rgba + (size_t)(first + index) * stride;
        JDIMENSION read = jpeg_read_scanlines(cinfo, rows, wanted);
        if (decoder->cmyk && !decoder->keeps_cmyk) {
            for (JDIMENSION index = 0; index < read; index++) {
                wi_jpeg_cmyk_to_rgba(rows[index], cinfo->output_width, decoder->inverted);
            }
        }
        if (read == 0) return 0;
    }
    return 1;
}

wi_jpeg_status wi_jpeg_read_rows(wi_jpeg_decoder *decoder, uint8_t *rgba, size_t stride, uint32_t *rows) {
    WI_TRY(decoder);
    if (!decoder->started || decoder->buffered) wi_fail(decoder, "rows read before a non-buffered start");
    int complete = read_pass_rows(decoder, rgba, stride);
    *rows = decoder->cinfo.output_scanline;
    return complete ? WI_JPEG_OK : WI_JPEG_SUSPENDED;
}

wi_jpeg_status wi_jpeg_consume(wi_jpeg_decoder *decoder, int *complete_scans, int *finished) {
    WI_TRY(decoder);
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (!decoder->started || !decoder->buffered) wi_fail(decoder, "input consumed before a buffered start");
    int result;
    do {
        result = jpeg_consume_input(cinfo);
        if (cinfo->input_scan_number > WI_JPEG_MAX_SCANS) wi_fail(decoder, "more than 500 scans");
    } while (result != JPEG_SUSPENDED && result != JPEG_REACHED_EOI);
    *finished = result == JPEG_REACHED_EOI;
    // input_scan_number counts scans started; the current one is complete only at the end.
    *complete_scans = *finished ? cinfo->input_scan_number : cinfo->input_scan_number - 1;
    return WI_JPEG_OK;
}

wi_jpeg_status wi_jpeg_output(wi_jpeg_decoder *decoder, int scan, uint8_t *rgba, size_t stride) {
    WI_TRY(decoder);
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (!decoder->started || !decoder->buffered) wi_fail(decoder, "output before a buffered start");
    if (scan < 1) wi_fail(decoder, "no complete scan to show");
    if (!jpeg_start_output(cinfo, scan)) return WI_JPEG_SUSPENDED;
    if (!read_pass_rows(decoder, rgba, stride)) return WI_JPEG_SUSPENDED;
    if (!jpeg_finish_output(cinfo)) return WI_JPEG_SUSPENDED;
    return WI_JPEG_OK;
}

const char *wi_jpeg_message(const wi_jpeg_decoder *decoder) { return decoder->message; }

int wi_jpeg_warnings(const wi_jpeg_decoder *decoder) { return decoder->warnings; }

int wi_jpeg_failed_unsupported(const wi_jpeg_decoder *decoder) { return decoder->unsupported; }

// MARK: - Compression

typedef struct {
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr error;
    struct jpeg_destination_mgr destination;
    jmp_buf jump;
    uint8_t *buffer;
    size_t capacity;
    char *message;
} wi_jpeg_encoder;

static void wi_encoder_error_exit(j_common_ptr cinfo) {
    wi_jpeg_encoder *encoder = (wi_jpeg_encoder *)cinfo;
    (*cinfo->err->format_message)(cinfo, encoder->message);
    longjmp(encoder->jump, 1);
}

static void wi_destination_init(j_compress_ptr cinfo) {
    wi_jpeg_encoder *encoder = (wi_jpeg_encoder *)cinfo;
    encoder->destination.next_output_byte = encoder->buffer;
    encoder->destination.free_in_buffer = encoder->capacity;
}

static boolean wi_destination_grow(j_compress_ptr cinfo) {
    wi_jpeg_encoder *encoder = (wi_jpeg_encoder *)cinfo;
    // libjpeg calls this with the whole buffer full (free_in_buffer is stale).
    size_t capacity = encoder->capacity * 2;
    uint8_t *grown = realloc(encoder->buffer, capacity);
    if (grown == NULL) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    encoder->destination.next_output_byte = grown + encoder->capacity;
    encoder->destination.free_in_buffer = capacity - encoder->capacity;
    encoder->buffer = grown;
    encoder->capacity = capacity;
    return TRUE;
}

static void wi_destination_term(j_compress_ptr cinfo) { (void)cinfo; }

static inline uint8_t over_white(unsigned value, unsigned alpha) {
    // value·alpha/255 + (255 − alpha), rounded.
    return (uint8_t)((value * alpha + 255 * (255 - alpha) + 127) / 255);
}

static inline uint8_t premultiplied_over_white(unsigned value, unsigned alpha) {
    unsigned sum = value + 255 - alpha;
    return (uint8_t)(sum > 255 ? 255 : sum);
}

// Whether every alpha byte of `count` RGBA pixels is 255, eight bytes at a time.
static int rgba_row_is_opaque(const uint8_t *row, size_t count) {
    size_t index = 0;
    uint64_t all = ~(uint64_t)0;
    for (; index + 2 <= count; index += 2) {
        uint64_t pair;
        memcpy(&pair, row + index * 4, 8);
        all &= pair;
    }
    uint64_t alphas = 0xFF000000FF000000ull;
    if ((all & alphas) != alphas) return 0;
    return index == count || row[index * 4 + 3] == 255;
}

wi_jpeg_status wi_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                              wi_jpeg_input input, int quality, int progressive,
                              const uint8_t *icc, size_t icc_count,
                              uint8_t **output, size_t *output_count, char message[200]) {
    enum { strip = 16 };
    *output = NULL;
    *output_count = 0;
    message[0] = 0;
    int gray = input == WI_JPEG_INPUT_GRAY || input == WI_JPEG_INPUT_GRAY_ALPHA;
    size_t out_channels = gray ? 1 : (input == WI_JPEG_INPUT_RGB ? 3 : 4);
    wi_jpeg_encoder *encoder = calloc(1, sizeof *encoder);
    uint8_t *volatile scratch = NULL; // volatile: read after longjmp
    if (encoder == NULL) {
        snprintf(message, 200, "out of memory");
        return WI_JPEG_ERROR;
    }
    encoder->message = message;
    encoder->cinfo.err = jpeg_std_error(&encoder->error);
    encoder->error.error_exit = wi_encoder_error_exit;
    encoder->error.output_message = wi_output_message;
    if (setjmp(encoder->jump)) {
        jpeg_destroy_compress(&encoder->cinfo);
        free(encoder->buffer);
        free(scratch);
        free(encoder);
        return WI_JPEG_ERROR;
    }
    jpeg_create_compress(&encoder->cinfo);
    // A first guess at the size (a q80 photo takes about 1 bit per pixel); grown by doubling.
    encoder->capacity = (size_t)width * height / 4 + 65536;
    encoder->buffer = malloc(encoder->capacity);
    if (encoder->buffer == NULL) ERREXIT1(&encoder->cinfo, JERR_OUT_OF_MEMORY, 11);
    encoder->destination.init_destination = wi_destination_init;
    encoder->destination.empty_output_buffer = wi_destination_grow;
    encoder->destination.term_destination = wi_destination_term;
    encoder->cinfo.dest = &encoder->destination;

    struct jpeg_compress_struct *cinfo = &encoder->cinfo;
    cinfo->image_width = width;
    cinfo->image_height = height;
    cinfo->input_components = (int)out_channels;
    cinfo->in_color_space = gray ? JCS_GRAYSCALE : (out_channels == 3 ? JCS_RGB : JCS_EXT_RGBX);
    jpeg_set_defaults(cinfo);   // JFIF, YCbCr 4:2:0 (or one grey component), Huffman tables
    jpeg_set_quality(cinfo, quality, TRUE);
    // The accurate integer DCT (libjpeg's default, and Pillow's): with libjpeg-turbo's AVX2 code
    // it is as fast here as the "fast" one TurboJPEG picks, and more accurate.
    cinfo->dct_method = JDCT_ISLOW;
    if (progressive) jpeg_simple_progression(cinfo);
    jpeg_start_compress(cinfo, TRUE);
    if (icc != NULL && icc_count > 0) jpeg_write_icc_profile(cinfo, icc, (unsigned int)icc_count);

    int needs_scratch = input == WI_JPEG_INPUT_RGBA || input == WI_JPEG_INPUT_RGBA_PREMULTIPLIED ||
                        input == WI_JPEG_INPUT_GRAY_ALPHA;
    if (needs_scratch) {
        scratch = malloc((size_t)width * out_channels * strip);
        if (scratch == NULL) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 12);
    }
    JSAMPROW rows[strip];
    while (cinfo->next_scanline < height) {
        JDIMENSION first = cinfo->next_scanline;
        JDIMENSION count = height - first < strip ? height - first : strip;
        for (JDIMENSION index = 0; index < count; index++) {
            const uint8_t *row = pixels + (size_t)(first + index) * stride;
            // Inputs read in place have no scratch buffer: no pointer arithmetic on NULL (UB).
            uint8_t *target = scratch != NULL ? scratch + (size_t)index * width * out_channels : NULL;
            switch (input) {
            case WI_JPEG_INPUT_RGBA:
            case WI_JPEG_INPUT_RGBA_PREMULTIPLIED:
                if (rgba_row_is_opaque(row, width)) {
                    rows[index] = (JSAMPROW)row; // read in place: the fourth byte is ignored
                    break;
                }
                for (uint32_t x = 0; x < width; x++) {
                    const uint8_t *p = row + (size_t)x * 4;
                    uint8_t *q = target + (size_t)x * 4;
                    if (input == WI_JPEG_INPUT_RGBA) {
                        q[0] = over_white(p[0], p[3]);
                        q[1] = over_white(p[1], p[3]);
                        q[2] = over_white(p[2], p[3]);
                    } else {
                        q[0] = premultiplied_over_white(p[0], p[3]);
                        q[1] = premultiplied_over_white(p[1], p[3]);
                        q[2] = premultiplied_over_white(p[2], p[3]);
                    }
                    q[3] = 255;
                }
                rows[index] = target;
                break;
            case WI_JPEG_INPUT_GRAY_ALPHA:
                for (uint32_t x = 0; x < width; x++) target[x] = over_white(row[x * 2], row[x * 2 + 1]);
                rows[index] = target;
                break;
            default:
                rows[index] = (JSAMPROW)row;
                break;
            }
        }
        jpeg_write_scanlines(cinfo, rows, count);
    }
    jpeg_finish_compress(cinfo);
    *output_count = encoder->capacity - encoder->destination.free_in_buffer;
    *output = encoder->buffer;
    jpeg_destroy_compress(cinfo);
    free(scratch);
    free(encoder);
    return WI_JPEG_OK;
}
