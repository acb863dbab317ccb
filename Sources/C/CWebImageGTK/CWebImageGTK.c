#include "CWebImageGTK.h"

#include <glib-unix.h>
#include <stdint.h>
#include <unistd.h>

// libdispatch's run-loop integration (what CoreFoundation's run loop uses on Linux): the main
// queue's wake-up eventfd, and the call that runs what the main queue holds. Not in a public
// header, but exported by every libdispatch Swift ships on Linux.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);

static gboolean wi_drain_main_queue(gint fd, GIOCondition condition, gpointer data) {
    (void)condition;
    (void)data;
    uint64_t count;
    // Reset the eventfd (non-blocking: another reader may have emptied it), then run the jobs.
    (void)!read(fd, &count, sizeof count);
    _dispatch_main_queue_callback_4CF(NULL);
    return G_SOURCE_CONTINUE;
}

void wi_gtk_install_main_queue_source(void) {
    static gsize installed = 0;
    if (g_once_init_enter(&installed)) {
        g_unix_fd_add(_dispatch_get_main_queue_handle_4CF(), G_IO_IN, wi_drain_main_queue, NULL);
        g_once_init_leave(&installed, 1);
    }
}

gulong wi_gtk_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data) {
    return g_signal_connect(instance, signal, handler, data);
}

GdkTexture *wi_gtk_texture_new(int width, int height, GdkMemoryFormat format, const guchar *pixels, gsize stride) {
    GBytes *bytes = g_bytes_new(pixels, stride * (gsize)height);
    GdkTexture *texture = gdk_memory_texture_new(width, height, format, bytes, stride);
    g_bytes_unref(bytes);
    return texture;
}

guchar *wi_gtk_widget_rgba(GtkWidget *widget, int *width, int *height) {
    int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
    if (!gtk_widget_get_mapped(widget) || w <= 0 || h <= 0) return NULL;
    GskRenderer *renderer = gtk_native_get_renderer(gtk_widget_get_native(widget));
    GdkPaintable *paintable = gtk_widget_paintable_new(widget);
    GtkSnapshot *snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, GDK_SNAPSHOT(snapshot), w, h);
    g_object_unref(paintable);
    GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
    guchar *rgba = g_malloc0((gsize)w * h * 4);
    if (node) {
        graphene_rect_t viewport = GRAPHENE_RECT_INIT(0, 0, w, h);
        GdkTexture *texture = gsk_renderer_render_texture(renderer, node, &viewport);
        gsk_render_node_unref(node);
        // gdk_texture_download gives B, G, R, A (premultiplied) in memory: swap to R, G, B, A.
        gdk_texture_download(texture, rgba, (gsize)w * 4);
        g_object_unref(texture);
        for (gsize i = 0; i < (gsize)w * h * 4; i += 4) {
            guchar blue = rgba[i];
            rgba[i] = rgba[i + 2];
            rgba[i + 2] = blue;
        }
    }
    *width = w;
    *height = h;
    return rgba;
}
