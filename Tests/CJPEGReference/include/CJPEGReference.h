#ifndef CJPEG_REFERENCE_H
#define CJPEG_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/// The reference the tests and the fuzz-incremental target hold our JPEG decoders to: libjpeg-turbo
/// alone, with none of our code between the bytes and its decoder, decoding through a suspending
/// source that is shown the file's bytes up to each of `ends` in turn (each call seeing every byte
/// so far that libjpeg has not consumed, as an incremental decoder shows them), decoding as far as
/// those bytes allow each time. One end at `size` is a decode of the whole buffer.
///
/// Output: straight RGBA rows (`width * 4` bytes each; a CMYK or YCCK file's CMYK samples, which
/// libjpeg does not convert to RGB) in `*pixels`, allocated with malloc (the
/// caller frees it), at full size, libjpeg's default IDCT and upsampling; `*warnings` is libjpeg's
/// count of corrupt-data warnings. Returns 0 on success, -1 when libjpeg fails, the image has more
/// than `max_pixels` pixels, or the input ends before the last row (libjpeg would make up the rest).
int wi_reference_jpeg_decode(const uint8_t *data, size_t size, const size_t *ends, size_t end_count,
                             size_t max_pixels, uint8_t **pixels, int *width, int *height, long *warnings);

/// A JPEG of three sequential scans, one per component (Y, then Cb, then Cr, none interleaved),
/// encoded by libjpeg-turbo from straight RGB rows at `quality`: a multi-scan file whose first
/// scan already carries the luma's every detail, which a progressive file's first scan (DC
/// only) never does. `*jpeg` is allocated with malloc (the caller frees it). Returns 0, or -1
/// when libjpeg fails.
int wi_reference_jpeg_encode_luma_first(const uint8_t *rgb, int width, int height, int quality,
                                        uint8_t **jpeg, unsigned long *size);

#endif
