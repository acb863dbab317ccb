// dav1d's log, silenced. libavif 0.11 (and libheif's dav1d plugin) open dav1d with its default
// settings, whose logger writes every stream error to standard error ("Error parsing OBU
// data"), and give the application no way to change it. The same failure reaches us as an
// error result, so the line says nothing new; in a server it is a line on stderr for every
// corrupt AVIF any client sends.
//
// This program's definition of dav1d_default_settings comes before libdav1d's in symbol
// lookup (the executable is searched first), so libavif and libheif call it: it asks libdav1d
// for the real defaults (RTLD_NEXT) and then removes the logger, which dav1d_log checks
// before it formats anything. Nothing else in the settings changes.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <dav1d/dav1d.h>

void dav1d_default_settings(Dav1dSettings *settings) {
    typedef void (*defaults_t)(Dav1dSettings *);
    // Decodes open dav1d on many threads at once: the pointer is read and written atomically
    // (every thread that looks it up stores the same value).
    static defaults_t cached;
    defaults_t real_defaults = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (real_defaults == NULL) {
        real_defaults = (defaults_t)dlsym(RTLD_NEXT, "dav1d_default_settings");
        __atomic_store_n(&cached, real_defaults, __ATOMIC_RELEASE);
    }
    if (real_defaults != NULL) {
        real_defaults(settings);
    }
    settings->logger.callback = NULL;
}
