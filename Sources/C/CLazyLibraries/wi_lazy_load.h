// The loader every forwarding file shares (an internal header: not part of the module).
#ifndef WI_LAZY_LOAD_H
#define WI_LAZY_LOAD_H

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// One function to resolve: the index of its library in the sonames given to wi_lazy_load, its
/// name, and where its address goes (a function pointer, stored through a void *: the dlsym
/// idiom POSIX documents).
typedef struct {
    int library;
    const char *name;
    void **slot;
} wi_lazy_symbol;

/// Opens each soname (RTLD_NOW | RTLD_LOCAL: nothing is added to the global scope, so no
/// library loaded later binds to these) and resolves each symbol from its own library. Returns 1
/// when all resolved; else 0, with the reason in `failure` and every slot cleared. The libraries
/// are never closed, not even after a failure (a library that registered GObject types, or
/// whose constructors ran, is not safe to unload; a failure happens once a process).
static int wi_lazy_load(const char *const *sonames, void **handles, int libraryCount,
                        const wi_lazy_symbol *symbols, int symbolCount, char *failure, size_t failureSize) {
    for (int i = 0; i < libraryCount; i++) handles[i] = NULL;
    int ok = 1;
    for (int i = 0; ok && i < libraryCount; i++) {
        handles[i] = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (handles[i] == NULL) {
            const char *why = dlerror();
            snprintf(failure, failureSize, "%s", why != NULL ? why : sonames[i]);
            ok = 0;
        }
    }
    for (int i = 0; ok && i < symbolCount; i++) {
        dlerror();
        *symbols[i].slot = dlsym(handles[symbols[i].library], symbols[i].name);
        if (*symbols[i].slot == NULL) {
            const char *why = dlerror();
            snprintf(failure, failureSize, "%s: %s", sonames[symbols[i].library], why != NULL ? why : symbols[i].name);
            ok = 0;
        }
    }
    if (!ok) {
        for (int i = 0; i < symbolCount; i++) *symbols[i].slot = NULL;
    }
    return ok;
}

/// A forwarder reached while its library is unavailable: the decoders check first, so this is
/// a programming error.
__attribute__((noreturn)) static void wi_lazy_unavailable(const char *library, const char *function, const char *failure) {
    fprintf(stderr, "webimage: %s() called, but %s could not be loaded: %s\n", function, library, failure);
    abort();
}

#define WI_HIDDEN __attribute__((visibility("hidden")))

// One forwarding file loads one set of libraries (one translation unit, one table).
#define WI_LAZY_SLOT(library, name) __typeof__(&name) name;
#define WI_LAZY_SYMBOL(library, name) {library, #name, (void **)&wi_table.name},

/// Defines, in the file that forwards to the libraries `sonames` (an array), the table of the
/// addresses of `FUNCTIONS` (an X-macro list of `X(index in sonames, name)`, each slot typed
/// as a pointer to the function its header declares), their one-time load under pthread_once,
/// `wi_lazy_<set>_available()` and `wi_lazy_<set>_failure()` (include/wi_lazy_libraries.h), and
/// `wi_require`, which `WI_LAZY(name)` calls: the loaded table, or an abort naming `display`.
#define WI_LAZY_DEFINE(set, display, sonames, FUNCTIONS)                                            \
    static struct {                                                                                \
        FUNCTIONS(WI_LAZY_SLOT)                                                                    \
    } wi_table;                                                                                    \
    static pthread_once_t wi_once = PTHREAD_ONCE_INIT;                                             \
    static int wi_loaded;                                                                          \
    static char wi_failure_text[512];                                                              \
    static void wi_load(void) {                                                                    \
        static const wi_lazy_symbol symbols[] = {FUNCTIONS(WI_LAZY_SYMBOL)};                       \
        enum { count = (int)(sizeof sonames / sizeof sonames[0]) };                                \
        void *handles[count];                                                                      \
        wi_loaded = wi_lazy_load(sonames, handles, count, symbols, (int)(sizeof symbols / sizeof symbols[0]), \
                                 wi_failure_text, sizeof wi_failure_text);                         \
    }                                                                                              \
    int wi_lazy_##set##_available(void) {                                                          \
        pthread_once(&wi_once, wi_load);                                                           \
        return wi_loaded;                                                                          \
    }                                                                                              \
    const char *wi_lazy_##set##_failure(void) {                                                    \
        return wi_lazy_##set##_available() ? NULL : wi_failure_text;                               \
    }                                                                                              \
    static inline __attribute__((always_inline)) const __typeof__(wi_table) *wi_require(const char *function) { \
        if (!wi_lazy_##set##_available()) wi_lazy_unavailable(display, function, wi_failure_text); \
        return &wi_table;                                                                          \
    }

/// The address of `name` in its library, loaded first if it is not yet.
#define WI_LAZY(name) (wi_require(#name)->name)

#endif
