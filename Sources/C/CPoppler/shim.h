// poppler-glib 22.12 (Poppler's GLib interface, drawing through cairo): its C API, not the C++
// core's headers that pkg-config's -I/usr/include/poppler also exposes. Documents are opened
// from bytes only (poppler_document_new_from_bytes): no file name, so no relative reference
// can resolve against a folder.
#include <poppler.h>
#include <cairo.h>
