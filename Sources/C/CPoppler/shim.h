// poppler-glib 22.12 (Poppler's GLib interface, drawing through cairo): its C API, not the C++
// core's headers. Documents are opened from bytes only (poppler_document_new_from_bytes): no
// file name, so no relative reference can resolve against a folder.
//
// By its full path, with no pkg-config flags of its own (poppler's headers include each other
// with quotes; the GLib and cairo paths come from CRsvg's pkg-config). The library is not
// linked: CLazyLibraries opens it when the first PDF is.
#include <poppler/glib/poppler.h>
#include <cairo.h>
