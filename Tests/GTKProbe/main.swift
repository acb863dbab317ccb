import CGTK
import CWebImageGTK
import Foundation
import WebImage
import WebImageGTK

// A GTK program for the tests (WebImageGTKTests), run under Xvfb: one window holding one
// WebImageView, GLib's main loop on the main thread, the main actor drained by it as in an
// application. The test drives it with commands on standard input, one per line, and reads the
// answers on standard output:
//
//   bind PATH    binds the view to ORIGIN/PATH with a blue placeholder; answers
//                "bound PATH shown=placeholder|image|…" (what the view shows when setImage
//                returns), later "completed PATH ok|failed"
//   pixel        after the next frame, the centre pixel of the view as drawn: "pixel R G B A"
//   destroy      destroys the window (and the view's widget): "destroyed"
//   quit         ends the program
//
// usage: webimage-gtk-probe ORIGIN_BASE_URL

guard CommandLine.arguments.count == 2 else {
    say("usage: webimage-gtk-probe ORIGIN_BASE_URL")
    exit(2)
}
gtk_init()
GTKMainLoop.install()
let loop = g_main_loop_new(nil, 0)
let origin = CommandLine.arguments[1]
let lines = AsyncStream<String> { continuation in
    // Standard input blocks: a thread of its own, never the main one GLib runs on.
    Thread.detachNewThread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }
}
Task { @MainActor in
    await Probe(origin: origin).run(lines)
    g_main_loop_quit(loop)
}
g_main_loop_run(loop)

@MainActor final class Probe {
    let origin: String
    let view = WebImageView()
    var window: UnsafeMutablePointer<GtkWindow>?
    /// A 4×4 blue placeholder.
    let placeholder = ImageContainer(image: try! Bitmap(
        width: 4, height: 4, pixelFormat: .rgba8, pixels: Array([[0, 0, 255, 255] as [UInt8]].joined().lazy).repeated(16)))

    init(origin: String) {
        self.origin = origin
    }

    func run(_ lines: AsyncStream<String>) async {
        window = UnsafeMutableRawPointer(gtk_window_new()).assumingMemoryBound(to: GtkWindow.self)
        gtk_window_set_default_size(window, 160, 120)
        gtk_window_set_child(window, view.widget)
        gtk_window_present(window)
        while gtk_widget_get_mapped(view.widget) == 0 { await Task.yield() }
        say("mapped")
        for await line in lines {
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "bind": bind(words[1])
            case "pixel": await pixel()
            case "destroy":
                gtk_window_destroy(window)
                say("destroyed")
            case "quit": return
            default: say("unknown command \(line)")
            }
        }
    }

    func bind(_ path: String) {
        view.setImage(with: URL(string: origin + path), placeholder: placeholder) { result in
            say("completed \(path) \((try? result.get()) != nil ? "ok" : "failed")")
        }
        let shown = switch view.shownContent {
        case .placeholder(let container): container == nil ? "none" : "placeholder"
        case .preview: "preview"
        case .image: "image"
        case nil: "nothing"
        }
        say("bound \(path) shown=\(shown)")
    }

    /// The centre pixel once a frame has been drawn since the command.
    func pixel() async {
        let clock = gtk_widget_get_frame_clock(view.widget)
        let frame = gdk_frame_clock_get_frame_counter(clock)
        gtk_widget_queue_draw(view.widget)
        while gdk_frame_clock_get_frame_counter(clock) <= frame { await Task.yield() }
        var width: Int32 = 0, height: Int32 = 0
        guard let rgba = wi_gtk_widget_rgba(view.widget, &width, &height) else {
            say("pixel none")
            return
        }
        defer { g_free(rgba) }
        let centre = (Int(height / 2) * Int(width) + Int(width / 2)) * 4
        say("pixel \(rgba[centre]) \(rgba[centre + 1]) \(rgba[centre + 2]) \(rgba[centre + 3])")
    }
}

extension Sequence {
    func repeated(_ count: Int) -> [Element] {
        Array(Array(repeating: Array(self), count: count).joined())
    }
}

/// One answer line, written at once (the test waits for it). Not through stdio: `fflush(nil)`
/// would wait for the lock of stdin, which the reading thread holds while it waits for a line.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
