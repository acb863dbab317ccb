import CGTK
import CWebImageGTK
import Foundation
import WebImage
import WebImageGTK

/// The grid of thumbnails: a `GtkGridView` in a `GtkScrolledWindow`, whose cells GTK creates
/// for the visible rows only and recycles as the grid scrolls. Its `GtkSignalListItemFactory`
/// makes a ``ThumbnailCell`` per list item (setup), points it at an item (bind), cancels its
/// load when the item leaves (unbind) and drops it with the list item (teardown).
@MainActor
final class ThumbnailGrid {
    let items: [GalleryItem]
    /// The scrolled window to pack.
    let widget: UnsafeMutablePointer<GtkWidget>
    let gridView: UnsafeMutablePointer<GtkWidget>
    private let binder: MainActorImageBinder
    private let placeholder: ImageContainer
    private let statistics: GalleryStatistics
    private let cellSize: Int
    private let fades: Bool
    private let imagePlaceholders: Bool
    /// The live cells, by the address of their `GtkListItem`.
    private(set) var cells: [UInt: ThumbnailCell] = [:]
    /// A thumbnail was clicked (or activated from the keyboard): its position.
    var onActivate: (@MainActor (Int) -> Void)?
    /// Told of every bind and unbind (by position) and of any stale display: the automation's
    /// hooks. Given at creation: GTK binds the first cells as soon as the grid view gets its
    /// model, before any layout.
    struct Observer {
        var onBind: @MainActor (Int) -> Void
        var onUnbind: @MainActor (Int) -> Void
        var onStaleDisplay: @MainActor (_ position: Int?, _ shown: URL) -> Void
    }

    private let observer: Observer?

