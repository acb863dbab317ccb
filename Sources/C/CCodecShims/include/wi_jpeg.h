#ifndef WI_JPEG_H
#define WI_JPEG_H

// The JPEG coder's C: a libjpeg decompressor that owns the setjmp libjpeg's error handling
// needs (Swift cannot call functions that return twice), with a source manager that can
// suspend when bytes run out and resume where it stopped when more arrive. The JPEG decoder
// uses it for what TurboJPEG cannot do: reading the APP markers (EXIF, ICC), CMYK and YCCK,
// and incremental decoding (row by row for single-scan files, buffered-image mode for
// progressive ones). And a libjpeg compressor that composites alpha strip by strip while
// encoding and writes the ICC profile.

#include <stddef.h>
#include <stdint.h>

/// Result of a call: done, waiting for more bytes, or failed (see wi_jpeg_message).
typedef enum {
    WI_JPEG_ERROR = -1,
    WI_JPEG_OK = 0,
    WI_JPEG_SUSPENDED = 1,
} wi_jpeg_status;

/// The colour model the file stores, as libjpeg determined it from the markers.
typedef enum {
    WI_JPEG_COLOR_UNKNOWN = 0,
    WI_JPEG_COLOR_GRAY = 1,
    WI_JPEG_COLOR_RGB = 2,
    WI_JPEG_COLOR_YCBCR = 3,
    WI_JPEG_COLOR_CMYK = 4,
    WI_JPEG_COLOR_YCCK = 5,
} wi_jpeg_color;

/// What the header says, once wi_jpeg_read_header returned WI_JPEG_OK.
typedef struct {
    uint32_t width;
    uint32_t height;
    int32_t components;
    int32_t color;              // wi_jpeg_color
    int32_t progressive;        // SOF2/SOF10
    int32_t arithmetic;         // SOF9-SOF11
    int32_t multiple_scans;     // progressive, or a sequential file with several scans
    int32_t saw_adobe_marker;   // APP14 "Adobe"
    int32_t adobe_transform;    // 0 = none (RGB/CMYK), 1 = YCbCr, 2 = YCCK
} wi_jpeg_info;

/// Progressive files with more scans than this are refused: each scan can cost a pass over
/// the whole coefficient buffer, so a small hostile file could otherwise burn minutes of CPU.
/// (The same limit TurboJPEG's TJFLAG_LIMITSCANS applies.)
#define WI_JPEG_MAX_SCANS 500

typedef struct wi_jpeg_decoder wi_jpeg_decoder;

/// A new decompressor, or NULL when out of memory.
wi_jpeg_decoder *wi_jpeg_create(void);
void wi_jpeg_destroy(wi_jpeg_decoder *decoder);

/// Decodes from `count` bytes the caller keeps alive and unchanged until wi_jpeg_destroy; the
/// input is complete (running out inserts an end-of-image marker, with a warning, as
/// libjpeg's memory source does). Use either this or wi_jpeg_append, not both.
void wi_jpeg_set_input(wi_jpeg_decoder *decoder, const uint8_t *bytes, size_t count);
/// Copies the next `count` bytes of the file into the decoder's own buffer (which keeps only
/// what libjpeg has not consumed yet).
wi_jpeg_status wi_jpeg_append(wi_jpeg_decoder *decoder, const uint8_t *bytes, size_t count);
/// No more bytes will be appended: from now on running out ends the image.
void wi_jpeg_end_input(wi_jpeg_decoder *decoder);

/// Reads the markers up to the first scan. WI_JPEG_SUSPENDED when the bytes so far stop first.
wi_jpeg_status wi_jpeg_read_header(wi_jpeg_decoder *decoder, wi_jpeg_info *info);
/// Bytes of the file after the header (the first scan's data onwards) received so far.
size_t wi_jpeg_scan_bytes(const wi_jpeg_decoder *decoder);
/// Bytes the decoder holds in its own input buffer: what libjpeg has not consumed yet.
size_t wi_jpeg_buffered_bytes(const wi_jpeg_decoder *decoder);
/// The TIFF block of the first APP1 `Exif\0\0` segment, or NULL. Valid until destroy.
const uint8_t *wi_jpeg_exif(const wi_jpeg_decoder *decoder, size_t *count);
/// The ICC profile reassembled from the APP2 `ICC_PROFILE` chunks in sequence order, or NULL
/// when there is none or the chunks are inconsistent. Free with wi_jpeg_free.
uint8_t *wi_jpeg_copy_icc(wi_jpeg_decoder *decoder, size_t *count);
void wi_jpeg_free(void *pointer);

/// Turns libjpeg's block smoothing (on by default) off or on, before wi_jpeg_start. Smoothing
/// estimates missing coefficients of progressive files from their neighbours' DC values,
/// which is what a decode of only the DC scans must not do (see JPEGScanFilter.swift).
void wi_jpeg_set_block_smoothing(wi_jpeg_decoder *decoder, int enabled);

