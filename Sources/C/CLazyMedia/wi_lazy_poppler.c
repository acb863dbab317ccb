// poppler-glib 22.12 (Debian 12), loaded when first used: see include/wi_lazy_media.h. Every
// poppler-glib function the Swift code in Sources/WebImageCodecs calls is defined here, hidden,
// under its own name and with its header's prototype, and forwards to the library's function.
// GLib, GObject and cairo stay linked (librsvg links them anyway).
#include "wi_lazy_media.h"
#include "wi_lazy_load.h"

#include <pthread.h>

// poppler's headers declare every function with visibility("default") (POPPLER_PUBLIC), and a
// declaration's visibility wins over a later definition's: empty, the hidden definitions below
// stay hidden.
#define POPPLER_PUBLIC
#include <poppler/glib/poppler.h>

#define WI_HIDDEN __attribute__((visibility("hidden")))

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

/// The functions' addresses, each typed as a pointer to the function its header declares.
static struct {
#define WI_SLOT(library, name) __typeof__(&name) name;
    WI_POPPLER_FUNCTIONS(WI_SLOT)
#undef WI_SLOT
} wi_poppler;

static pthread_once_t wi_poppler_once = PTHREAD_ONCE_INIT;
static int wi_poppler_loaded;
static char wi_poppler_failure_text[512];

static void wi_poppler_load(void) {
    static const wi_lazy_symbol symbols[] = {
#define WI_SYMBOL(library, name) {library, #name, (void **)&wi_poppler.name},
        WI_POPPLER_FUNCTIONS(WI_SYMBOL)
#undef WI_SYMBOL
    };
    void *handles[WI_POPPLER_LIBRARIES];
    wi_poppler_loaded = wi_lazy_load(wi_poppler_sonames, handles, WI_POPPLER_LIBRARIES, symbols,
                                     (int)(sizeof symbols / sizeof symbols[0]),
                                     wi_poppler_failure_text, sizeof wi_poppler_failure_text);
}

int wi_lazy_poppler_available(void) {
    pthread_once(&wi_poppler_once, wi_poppler_load);
    return wi_poppler_loaded;
}

const char *wi_lazy_poppler_failure(void) {
    return wi_lazy_poppler_available() ? NULL : wi_poppler_failure_text;
}

/// The loaded functions; aborts, naming `function`, when poppler-glib could not be loaded.
static inline __attribute__((always_inline)) const __typeof__(wi_poppler) *wi_poppler_require(const char *function) {
    if (!wi_lazy_poppler_available()) wi_lazy_unavailable("poppler-glib", function, wi_poppler_failure_text);
    return &wi_poppler;
}

/// The address of `name` in poppler-glib.
#define WI_PG(name) (wi_poppler_require(#name)->name)

WI_HIDDEN int poppler_document_get_n_pages(PopplerDocument *document) {
    return WI_PG(poppler_document_get_n_pages)(document);
}

WI_HIDDEN PopplerPage *poppler_document_get_page(PopplerDocument *document, int index) {
    return WI_PG(poppler_document_get_page)(document, index);
}

WI_HIDDEN PopplerDocument *poppler_document_new_from_bytes(GBytes *bytes, const char *password, GError **error) {
    return WI_PG(poppler_document_new_from_bytes)(bytes, password, error);
}

WI_HIDDEN GQuark poppler_error_quark(void) {
    return WI_PG(poppler_error_quark)();
}

WI_HIDDEN const char *poppler_get_version(void) {
    return WI_PG(poppler_get_version)();
}

WI_HIDDEN void poppler_page_get_size(PopplerPage *page, double *width, double *height) {
    WI_PG(poppler_page_get_size)(page, width, height);
}

WI_HIDDEN void poppler_page_render(PopplerPage *page, cairo_t *cairo) {
    WI_PG(poppler_page_render)(page, cairo);
}
