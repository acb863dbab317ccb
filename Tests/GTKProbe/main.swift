import CGTK
import CWebImageGTK
import Foundation
import WebImage
import WebImageGTK

// A GTK program for the tests (WebImageGTKTests), run under Xvfb: one window holding a
// WebImageView above a WebImageButton, GLib's main loop on the main thread, the main actor
// drained by it as in an application. The test drives it with commands on standard input, one
// per line, and reads the answers on standard output:
//
//   bind PATH [progressive] [blur] [fade|fadelong] [firstframe] [noplaceholder] [thumbhash=BASE64]
//                binds the view to ORIGIN/PATH with a blue placeholder (with progressive
//                previews, blurred ones with `blur` (.progressiveBlur), with a 300 ms fade or
//                one of an hour that a test sees at its start, decoding only the first frame;
//                with no placeholder, so that the view's remembered one shows; with the request
//                carrying a ThumbHash); answers "bound PATH shown=placeholder|none|image|…
//                spinner=on|off" (what the view shows when setImage returns), later
//                "completed PATH ok|failed"; every change the view shows is reported as
//                "display placeholder|preview|image opacity=O"
//   remembered PATH  the ThumbHash the manager remembers for ORIGIN/PATH: "remembered PATH BASE64|none"
//   clearmemory  empties the shared manager's memory cache: "cleared"
//   bindbutton PATH  binds the button's image: "bound button PATH", later "completed button PATH ok|failed"
//   pixel [button]   after the next frame, the centre pixel of the view (or the button) as drawn:
//                "pixel R G B A"
//   snapshot FILE  after the next frame, writes the view's widget as GTK's renderer draws it to
//                FILE (R, G, B, A premultiplied, rows of WIDTH × 4 bytes): "snapshot WIDTH HEIGHT
//                [covered=X,Y,W,H …]", the rectangles of the widgets drawn over the picture
//                (the spinner; not the backdrop a fade draws under it)
//   spinner      "spinner on|off"
//   waitopaque   waits (frame by frame, at most 600 frames) until the picture is fully opaque:
//                "opaque" or "still fading"
//   hide, show   unmaps or maps the view: "hidden", "visible"
//   blink        unmaps and maps the view again at once: "blinked"
//   watchframes  answers "watching"; from then on, every animation frame the view shows is
//                reported: "frame INDEX"
//   pause, resume  pauses or resumes the view's animation: "paused INDEX", "resumed"
//                ("… none" without an animation)
//   anim         the view's player: "anim index=I buffered=BYTES peak=BYTES limit=BYTES" or "anim none"
//   memlimit BYTES  the view's animationMemoryLimit for the next binds: "memlimit BYTES"
//   pressure low|medium|critical  emits GIO's low-memory-warning on the default memory monitor
//                once the view's animation shows a frame and, paused, has filled its buffer,
//                with the decoding executor held (nothing decodes again before the count): "pressure
//                before=BYTES after=BYTES refilled=BYTES frame=BYTES cache=COST->COST" (the
//                player's buffer before, right after, and once decoding ran again; one frame's
//                bytes; the binder's memory cache before and after) or "pressure none"
//   benchhit N PATH PATH  binds the view N times, alternating between two images the memory
//                cache holds, timing each setImage: "benchhit n=N median=US p99=US misses=M
//                texture=US" (the last: making a 256 px texture alone, the floor)
//   benchplay SECONDS PATH  binds PATH (first frame only, so the player decodes the rest) and
//                counts the frames shown for SECONDS and those later than their own duration:
//                "benchplay frames=N late=M maxlate=MS peak=BYTES limit=BYTES"
//   destroy      destroys the window (and the views' widgets): "destroyed"
//   quit         ends the program
//
// usage: webimage-gtk-probe ORIGIN_BASE_URL [UNMAPPED_CANCELLATION_MS]

