import CGTK
import CWebImageGTK
import Foundation

/// GDK's keysym for Escape (`GDK_KEY_Escape`, a macro Swift does not import).
private let escapeKey: guint = 0xff1b

extension GalleryWindow {
    /// The back button and Escape return to the grid; closing the window ends the program; a
    /// timer refreshes the status line.
    func connectSignals() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = wi_gtk_signal_connect(backButton, "clicked", unsafeBitCast(Self.onBack, to: GCallback.self), me)
        let keys = gtk_event_controller_key_new()!
        _ = wi_gtk_signal_connect(UnsafeMutableRawPointer(keys), "key-pressed", unsafeBitCast(Self.onKey, to: GCallback.self), me)
        gtk_widget_add_controller(UnsafeMutableRawPointer(window).assumingMemoryBound(to: GtkWidget.self), keys)
        _ = wi_gtk_signal_connect(window, "destroy", unsafeBitCast(Self.onDestroy, to: GCallback.self), me)
        _ = g_timeout_add(250, Self.onStatusTimer, me)
    }

    /// The window for a signal's user data: it lives until the program ends, and GTK emits on
    /// the main thread, so the address crosses into the main actor as a plain number.
    private static func window(_ data: gpointer?, _ body: @MainActor (GalleryWindow) -> Void) {
        guard let address = data.map({ UInt(bitPattern: $0) }) else { return }
        MainActor.assumeIsolated {
            body(Unmanaged<GalleryWindow>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue())
        }
    }

    private static let onBack: @convention(c) (UnsafeMutablePointer<GtkWidget>?, gpointer?) -> Void = { _, data in
        window(data) { $0.showGrid() }
    }

    private static let onKey: @convention(c) (OpaquePointer?, guint, guint, GdkModifierType, gpointer?) -> gboolean = { _, key, _, _, data in
        guard key == escapeKey else { return 0 }
        window(data) { $0.showGrid() }
        return 1
    }

    private static let onDestroy: @convention(c) (UnsafeMutablePointer<GtkWidget>?, gpointer?) -> Void = { _, data in
        window(data) { $0.closed() }
    }

    private static let onStatusTimer: @convention(c) (gpointer?) -> gboolean = { data in
        window(data) { $0.updateStatus() }
        return 1   // G_SOURCE_CONTINUE
    }
}
