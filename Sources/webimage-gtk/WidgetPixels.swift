import CGTK
import CWebImageGTK
import Foundation
import WebImage

/// A widget as GTK's renderer draws it, read back (`wi_gtk_widget_rgba`): what the screenshot
/// writes and what the automation samples cell by cell.
struct WidgetPixels {
    let width: Int
    let height: Int
    /// R, G, B, A (premultiplied) per pixel, rows of `width * 4` bytes.
    let rgba: [UInt8]

    /// `nil` when the widget is not mapped or has no size.
    @MainActor init?(of widget: UnsafeMutablePointer<GtkWidget>) {
        var width: Int32 = 0, height: Int32 = 0
        guard let pixels = wi_gtk_widget_rgba(widget, &width, &height) else { return nil }
        defer { g_free(pixels) }
        self.width = Int(width)
        self.height = Int(height)
        rgba = Array(UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height) * 4))
    }

    /// The colour at (`x`, `y`) as `RRGGBB`.
    func hex(x: Int, y: Int) -> String {
        let offset = (y * width + x) * 4
        return String(format: "%02x%02x%02x", rgba[offset], rgba[offset + 1], rgba[offset + 2])
    }

    /// The pixels as an opaque RGB bitmap (the window has an opaque background).
    func rgbBitmap() throws -> Bitmap {
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        for index in 0..<(width * height) {
            rgb[index * 3] = rgba[index * 4]
            rgb[index * 3 + 1] = rgba[index * 4 + 1]
            rgb[index * 3 + 2] = rgba[index * 4 + 2]
        }
        return try Bitmap(width: width, height: height, pixelFormat: .rgb8, pixels: rgb)
    }
}

/// Work done between GTK's frames, where what the window shows is settled.
///
/// A frame runs its update, layout and paint phases in one go. Between frames anything may
/// change the widgets: a scroll, a cell bound to a new item, an image delivered through the main
/// queue, each queueing a new layout, and a widget waiting for its allocation draws nothing
/// (it would read back as a hole). Right after a paint, the layout the window was painted with
/// is complete: that is where the gallery reads itself back.
@MainActor
enum FrameClock {
    /// Calls `body` right after each frame the window of `widget` paints (asking for frames
    /// meanwhile), until `body` returns `false`. `widget` must be realized.
    static func afterEachPaint(of widget: UnsafeMutablePointer<GtkWidget>, _ body: @escaping @MainActor () -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            PaintWatcher(widget: widget, body: body, continuation: continuation).start()
        }
    }
}

/// One ``FrameClock/afterEachPaint(of:_:)``: a handler of the frame clock's `after-paint`
/// signal, which keeps itself alive (retained through the signal's user data) until `body` is done.
@MainActor
private final class PaintWatcher {
    let widget: UnsafeMutablePointer<GtkWidget>
    let body: @MainActor () -> Bool
    let continuation: CheckedContinuation<Void, Never>
    private var clock: OpaquePointer?
    private var handler: gulong = 0

    init(widget: UnsafeMutablePointer<GtkWidget>, body: @escaping @MainActor () -> Bool, continuation: CheckedContinuation<Void, Never>) {
        self.widget = widget
        self.body = body
        self.continuation = continuation
    }

    func start() {
        clock = gtk_widget_get_frame_clock(widget)
        let me = Unmanaged.passRetained(self).toOpaque()
        handler = wi_gtk_signal_connect(UnsafeMutableRawPointer(clock), "after-paint", unsafeBitCast(Self.onAfterPaint, to: GCallback.self), me)
        gtk_widget_queue_draw(widget)
    }

    /// Whether to go on watching.
    private func painted() -> Bool {
        if body() {
            gtk_widget_queue_draw(widget)
            return true
        }
        g_signal_handler_disconnect(UnsafeMutableRawPointer(clock), handler)
        continuation.resume()
        return false
    }

    /// GTK emits on the main thread; the address crosses into the main actor as a plain number.
    private static let onAfterPaint: @convention(c) (OpaquePointer?, gpointer?) -> Void = { _, data in
        guard let address = data.map({ UInt(bitPattern: $0) }) else { return }
        MainActor.assumeIsolated {
            let watcher = Unmanaged<PaintWatcher>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)
            // Released once done, after `painted` has returned: never while it runs.
            if !watcher.takeUnretainedValue().painted() { watcher.release() }
        }
    }
}
