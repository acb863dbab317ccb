// poppler-glib 22.12 (Debian 12), loaded when first used: see include/wi_lazy_libraries.h. Every
// poppler-glib function the Swift code in Sources/WebImageCodecs calls is defined here, hidden,
// under its own name and with its header's prototype, and forwards to the library's function.
// GLib, GObject and cairo stay linked (librsvg links them anyway).
#include "wi_lazy_libraries.h"
#include "wi_lazy_load.h"

// poppler's headers declare every function with visibility("default") (POPPLER_PUBLIC), and a
// declaration's visibility wins over a later definition's: empty, the hidden definitions below
// stay hidden.
#define POPPLER_PUBLIC
#include <poppler/glib/poppler.h>

enum { WI_POPPLER_GLIB, WI_POPPLER_LIBRARIES };

/// The soname, poppler-glib's (libpoppler-glib8).
static const char *const wi_poppler_sonames[WI_POPPLER_LIBRARIES] = {
    [WI_POPPLER_GLIB] = "libpoppler-glib.so.8",
};

/// Every function forwarded.
#define WI_POPPLER_FUNCTIONS(X)                          \
    X(WI_POPPLER_GLIB, poppler_document_get_n_pages)     \
    X(WI_POPPLER_GLIB, poppler_document_get_page)        \
    X(WI_POPPLER_GLIB, poppler_document_new_from_bytes)  \
    X(WI_POPPLER_GLIB, poppler_error_quark)              \
    X(WI_POPPLER_GLIB, poppler_get_version)              \
    X(WI_POPPLER_GLIB, poppler_page_get_size)            \
    X(WI_POPPLER_GLIB, poppler_page_render)

WI_LAZY_DEFINE(poppler, "poppler-glib", wi_poppler_sonames, WI_POPPLER_FUNCTIONS)

WI_HIDDEN int poppler_document_get_n_pages(PopplerDocument *document) {
    return WI_LAZY(poppler_document_get_n_pages)(document);
}

WI_HIDDEN PopplerPage *poppler_document_get_page(PopplerDocument *document, int index) {
    return WI_LAZY(poppler_document_get_page)(document, index);
}

WI_HIDDEN PopplerDocument *poppler_document_new_from_bytes(GBytes *bytes, const char *password, GError **error) {
    return WI_LAZY(poppler_document_new_from_bytes)(bytes, password, error);
}

WI_HIDDEN GQuark poppler_error_quark(void) {
    return WI_LAZY(poppler_error_quark)();
}

WI_HIDDEN const char *poppler_get_version(void) {
    return WI_LAZY(poppler_get_version)();
}

WI_HIDDEN void poppler_page_get_size(PopplerPage *page, double *width, double *height) {
    WI_LAZY(poppler_page_get_size)(page, width, height);
}

WI_HIDDEN void poppler_page_render(PopplerPage *page, cairo_t *cairo) {
    WI_LAZY(poppler_page_render)(page, cairo);
}
