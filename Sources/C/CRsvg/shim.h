// librsvg 2.54 renders through cairo. Its handle-from-data call gives the document no base URL,
// which is what keeps every external reference (images, xi:include, stylesheets) from loading.
#define RSVG_DISABLE_DEPRECATION_WARNINGS
#include <librsvg/rsvg.h>
#include <cairo.h>
