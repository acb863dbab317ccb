import CGTK
import CWebImageGTK
import Foundation
import WebImage
import WebImageGTK

/// The gallery's window: a bar (back button, title), a stack of the grid and the detail page,
/// and the status line (cache hits, downloads, memory), refreshed four times a second.
@MainActor
final class GalleryWindow {
    let window: UnsafeMutablePointer<GtkWindow>
    /// Everything inside the window, without the window manager's frame: what screenshots show.
    let content: UnsafeMutablePointer<GtkWidget>
    let grid: ThumbnailGrid
    let detail: DetailPage
    let statistics: GalleryStatistics
    let pipeline: GalleryPipeline
    /// A neutral grey square: what a cell shows until its thumbnail arrives, when there is no
    /// placeholder of the image itself (its ThumbHash) to show.
    static let placeholderRGB: (UInt8, UInt8, UInt8) = (0x80, 0x80, 0x80)
    private let stack: UnsafeMutablePointer<GtkWidget>
    let backButton: UnsafeMutablePointer<GtkWidget>
    private let title: UnsafeMutablePointer<GtkWidget>
    private let status: UnsafeMutablePointer<GtkWidget>
    private let heading: String

    init(items: [GalleryItem], options: GalleryOptions, observer: ThumbnailGrid.Observer? = nil, onClose: @escaping @MainActor () -> Void) {
        pipeline = GalleryPipeline(options: options)
        statistics = GalleryStatistics(caches: pipeline.caches, memoryLimit: options.memoryLimit)
        let (red, green, blue) = Self.placeholderRGB
        // The values are valid for a 4×4 RGBA bitmap, so this cannot throw.
        let placeholder = ImageContainer(image: try! Bitmap(
            width: 4, height: 4, pixelFormat: .rgba8, pixels: Array(repeating: [red, green, blue, 255], count: 16).flatMap { $0 }))
        // Fades would mix a cell's colours in the automation's samples, and the images' own
        // placeholders (colours close to, not equal to, their images') would be neither an
        // image's nor the grey: it turns both off.
        grid = ThumbnailGrid(
            items: items, binder: pipeline.thumbnails, placeholder: placeholder, statistics: statistics,
            cellSize: options.cellSize, maximumColumns: options.windowWidth / options.cellSize, fades: !options.automation,
            imagePlaceholders: !options.automation, observer: observer)
        detail = DetailPage(binder: pipeline.full, statistics: statistics)
        heading = "\(options.source) — \(items.count) image\(items.count == 1 ? "" : "s")"
        window = UnsafeMutableRawPointer(gtk_window_new()!).assumingMemoryBound(to: GtkWindow.self)
        gtk_window_set_title(window, "webimage-gtk")
        gtk_window_set_default_size(window, Int32(options.windowWidth), Int32(options.windowHeight))
        backButton = gtk_button_new_with_label("← Grid")!
        title = gtk_label_new(heading)!
        status = gtk_label_new(nil)!
        stack = gtk_stack_new()!
        content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
        self.onClose = onClose
        assemble()
        grid.onActivate = { [unowned self] position in showDetail(position) }
        connectSignals()
    }

    private let onClose: @MainActor () -> Void

    private func assemble() {
        let bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8)!
        for side in [GTK_POS_TOP, GTK_POS_BOTTOM, GTK_POS_LEFT, GTK_POS_RIGHT] { setMargin(bar, side, 6) }
        gtk_widget_set_visible(backButton, 0)
        gtk_label_set_ellipsize(OpaquePointer(title), PANGO_ELLIPSIZE_MIDDLE)
        gtk_widget_set_hexpand(title, 1)
        gtk_label_set_xalign(OpaquePointer(title), 0)
        gtk_label_set_xalign(OpaquePointer(status), 0)
        for side in [GTK_POS_TOP, GTK_POS_BOTTOM, GTK_POS_LEFT, GTK_POS_RIGHT] { setMargin(status, side, 6) }
        gtk_widget_add_css_class(status, "dim-label")
        append(backButton, to: bar)
        append(title, to: bar)
        gtk_stack_add_named(OpaquePointer(stack), grid.widget, "grid")
        gtk_stack_add_named(OpaquePointer(stack), detail.widget, "detail")
        gtk_widget_set_vexpand(stack, 1)
        append(bar, to: content)
        append(stack, to: content)
        append(status, to: content)
        gtk_window_set_child(window, content)
    }

    private func append(_ child: UnsafeMutablePointer<GtkWidget>, to box: UnsafeMutablePointer<GtkWidget>) {
        box.withMemoryRebound(to: GtkBox.self, capacity: 1) { gtk_box_append($0, child) }
    }

    private func setMargin(_ widget: UnsafeMutablePointer<GtkWidget>, _ side: GtkPositionType, _ pixels: Int32) {
        switch side {
        case GTK_POS_TOP: gtk_widget_set_margin_top(widget, pixels)
        case GTK_POS_BOTTOM: gtk_widget_set_margin_bottom(widget, pixels)
        case GTK_POS_LEFT: gtk_widget_set_margin_start(widget, pixels)
        default: gtk_widget_set_margin_end(widget, pixels)
        }
    }

    var windowWidget: UnsafeMutablePointer<GtkWidget> {
        UnsafeMutableRawPointer(window).assumingMemoryBound(to: GtkWidget.self)
    }

    /// The window was destroyed (closed).
    func closed() {
        onClose()
    }

    func present() {
        updateStatus()
        gtk_window_present(window)
    }

    // MARK: Pages

    func showDetail(_ position: Int) {
        guard grid.items.indices.contains(position) else { return }
        let item = grid.items[position]
        detail.show(item, placeholder: pipeline.cachedThumbnail(of: item))
        gtk_label_set_text(OpaquePointer(title), "\(position + 1) of \(grid.items.count)")
        gtk_widget_set_visible(backButton, 1)
        gtk_stack_set_visible_child_name(OpaquePointer(stack), "detail")
    }

    func showGrid() {
        detail.clear()
        gtk_label_set_text(OpaquePointer(title), heading)
        gtk_widget_set_visible(backButton, 0)
        gtk_stack_set_visible_child_name(OpaquePointer(stack), "grid")
    }

    func updateStatus() {
        gtk_label_set_text(OpaquePointer(status), statistics.line)
    }
}
