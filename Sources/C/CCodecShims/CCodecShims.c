#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>
#include <png.h>
#include "CCodecShims.h"

const uint32_t wi_png_format_rgba = PNG_FORMAT_RGBA;

int wi_jpeg_lib_version(void) { return JPEG_LIB_VERSION; }

const char *wi_png_lib_version(void) { return PNG_LIBPNG_VER_STRING; }
