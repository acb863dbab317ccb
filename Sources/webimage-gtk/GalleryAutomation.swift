import CGTK
import Foundation
import WebImage

// `--automation` (not in the usage): the gallery driven over standard input, one command a line,
// answers on standard output, for the scroll test (Tests/WebImageGTKTests/GalleryScrollTests.swift)
// and the scroll benchmark (Benchmarks/WebImageBenchmarks/GalleryScrollBenchmarks.swift). Fades
// are off, so that every sampled pixel is either a thumbnail's or the placeholder's.
//
//   (on start)     "ready items=N placeholder=RRGGBB rowheight=H upper=U page=P" once the
//                  first frame is laid out (U: the grid's full height, P: the visible height)
//   scroll Y       scrolls to Y pixels, waits for that frame's layout and samples it:
//                  "frame Y POSITION:RRGGBB …" (see sampleFrame)
//   autoscroll R   scrolls to the end at R rows a second, sampling every frame as above,
//                  then "autoscrolled frames=N seconds=S"
//   settle         waits until every cell on screen has loaded: "settled"
//   open P         opens the detail page of position P (as a click does) and waits until its
//                  full image is shown and opaque: "detail P RRGGBB", the colour at its centre
//   back           back to the grid (as the back button and Escape do): "grid"
//   stats          "stats rss=B peak=B memorycost=B memorylimit=B memoryhits=N diskhits=N
//                  downloads=N bytes=B failures=N"
//   quit           ends the program
//
// and, as they happen: "bound P T" and "unbound P T" (P a position, T CLOCK_MONOTONIC in
// nanoseconds, the clock the benchmark's origin stamps requests with), "started URL T" when a
// thumbnail's download leaves the loader's queue and sends its request, and "stale P URL" when
// a cell is shown an image that is not its item's.
@MainActor
final class GalleryAutomation {
    let gallery: GalleryWindow
    private var rowHeight = 0.0

    init(gallery: GalleryWindow) {
        self.gallery = gallery
    }

    /// The grid's hooks that log binds, unbinds and stale displays.
    static let observer = ThumbnailGrid.Observer(
        onBind: { position in say("bound \(position) \(monotonicNanoseconds())") },
        onUnbind: { position in say("unbound \(position) \(monotonicNanoseconds())") },
        onStaleDisplay: { position, url in say("stale \(position.map(String.init) ?? "-") \(url.absoluteString)") })

