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

/// Waiting for GTK's frame clock.
@MainActor
enum FrameClock {
    /// Returns after the next frame of `widget`'s window has been laid out. A tick callback
    /// runs in the frame's update phase, and the layout phase follows in the same frame
    /// before GLib gets back to the main queue, where the resumed task runs. The widget must be
    /// mapped (an unmapped widget gets no ticks).
    static func nextFrame(of widget: UnsafeMutablePointer<GtkWidget>) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let box = Unmanaged.passRetained(ContinuationBox(continuation)).toOpaque()
            _ = gtk_widget_add_tick_callback(widget, onTick, box, nil)
        }
    }

    private static let onTick: @convention(c) (UnsafeMutablePointer<GtkWidget>?, OpaquePointer?, gpointer?) -> gboolean = { _, _, data in
        guard let data else { return 0 }
        Unmanaged<ContinuationBox>.fromOpaque(data).takeRetainedValue().continuation.resume()
        return 0   // G_SOURCE_REMOVE: once
    }
}

private final class ContinuationBox: Sendable {
    let continuation: CheckedContinuation<Void, Never>
    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
}
