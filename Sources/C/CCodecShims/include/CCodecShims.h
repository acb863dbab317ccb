#ifndef WEBIMAGE_CCODECSHIMS_H
#define WEBIMAGE_CCODECSHIMS_H

// The little C that Swift cannot express. Swift does not import composite macros such as
// PNG_FORMAT_RGBA, so they are re-exported here as constants; the setjmp-owning libjpeg and
// libpng wrappers (issue "Codecs and image operations") will live beside them.

#include <stdint.h>

/// libpng's simplified-API format for 8-bit straight-alpha RGBA.
extern const uint32_t wi_png_format_rgba;

/// The libjpeg-turbo and libpng versions this binary was built against, for diagnostics.
int wi_jpeg_lib_version(void);
const char *wi_png_lib_version(void);

// One header per coder, so each coder's C lives apart.
#include "wi_jpeg.h"
#include "wi_png.h"
#include "wi_webp.h"
#include "wi_spawn.h"

#endif