    func run(_ lines: AsyncStream<String>) async {
        let adjustment = gallery.grid.verticalAdjustment
        await FrameClock.afterEachPaint(of: gallery.content) { [self] in
            gallery.grid.visibleCells(in: gallery.content).cells.isEmpty
        }
        rowHeight = measureRowHeight()
        let (red, green, blue) = GalleryWindow.placeholderRGB
        say("ready items=\(gallery.grid.items.count) cells=\(gallery.grid.cells.count) placeholder=\(String(format: "%02x%02x%02x", red, green, blue)) rowheight=\(rowHeight) "
            + "upper=\(gtk_adjustment_get_upper(adjustment)) page=\(gtk_adjustment_get_page_size(adjustment))")
        for await line in lines {
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "scroll":
                gtk_adjustment_set_value(adjustment, Double(words.dropFirst().first ?? "") ?? 0)
                await FrameClock.afterEachPaint(of: gallery.content) { [self] in
                    sampleFrame()
                    return false
                }
            case "autoscroll": await autoscroll(rowsPerSecond: Double(words.dropFirst().first ?? "") ?? 60)
            case "settle": await settle()
            case "open": await openDetail(Int(words.dropFirst().first ?? "") ?? 0)
            case "back":
                gallery.showGrid()
                say("grid")
            case "stats": say(stats)
            case "quit": return
            default: say("unknown command \(line)")
            }
        }
    }

    /// The distance between the first two rows of cells on screen.
    private func measureRowHeight() -> Double {
        let tops = Set(gallery.grid.visibleCells(in: gallery.content).cells.map { $0.y.rounded() }).sorted()
        return tops.count >= 2 ? tops[1] - tops[0] : tops.isEmpty ? 0 : gallery.grid.visibleCells(in: gallery.content).cells[0].height
    }

    /// Reads the frame back and says, for every bound cell on screen, its position and the colour
    /// at a quarter of its width and height from its top left corner (clear of the spinner in
    /// the middle), or from its bottom right quarter when only that part is on screen.
    func sampleFrame() {
        let (cells, viewport) = gallery.grid.visibleCells(in: gallery.content)
        guard let pixels = WidgetPixels(of: gallery.content) else { return say("frame none") }
        let top = Double(viewport.origin.y), bottom = top + Double(viewport.size.height)
        var samples: [String] = []
        for cell in cells {
            let points = [(cell.x + cell.width / 4, cell.y + cell.height / 4), (cell.x + cell.width * 3 / 4, cell.y + cell.height * 3 / 4)]
            guard let (x, y) = points.first(where: { $0.1 >= top && $0.1 < bottom }),
                  Int(x) < pixels.width, Int(y) < pixels.height, x >= 0, y >= 0 else { continue }
            samples.append("\(cell.position):\(pixels.hex(x: Int(x), y: Int(y)))")
        }
        say("frame \(gtk_adjustment_get_value(gallery.grid.verticalAdjustment)) " + samples.joined(separator: " "))
    }

    /// Scrolls from where the grid is to its end at `rowsPerSecond`, by the clock's time,
    /// sampling every frame painted on the way, until the last item is on screen. GTK 4.8
    /// estimates the height of rows it has not laid out and corrects it as the grid scrolls, so
    /// the end is read again every frame; a scroll that stops moving for 120 frames ends too.
    private func autoscroll(rowsPerSecond: Double) async {
        let adjustment = gallery.grid.verticalAdjustment
        let start = gtk_adjustment_get_value(adjustment), began = ContinuousClock.now
        var frames = 0, stalled = 0, last = -1.0
        await FrameClock.afterEachPaint(of: gallery.content) { [self] in
            if frames > 0 { sampleFrame() }   // the first paint may precede the scroll
            frames += 1
            let value = gtk_adjustment_get_value(adjustment)
            stalled = value > last ? 0 : stalled + 1
            last = value
            let lastItemShown = gallery.grid.visibleCells(in: gallery.content).cells.last?.position == gallery.grid.items.count - 1
            guard !lastItemShown, stalled < 120 else { return false }
            let end = gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)
            gtk_adjustment_set_value(adjustment, min(end, start + Self.seconds(since: began) * rowsPerSecond * rowHeight))
            return true
        }
        say("autoscrolled frames=\(frames - 1) seconds=\(Self.seconds(since: began)) stalled=\(stalled >= 120 ? 1 : 0)")
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private func settle() async {
        await FrameClock.afterEachPaint(of: gallery.content) { [self] in
            gallery.grid.visibleCells(in: gallery.content).cells.contains { !$0.cell.isSettled }
        }
        say("settled")
    }

    private func openDetail(_ position: Int) async {
        gallery.showDetail(position)
        let view = gallery.detail.view
        await FrameClock.afterEachPaint(of: gallery.content) { [self] in
            guard case .image = view.shownContent, gtk_widget_get_opacity(view.picture) >= 1 else { return true }
            var bounds = graphene_rect_t()
            guard gtk_widget_compute_bounds(view.picture, gallery.content, &bounds) != 0, let pixels = WidgetPixels(of: gallery.content) else {
                say("detail \(position) none")
                return false
            }
            let x = Int(bounds.origin.x + bounds.size.width / 2), y = Int(bounds.origin.y + bounds.size.height / 2)
            say("detail \(position) \(pixels.hex(x: x, y: y))")
            return false
        }
    }

    private var stats: String {
        let statistics = gallery.statistics, memory = ProcessStatus.current
        return "stats rss=\(memory.residentBytes) peak=\(memory.peakResidentBytes) memorycost=\(statistics.caches[0].memoryCost) "
            + "memorylimit=\(statistics.memoryLimit) memoryhits=\(statistics.memoryHits) diskhits=\(statistics.diskHits) "
            + "downloads=\(statistics.downloads) bytes=\(statistics.downloadedBytes) failures=\(statistics.failures)"
    }
}

/// CLOCK_MONOTONIC, in nanoseconds: one clock for every process on the machine.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// One answer line, written at once (the driver waits for it). Not through stdio: `fflush(nil)`
/// would wait for the lock of stdin, which the reading thread holds while it waits for a line.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