guard (2...3).contains(CommandLine.arguments.count) else {
    say("usage: webimage-gtk-probe ORIGIN_BASE_URL [UNMAPPED_CANCELLATION_MS]")
    exit(2)
}
// Memory only: each test's origin must see the probe's requests. The shared manager's disk
// cache (~/.cache/swift-web-image) outlives the run, and answered a URL whose loopback port an
// earlier run's origin had used, so the origin never saw the request.
// The download deadline (15 s by default) only ends a hang: a test holds a download at its
// origin's gate across its own steps, which on a loaded two-core machine can outlast 15 s and
// turn the held image into a failure. The downloads the tests expect to fail are cancelled.
ImageManager.shared = ImageManager(configuration: .standard(cache: ImageCache(disk: nil), http: {
    var http = HTTPImageLoader.Configuration(acceptedFormats: CoderRegistry.system().decodableFormats)
    http.timeout = .seconds(300)
    return http
}()))
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
let grace = CommandLine.arguments.count == 3 ? Int(CommandLine.arguments[2]) : nil
Task { @MainActor in
    await Probe(origin: origin, graceMilliseconds: grace).run(lines)
    g_main_loop_quit(loop)
}
g_main_loop_run(loop)

@MainActor final class Probe {
    let origin: String
    let view = WebImageView()
    let button = WebImageButton()
    var window: UnsafeMutablePointer<GtkWindow>?
    /// A 4×4 blue placeholder.
    let placeholder = ImageContainer(image: try! Bitmap(
        width: 4, height: 4, pixelFormat: .rgba8, pixels: Array([[0, 0, 255, 255] as [UInt8]].joined().lazy).repeated(16)))

    init(origin: String, graceMilliseconds: Int?) {
        self.origin = origin
        if let graceMilliseconds { view.unmappedCancellationDelay = .milliseconds(graceMilliseconds) }
        view.onDisplay = { [view] display in
            let kind = switch display.content {
            case .placeholder: "placeholder"
            case .preview: "preview"
            case .image: "image"
            }
            say("display \(kind) opacity=\(String(format: "%.2f", gtk_widget_get_opacity(view.picture)))")
        }
    }

