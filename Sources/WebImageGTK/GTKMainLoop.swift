import CWebImageGTK

/// Swift concurrency inside a GTK application: after ``install()``, jobs of the main actor
/// (`@MainActor` code, `await MainActor.run`, the binder's main-actor delivery) run on GLib's
/// default main context, between GTK's own events, on the main thread.
///
/// A GTK application's main thread runs GLib's loop (`g_application_run`, `gtk_window_present`
/// and a `GMainLoop`), never `dispatch_main()`, so nothing would run what Swift sends to the
/// main actor. The fix is the one CoreFoundation's run loop uses on Linux: a GLib source on the
/// wake-up descriptor of libdispatch's main queue.
///
/// ```swift
/// GTKMainLoop.install()   // on the main thread, before the GLib loop runs
/// Task { @MainActor in
///     let view = WebImageView()   // pack view.widget into a window, then:
///     view.setImage(with: URL(string: "https://example.com/a.jpg"), using: .shared)
/// }
/// ```
public enum GTKMainLoop {
    /// Makes GLib's default main context run the main actor's jobs. Idempotent; call it on
    /// the main thread before the GLib loop starts.
    public static func install() {
        wi_gtk_install_main_queue_source()
    }
}
