// The loader both forwarding files share (an internal header: not part of the module).
#ifndef WI_LAZY_LOAD_H
#define WI_LAZY_LOAD_H

#include <dlfcn.h>
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

#endif