/// With `keeps` set, a CMYK or YCCK file's rows are left as libjpeg gives them (four samples a
/// pixel, Adobe's inverted CMYK), not converted to RGBA: the caller converts them through the
/// file's CMYK profile. Set before the rows are read.
void wi_jpeg_set_keeps_cmyk(wi_jpeg_decoder *decoder, int keeps);

/// Starts decompression at `scale_eighths`/8 of the stored size (1...8) to RGBA (CMYK and
/// YCCK are converted, read as Adobe's inverted CMYK). `buffered` selects libjpeg's
/// buffered-image mode (for incremental multi-scan files). Reports the output size.
/// Non-buffered multi-scan decoding reads the whole file first: only with complete input.
wi_jpeg_status wi_jpeg_start(wi_jpeg_decoder *decoder, int scale_eighths, int buffered,
                             uint32_t *width, uint32_t *height);
/// Non-buffered mode: decodes rows into `rgba` (row y at `rgba + y * stride`) until the image
/// is complete (WI_JPEG_OK) or the bytes run out (WI_JPEG_SUSPENDED). `rows` is how many rows
/// are complete.
wi_jpeg_status wi_jpeg_read_rows(wi_jpeg_decoder *decoder, uint8_t *rgba, size_t stride, uint32_t *rows);
/// Buffered mode: reads every byte available into the coefficient buffer. `complete_scans`
/// counts the scans fully received; `finished` is set once the end of the image is reached.
wi_jpeg_status wi_jpeg_consume(wi_jpeg_decoder *decoder, int *complete_scans, int *finished);
/// Buffered mode: one output pass showing what has been received up to scan `scan`, into
/// `rgba`. Never suspends when `scan` is complete.
wi_jpeg_status wi_jpeg_output(wi_jpeg_decoder *decoder, int scan, uint8_t *rgba, size_t stride);

/// Why the last call failed (or the first warning, after a success with warnings).
const char *wi_jpeg_message(const wi_jpeg_decoder *decoder);
/// Whether the failure was a valid variant this libjpeg build does not decode (12-bit samples,
/// lossless or hierarchical JPEG) rather than damaged data.
int wi_jpeg_failed_unsupported(const wi_jpeg_decoder *decoder);
/// How many warnings libjpeg raised: corrupt or truncated data it decoded past.
int wi_jpeg_warnings(const wi_jpeg_decoder *decoder);

/// CMYK (as libjpeg outputs it) to opaque RGBA, in place, `count` pixels. `inverted` for
/// Adobe's convention (0 = full ink), which is what almost every CMYK JPEG stores.
void wi_jpeg_cmyk_to_rgba(uint8_t *pixels, size_t count, int inverted);

/// Pixel layouts wi_jpeg_encode reads.
typedef enum {
    WI_JPEG_INPUT_RGBA = 0,                 // straight alpha
    WI_JPEG_INPUT_RGBA_PREMULTIPLIED = 1,
    WI_JPEG_INPUT_RGBX = 2,                 // 4 bytes per pixel, the fourth ignored (opaque)
    WI_JPEG_INPUT_RGB = 3,
    WI_JPEG_INPUT_GRAY = 4,
    WI_JPEG_INPUT_GRAY_ALPHA = 5,           // straight alpha
} wi_jpeg_input;

/// Encodes `height` rows of `width` pixels (row y at `pixels + y * stride`) as a JFIF JPEG:
/// quality 1-100, 4:2:0 chroma (grey input: one component), baseline or progressive, with
/// `icc` written as APP2 chunks when not NULL. Pixels that are not opaque are composited over
/// white, strip by strip while encoding, so opaque RGBA costs no extra pass over the image.
/// On success returns WI_JPEG_OK and a buffer to free with wi_jpeg_free; otherwise
/// WI_JPEG_ERROR with the reason in `message` (JMSG_LENGTH_MAX = 200 bytes).
wi_jpeg_status wi_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                              wi_jpeg_input input, int quality, int progressive,
                              const uint8_t *icc, size_t icc_count,
                              uint8_t **output, size_t *output_count, char message[200]);

/// lcms2's TYPE_RGBA_8 and TYPE_RGB_8 pixel types (for the conversion to sRGB), which Swift
/// cannot import: they are composite macros.
extern const uint32_t wi_lcms_type_rgba_8;
extern const uint32_t wi_lcms_type_rgb_8;
/// TYPE_CMYK_8_REV: CMYK with 0 as full ink (Adobe's inverted CMYK, as libjpeg gives it).
extern const uint32_t wi_lcms_type_cmyk_8_rev;
/// Grey read from the first byte of an RGBA8 or RGB8 pixel (the others skipped as extra
/// channels): a grey image, which the decoders replicate to R, G and B.
extern const uint32_t wi_lcms_type_gray_in_rgba_8;
extern const uint32_t wi_lcms_type_gray_in_rgb_8;

#endif