    func run(_ lines: AsyncStream<String>) async {
        window = UnsafeMutableRawPointer(gtk_window_new()).assumingMemoryBound(to: GtkWindow.self)
        gtk_window_set_default_size(window, 160, 180)
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
        gtk_widget_set_vexpand(view.widget, 1)
        gtk_widget_set_size_request(button.widget, 64, 48)
        box.withMemoryRebound(to: GtkBox.self, capacity: 1) { box in
            gtk_box_append(box, view.widget)
            gtk_box_append(box, button.widget)
        }
        gtk_window_set_child(window, box)
        gtk_window_present(window)
        while gtk_widget_get_mapped(view.widget) == 0 { await Task.yield() }
        say("mapped")
        for await line in lines {
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "bind": bind(words[1], BindWords(Array(words.dropFirst(2))))
            case "bindbutton": bindButton(words[1])
            case "pixel": await pixel(of: words.contains("button") ? button.imageView.widget : view.widget)
            case "snapshot": await snapshot(to: words[1])
            case "spinner": say("spinner \(view.isSpinnerVisible ? "on" : "off")")
            case "remembered": say("remembered \(words[1]) \(remembered(words[1]))")
            case "clearmemory":
                ImageManager.shared.configuration.cache.clearMemory()
                say("cleared")
            case "waitopaque": await waitUntilOpaque()
            case "hide":
                gtk_widget_set_visible(view.widget, 0)
                say("hidden")
            case "show":
                gtk_widget_set_visible(view.widget, 1)
                say("visible")
            case "blink":
                gtk_widget_set_visible(view.widget, 0)
                gtk_widget_set_visible(view.widget, 1)
                say("blinked")
            case "watchframes":
                view.onAnimationFrame = { index, _ in say("frame \(index)") }
                say("watching")
            case "pause":
                view.animationPlayer?.pause(at: .now)
                say("paused \(view.animationPlayer?.currentFrameIndex.map(String.init) ?? "none")")
            case "resume":
                view.animationPlayer?.play(at: .now)
                say(view.animationPlayer == nil ? "resumed none" : "resumed")
            case "anim": describeAnimation()
            case "memlimit":
                view.animationMemoryLimit = Int(words[1]) ?? view.animationMemoryLimit
                say("memlimit \(view.animationMemoryLimit)")
            case "pressure": await emitMemoryWarning(words[1])
            case "benchhit": benchmarkMemoryHits(count: Int(words[1]) ?? 1000, paths: [words[2], words[3]])
            case "benchplay": await benchmarkPlayback(seconds: Int(words[1]) ?? 60, path: words[2])
            case "destroy":
                gtk_window_destroy(window)
                say("destroyed")
            case "quit": return
            default: say("unknown command \(line)")
            }
        }
    }

    func bind(_ path: String, _ words: BindWords = BindWords()) {
        var request = ImageRequest(url: URL(string: origin + path), options: words.requestOptions)
        request.placeholder = words.thumbHash.map { .thumbHash($0) }
        view.setImage(
            with: request, using: .shared, placeholder: words.noPlaceholder ? nil : placeholder,
            options: words.bindingOptions, transition: words.transition
        ) { result in
            say("completed \(path) \((try? result.get()) != nil ? "ok" : "failed")")
        }
        let shown = switch view.shownContent {
        case .placeholder(let container): container == nil ? "none" : "placeholder"
        case .preview: "preview"
        case .image: "image"
        case nil: "nothing"
        }
        say("bound \(path) shown=\(shown) spinner=\(view.isSpinnerVisible ? "on" : "off")")
    }

    func bindButton(_ path: String) {
        button.setImage(with: URL(string: origin + path), using: .shared, placeholder: placeholder) { result in
            say("completed button \(path) \((try? result.get()) != nil ? "ok" : "failed")")
        }
        say("bound button \(path)")
    }

    /// Draws frame after frame until the picture's fade has ended.
    func waitUntilOpaque() async {
        let clock = gtk_widget_get_frame_clock(view.widget)
        for _ in 0..<600 where gtk_widget_get_opacity(view.picture) < 1 {
            let frame = gdk_frame_clock_get_frame_counter(clock)
            gtk_widget_queue_draw(view.widget)
            while gdk_frame_clock_get_frame_counter(clock) <= frame { await Task.yield() }
        }
        say(gtk_widget_get_opacity(view.picture) >= 1 ? "opaque" : "still fading")
    }

    /// Returns once GTK has drawn a frame of `widget` since the call.
    func nextFrame(of widget: UnsafeMutablePointer<GtkWidget>) async {
        let clock = gtk_widget_get_frame_clock(widget)
        let frame = gdk_frame_clock_get_frame_counter(clock)
        gtk_widget_queue_draw(widget)
        while gdk_frame_clock_get_frame_counter(clock) <= frame { await Task.yield() }
    }

    /// The centre pixel of `widget` once a frame has been drawn since the command.
    func pixel(of widget: UnsafeMutablePointer<GtkWidget>) async {
        await nextFrame(of: widget)
        var width: Int32 = 0, height: Int32 = 0
        guard let rgba = wi_gtk_widget_rgba(widget, &width, &height) else {
            say("pixel none")
            return
        }
        defer { g_free(rgba) }
        let centre = (Int(height / 2) * Int(width) + Int(width / 2)) * 4
        say("pixel \(rgba[centre]) \(rgba[centre + 1]) \(rgba[centre + 2]) \(rgba[centre + 3])")
    }
}

/// The words after `bind PATH`.
struct BindWords {
    var requestOptions: ImageOptions = []
    var bindingOptions: ImageBindingOptions = []
    var transition = ImageTransition.none
    var noPlaceholder = false
    var thumbHash: String?

