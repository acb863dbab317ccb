#ifndef CWEBIMAGEGTK_H
#define CWEBIMAGEGTK_H

#include <gtk/gtk.h>

/// Makes GLib's default main context drain libdispatch's main queue, where Swift's main actor
/// enqueues its jobs: a GLib source on the queue's wake-up descriptor. Idempotent.
void wi_gtk_install_main_queue_source(void);

/// `g_signal_connect`, a macro Swift cannot call.
gulong wi_gtk_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data);

/// A GdkTexture over a copy of `pixels` (`width` × `height`, `stride` bytes a row) in `format`.
GdkTexture *wi_gtk_texture_new(int width, int height, GdkMemoryFormat format, const guchar *pixels, gsize stride);

/// Renders `widget` as its window's renderer draws it and copies the pixels, R, G, B, A
/// (premultiplied) per pixel, into a new buffer of width × height × 4 bytes (free with g_free).
/// NULL when the widget is not mapped or has no size.
guchar *wi_gtk_widget_rgba(GtkWidget *widget, int *width, int *height);

#endif
