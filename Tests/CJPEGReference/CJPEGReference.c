#include "CJPEGReference.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>

struct reference_error {
    struct jpeg_error_mgr manager;
    jmp_buf escape;
};

struct reference_source {
    struct jpeg_source_mgr manager;
    const uint8_t *data;
    size_t shown;        // bytes made visible so far
    size_t pending_skip; // a skip past the visible bytes, applied when more are shown
};

static void fail(j_common_ptr cinfo) {
    longjmp(((struct reference_error *)cinfo->err)->escape, 1);
}

// Warnings are counted by libjpeg's emit_message; nothing is printed.
static void quiet(j_common_ptr cinfo) { (void)cinfo; }

static void init_source(j_decompress_ptr cinfo) { (void)cinfo; }
static void term_source(j_decompress_ptr cinfo) { (void)cinfo; }

// Suspends: the caller shows more bytes and calls libjpeg again.
static boolean fill_input_buffer(j_decompress_ptr cinfo) { (void)cinfo; return FALSE; }

static void skip_input_data(j_decompress_ptr cinfo, long count) {
    struct reference_source *source = (struct reference_source *)cinfo->src;
    if (count <= 0) return;
    size_t skip = (size_t)count;
    if (skip <= source->manager.bytes_in_buffer) {
        source->manager.next_input_byte += skip;
        source->manager.bytes_in_buffer -= skip;
    } else {
        source->pending_skip += skip - source->manager.bytes_in_buffer;
        source->manager.next_input_byte += source->manager.bytes_in_buffer;
        source->manager.bytes_in_buffer = 0;
    }
}

// Shows the bytes up to `end`, keeping the ones libjpeg has not consumed yet.
static void show(struct reference_source *source, size_t end) {
    if (end < source->shown) return;
    size_t unread = (size_t)(source->manager.next_input_byte - source->data);
    unread += source->pending_skip;
    source->pending_skip = 0;
    if (unread > end) {
        source->pending_skip = unread - end;
        unread = end;
    }
    source->shown = end;
    source->manager.next_input_byte = source->data + unread;
    source->manager.bytes_in_buffer = end - unread;
}

int wi_reference_jpeg_decode(const uint8_t *data, size_t size, const size_t *ends, size_t end_count,
                             size_t max_pixels, uint8_t **pixels, int *width, int *height, long *warnings) {
    struct jpeg_decompress_struct cinfo;
    struct reference_error error;
    struct reference_source source = {0};
    // volatile: read after a longjmp.
    uint8_t *volatile output = NULL;
    size_t next = 0;

    *pixels = NULL;
    cinfo.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = fail;
    error.manager.output_message = quiet;
    if (setjmp(error.escape)) {
        free(output);
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    source.data = data;
    source.manager.init_source = init_source;
    source.manager.fill_input_buffer = fill_input_buffer;
    source.manager.skip_input_data = skip_input_data;
    source.manager.resync_to_restart = jpeg_resync_to_restart;
    source.manager.term_source = term_source;
    source.manager.next_input_byte = data;
    cinfo.src = &source.manager;

    // Each stage suspends until enough bytes are shown; the next end is shown then.
#define SHOW_MORE_OR_FAIL() do { \
        if (next == end_count) { jpeg_destroy_decompress(&cinfo); free(output); return -1; } \
        show(&source, ends[next] < size ? ends[next] : size); next++; \
    } while (0)
    SHOW_MORE_OR_FAIL();
    while (jpeg_read_header(&cinfo, TRUE) == JPEG_SUSPENDED) SHOW_MORE_OR_FAIL();
    if ((size_t)cinfo.image_width * cinfo.image_height > max_pixels) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    // libjpeg does not convert CMYK to RGB: a CMYK (or YCCK) file is compared as its CMYK
    // samples, 4 bytes a pixel too.
    cinfo.out_color_space = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK ? JCS_CMYK : JCS_EXT_RGBA;
    while (!jpeg_start_decompress(&cinfo)) SHOW_MORE_OR_FAIL();
    size_t stride = (size_t)cinfo.output_width * 4;
    output = malloc(stride * cinfo.output_height);
    if (output == NULL) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = output + stride * cinfo.output_scanline;
        if (jpeg_read_scanlines(&cinfo, &row, 1) == 0) SHOW_MORE_OR_FAIL();
    }
#undef SHOW_MORE_OR_FAIL
    *pixels = output;
    *width = (int)cinfo.output_width;
    *height = (int)cinfo.output_height;
    *warnings = error.manager.num_warnings;
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

int wi_reference_jpeg_encode_luma_first(const uint8_t *rgb, int width, int height, int quality,
                                        uint8_t **jpeg, unsigned long *size) {
    struct jpeg_compress_struct cinfo;
    struct reference_error error;
    cinfo.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = fail;
    error.manager.output_message = quiet;
    *jpeg = NULL;
    *size = 0;
    if (setjmp(error.escape)) {
        jpeg_destroy_compress(&cinfo);
        free(*jpeg);
        *jpeg = NULL;
        return -1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, jpeg, size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    // One scan per component, each with all 64 coefficients (Ss 0, Se 63: sequential).
    jpeg_scan_info scans[3];
    for (int component = 0; component < 3; component++) {
        scans[component] = (jpeg_scan_info){.comps_in_scan = 1, .component_index = {component}, .Ss = 0, .Se = 63, .Ah = 0, .Al = 0};
    }
    cinfo.scan_info = scans;
    cinfo.num_scans = 3;
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)cinfo.next_scanline * (size_t)width * 3);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return 0;
}