    init(_ words: [String] = []) {
        for word in words {
            switch word {
            case "progressive": requestOptions.insert(.progressiveLoad)
            case "firstframe": requestOptions.insert(.decodeFirstFrameOnly)
            case "blur": bindingOptions.insert(.progressiveBlur)
            case "fade": transition = .fade(.milliseconds(300))
            // Long enough that what a test snapshots after the image arrived is the fade's start.
            case "fadelong": transition = .fade(.seconds(3600))
            case "noplaceholder": noPlaceholder = true
            default:
                if word.hasPrefix("thumbhash=") { thumbHash = String(word.dropFirst("thumbhash=".count)) }
            }
        }
    }
}

extension Probe {
    /// The ThumbHash the shared manager remembers for `path`, in base64, or "none".
    func remembered(_ path: String) -> String {
        guard let url = URL(string: origin + path), case .thumbHash(let hash)? = ImageManager.shared.placeholder(for: url) else { return "none" }
        return hash
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

extension Probe {
    func describeAnimation() {
        guard let player = view.animationPlayer else { return say("anim none") }
        say("anim index=\(player.currentFrameIndex.map(String.init) ?? "none") buffered=\(player.bufferedBytes) peak=\(player.peakBufferedBytes) limit=\(player.memoryLimit)")
    }

    /// Times `count` binds to images the memory cache holds: each shows its image before
    /// `setImage` returns, texture included (the issue's target: 50 µs for a 256 px thumbnail).
    func benchmarkMemoryHits(count: Int, paths: [String]) {
        let urls = paths.map { URL(string: origin + $0) }
        var times: [Double] = []
        var misses = 0
        times.reserveCapacity(count)
        for index in 0..<count {
            let start = ContinuousClock.now
            view.setImage(with: urls[index % urls.count], using: .shared, placeholder: placeholder)
            let elapsed = ContinuousClock.now - start
            times.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
            if case .image = view.shownContent {} else { misses += 1 }
        }
        // The floor: a texture from a 256 px RGBA buffer alone, as the view makes each one.
        let pixels = [UInt8](repeating: 128, count: 256 * 256 * 4)
        var textures: [Double] = []
        for _ in 0..<count {
            let start = ContinuousClock.now
            let texture = pixels.withUnsafeBufferPointer { wi_gtk_texture_new(256, 256, GDK_MEMORY_R8G8B8A8, $0.baseAddress, 256 * 4) }
            g_object_unref(UnsafeMutableRawPointer(texture))
            let elapsed = ContinuousClock.now - start
            textures.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
        }
        times.sort()
        textures.sort()
        let median = times[times.count / 2], p99 = times[min(times.count - 1, times.count * 99 / 100)]
        say("benchhit n=\(count) median=\(String(format: "%.1f", median)) p99=\(String(format: "%.1f", p99)) misses=\(misses) texture=\(String(format: "%.1f", textures[textures.count / 2]))")
    }

    /// Plays `path` for `seconds`, counting frames shown later than one frame's duration.
    func benchmarkPlayback(seconds: Int, path: String) async {
        var frames = 0, late = 0
        var maxLate = Duration.zero
        view.onAnimationFrame = { [view] index, lateness in
            frames += 1
            maxLate = max(maxLate, lateness)
            // The frame's own duration: the interval the frame clock had to meet.
            if let interval = view.animationPlayer?.currentFrame?.displayDuration, lateness > interval { late += 1 }
        }
        bind(path, BindWords(["firstframe"]))
        try? await Task.sleep(for: .seconds(seconds))
        view.onAnimationFrame = nil
        let player = view.animationPlayer
        say("benchplay frames=\(frames) late=\(late) maxlate=\(maxLate.components.attoseconds / 1_000_000_000_000_000 + maxLate.components.seconds * 1000) peak=\(player?.peakBufferedBytes ?? -1) limit=\(player?.memoryLimit ?? -1)")
    }
}

extension Probe {
    /// The view's widget as GTK's renderer draws it, into `path`, and where other widgets (the
    /// spinner) cover the picture.
    func snapshot(to path: String) async {
        await nextFrame(of: view.widget)
        var width: Int32 = 0, height: Int32 = 0
        guard let rgba = wi_gtk_widget_rgba(view.widget, &width, &height) else { return say("snapshot none") }
        defer { g_free(rgba) }
        let written = FileManager.default.createFile(atPath: path, contents: Data(bytes: rgba, count: Int(width) * Int(height) * 4))
        guard written else { return say("snapshot unwritable \(path)") }
        var covered: [String] = []
        var child = gtk_widget_get_first_child(view.widget)
        while let widget = child {
            var bounds = graphene_rect_t()
            if widget != view.picture, widget != view.backdrop, gtk_widget_get_visible(widget) != 0, gtk_widget_compute_bounds(widget, view.widget, &bounds) != 0 {
                covered.append("covered=\(Int(bounds.origin.x)),\(Int(bounds.origin.y)),\(Int(bounds.size.width.rounded(.up))),\(Int(bounds.size.height.rounded(.up)))")
            }
            child = gtk_widget_get_next_sibling(widget)
        }
        say((["snapshot \(width) \(height)"] + covered).joined(separator: " "))
    }

    /// GIO's `low-memory-warning` at `levelName`, emitted on the default monitor as GIO emits it
    /// when the system runs short: real kernel pressure cannot be produced in a test. The
    /// animation is paused with its buffer full and the decoding executor (one thread) held
    /// meanwhile, so the count right after the warning is what the trim left, before decoding
    /// ahead starts again.
    func emitMemoryWarning(_ levelName: String) async {
        let levels = ["low": G_MEMORY_MONITOR_WARNING_LEVEL_LOW, "medium": G_MEMORY_MONITOR_WARNING_LEVEL_MEDIUM, "critical": G_MEMORY_MONITOR_WARNING_LEVEL_CRITICAL]
        guard let player = view.animationPlayer, let level = levels[levelName] else { return say("pressure none") }
        // The view binds through the shared binder, over the shared manager.
        let cache = ImageManager.shared.configuration.cache
        // The frame on screen first (the trim keeps it), then the buffer full behind it.
        for _ in 0..<600 where player.currentFrameIndex == nil { await nextFrame(of: view.widget) }
        player.pause(at: .now)
        await player.waitUntilBuffered()
        let before = player.bufferedBytes, cacheBefore = cache.memoryCost
        let release = holdDecodingExecutor()
        emitLowMemoryWarning(level)
        let after = player.bufferedBytes, cacheAfter = cache.memoryCost
        release.signal()
        await player.waitUntilBuffered()
        let refilled = player.bufferedBytes
        player.play(at: .now)
        say("pressure before=\(before) after=\(after) refilled=\(refilled) frame=\(player.canvasWidth * player.canvasHeight * 4) cache=\(cacheBefore)->\(cacheAfter)")
    }

    /// Occupies the players' decoding executor (one thread) until the semaphore returned is
    /// signalled; returns once it is occupied, so no frame is being decoded.
    func holdDecodingExecutor() -> DispatchSemaphore {
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        AnimatedImagePlayer.decodingExecutor.submit {
            started.signal()
            release.wait()
        }
        started.wait()
        return release
    }

    /// `g_signal_emit_by_name(monitor, "low-memory-warning", level)`, through `g_signal_emitv`
    /// (Swift cannot call C's variadic functions): the signal the view layer is connected to.
    func emitLowMemoryWarning(_ level: GMemoryMonitorWarningLevel) {
        guard let monitor = g_memory_monitor_dup_default() else { return say("no memory monitor") }
        defer { g_object_unref(UnsafeMutableRawPointer(monitor)) }
        var values = [GValue(), GValue()]
        g_value_init(&values[0], g_memory_monitor_get_type())
        g_value_set_object(&values[0], UnsafeMutableRawPointer(monitor))
        g_value_init(&values[1], g_memory_monitor_warning_level_get_type())
        g_value_set_enum(&values[1], gint(level.rawValue))
        g_signal_emitv(values, g_signal_lookup("low-memory-warning", g_memory_monitor_get_type()), 0, nil)
        g_value_unset(&values[0])
        g_value_unset(&values[1])
    }
}
