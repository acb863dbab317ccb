import CGTK
import Foundation
import WebImage
import WebImageGTK

/// The large view of one item: a ``WebImageView`` of the full image (progressive previews, a
/// fade, and animations playing, as WebImageView plays them), loaded through a binder of its
/// own so that full-size images never crowd the thumbnails out of their memory cache.
@MainActor
final class DetailPage {
    let widget: UnsafeMutablePointer<GtkWidget>
    let view: WebImageView
    private let caption: UnsafeMutablePointer<GtkWidget>
    private let statistics: GalleryStatistics
    /// What the page loads full images through.
    private let binder: MainActorImageBinder

    init(binder: MainActorImageBinder, statistics: GalleryStatistics) {
        self.statistics = statistics
        self.binder = binder
        view = WebImageView()
        widget = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        _ = g_object_ref_sink(widget)
        caption = gtk_label_new(nil)!
        gtk_widget_set_vexpand(view.widget, 1)
        gtk_widget_set_hexpand(view.widget, 1)
        gtk_widget_set_margin_top(view.widget, 12)
        gtk_label_set_selectable(OpaquePointer(caption), 1)
        gtk_label_set_ellipsize(OpaquePointer(caption), PANGO_ELLIPSIZE_MIDDLE)
        widget.withMemoryRebound(to: GtkBox.self, capacity: 1) { box in
            gtk_box_append(box, view.widget)
            gtk_box_append(box, caption)
        }
    }

    /// Shows `item`, the grid's thumbnail (in memory already) standing in until the full image
    /// arrives; without it, the item's ThumbHash, or the one the page's manager remembers.
    func show(_ item: GalleryItem, placeholder: ImageContainer?) {
        gtk_label_set_text(OpaquePointer(caption), item.name + "  ·  " + item.full.absoluteString)
        var request = ImageRequest(url: item.full, options: .progressiveLoad)
        request.placeholder = item.placeholder
        view.setImage(
            with: request, using: binder, placeholder: placeholder,
            transition: .fade(.milliseconds(150))
        ) { [statistics] result in
            statistics.record(result)
        }
    }

    /// Back to the grid: the full image stops loading (and playing).
    func clear() {
        view.setImage(with: nil, using: binder)
    }
}