    init(
        items: [GalleryItem], binder: MainActorImageBinder, placeholder: ImageContainer, statistics: GalleryStatistics, cellSize: Int,
        maximumColumns: Int, fades: Bool, imagePlaceholders: Bool, observer: Observer?
    ) {
        self.items = items
        self.observer = observer
        self.binder = binder
        self.placeholder = placeholder
        self.statistics = statistics
        self.cellSize = cellSize
        self.fades = fades
        self.imagePlaceholders = imagePlaceholders
        let names = gtk_string_list_new(nil)!
        for item in items { gtk_string_list_append(names, item.name) }
        // The model and the factory pass to the grid view, which owns them from here on.
        let factory = gtk_signal_list_item_factory_new()!
        gridView = gtk_grid_view_new(gtk_no_selection_new(names), factory)!
        // GTK 4.8 keeps the cells of about 30 rows × max-columns items around the visible ones
        // (GTK's default is 7 columns): a maximum of 64 kept 2,000 cells alive and recycled
        // none. As many columns as the window fits at its first size.
        gtk_grid_view_set_max_columns(OpaquePointer(gridView), guint(max(1, maximumColumns)))
        gtk_grid_view_set_single_click_activate(OpaquePointer(gridView), 1)
        widget = gtk_scrolled_window_new()!
        _ = g_object_ref_sink(widget)
        gtk_scrolled_window_set_child(OpaquePointer(widget), gridView)
        gtk_scrolled_window_set_policy(OpaquePointer(widget), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_widget_set_vexpand(widget, 1)
        let me = Unmanaged.passUnretained(self).toOpaque()
        for (signal, handler) in [("setup", Self.onSetup), ("bind", Self.onBindItem), ("unbind", Self.onUnbindItem), ("teardown", Self.onTeardown)] {
            _ = wi_gtk_signal_connect(UnsafeMutableRawPointer(factory), signal, unsafeBitCast(handler, to: GCallback.self), me)
        }
        _ = wi_gtk_signal_connect(gridView, "activate", unsafeBitCast(Self.onActivated, to: GCallback.self), me)
    }

    /// The grid's vertical scroll position, what the automation moves.
    var verticalAdjustment: UnsafeMutablePointer<GtkAdjustment> {
        gtk_scrolled_window_get_vadjustment(OpaquePointer(widget))!
    }

    // MARK: The factory's signals

    /// The grid for a signal's user data. The grid lives as long as the window (the program),
    /// and GTK emits these signals on the main thread, so the address is always valid there.
    private static func grid(_ data: gpointer?, _ body: @MainActor (ThumbnailGrid) -> Void) {
        guard let address = data.map({ UInt(bitPattern: $0) }) else { return }
        MainActor.assumeIsolated {
            body(Unmanaged<ThumbnailGrid>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue())
        }
    }

    private typealias ItemHandler = @convention(c) (OpaquePointer?, OpaquePointer?, gpointer?) -> Void

    private static let onSetup: ItemHandler = { _, listItem, data in
        // The pointer crosses into the main actor as a plain number, as in WebImageView.
        guard let key = listItem.map({ UInt(bitPattern: $0) }) else { return }
        grid(data) { grid in
            let cell = ThumbnailCell(binder: grid.binder, size: grid.cellSize, fades: grid.fades, imagePlaceholders: grid.imagePlaceholders)
            cell.onStaleDisplay = { position, url in grid.observer?.onStaleDisplay(position, url) }
            grid.cells[key] = cell
            gtk_list_item_set_child(OpaquePointer(bitPattern: key), cell.view.widget)
        }
    }

    private static let onBindItem: ItemHandler = { _, listItem, data in
        // The pointer crosses into the main actor as a plain number, as in WebImageView.
        guard let key = listItem.map({ UInt(bitPattern: $0) }) else { return }
        grid(data) { grid in
            let position = Int(gtk_list_item_get_position(OpaquePointer(bitPattern: key)))
            guard let cell = grid.cells[key], grid.items.indices.contains(position) else { return }
            grid.observer?.onBind(position)
            cell.bind(to: grid.items[position], at: position, placeholder: grid.placeholder, statistics: grid.statistics)
        }
    }

    private static let onUnbindItem: ItemHandler = { _, listItem, data in
        // The pointer crosses into the main actor as a plain number, as in WebImageView.
        guard let key = listItem.map({ UInt(bitPattern: $0) }) else { return }
        grid(data) { grid in
            guard let cell = grid.cells[key] else { return }
            if let position = cell.position { grid.observer?.onUnbind(position) }
            cell.unbind()
        }
    }

    /// The list item goes: so does its cell (its view's deinit cancels what is left).
    private static let onTeardown: ItemHandler = { _, listItem, data in
        // The pointer crosses into the main actor as a plain number, as in WebImageView.
        guard let key = listItem.map({ UInt(bitPattern: $0) }) else { return }
        grid(data) { grid in
            gtk_list_item_set_child(OpaquePointer(bitPattern: key), nil)
            grid.cells[key] = nil
        }
    }

    private static let onActivated: @convention(c) (OpaquePointer?, guint, gpointer?) -> Void = { _, position, data in
        grid(data) { grid in grid.onActivate?(Int(position)) }
    }
}

extension ThumbnailGrid {
    /// A bound cell on screen, and where its picture is in the coordinates asked for.
    struct VisibleCell {
        let cell: ThumbnailCell
        let position: Int
        /// The picture's bounds.
        let x: Double, y: Double, width: Double, height: Double
    }

    /// The bound cells whose picture shows at least partly inside the scrolled window, with
    /// bounds in `ancestor`'s coordinates; also the scrolled window's own bounds there.
    func visibleCells(in ancestor: UnsafeMutablePointer<GtkWidget>) -> (cells: [VisibleCell], viewport: graphene_rect_t) {
        var viewport = graphene_rect_t()
        guard gtk_widget_compute_bounds(widget, ancestor, &viewport) != 0 else { return ([], viewport) }
        let visible = cells.values.compactMap { cell -> VisibleCell? in
            var bounds = graphene_rect_t()
            guard let position = cell.position, gtk_widget_get_mapped(cell.view.picture) != 0,
                  gtk_widget_compute_bounds(cell.view.picture, ancestor, &bounds) != 0,
                  graphene_rect_intersection(&bounds, &viewport, nil) else { return nil }
            return VisibleCell(
                cell: cell, position: position, x: Double(bounds.origin.x), y: Double(bounds.origin.y),
                width: Double(bounds.size.width), height: Double(bounds.size.height))
        }
        return (visible.sorted { $0.position < $1.position }, viewport)
    }
}
