import CGTK
import Foundation
import WebImage
import WebImageGTK

/// One cell of the grid: a ``WebImageView`` that GTK recycles from item to item as the grid
/// scrolls. Bound, it loads its item's thumbnail (a memory hit shows at once), showing the
/// image's ThumbHash meanwhile when there is one, else the grey square; unbound, its load is
/// cancelled, so an item scrolled past before its download started costs no request.
@MainActor
final class ThumbnailCell {
    let view: WebImageView
    /// What the cell loads its thumbnails through.
    private let binder: MainActorImageBinder
    /// The item (its position in the grid) the cell shows now; `nil` while unbound.
    private(set) var position: Int?
    private(set) var item: GalleryItem?
    /// Whether the load of the current item has ended, in an image or a failure.
    private(set) var isSettled = false
    /// Called when the view is shown anything that is not the current item's (never, unless
    /// the binding is broken): what the scroll benchmark counts.
    var onStaleDisplay: (@MainActor (_ position: Int?, _ shown: URL) -> Void)?

    init(binder: MainActorImageBinder, size: Int, fades: Bool, imagePlaceholders: Bool) {
        view = WebImageView()
        view.showsRememberedPlaceholder = imagePlaceholders
        self.imagePlaceholders = imagePlaceholders
        self.binder = binder
        gtk_widget_set_size_request(view.widget, Int32(size), Int32(size))
        gtk_picture_set_content_fit(OpaquePointer(view.picture), GTK_CONTENT_FIT_COVER)
        // Unbinding cancels a cell scrolled away. Unmapped, a cell is on the grid page while the
        // detail page shows: its load goes on, or it would come back as a placeholder for good.
        view.unmappedCancellationDelay = nil
        self.fades = fades
        view.onDisplay = { [unowned self] display in
            guard let url = display.response?.url, url != item?.thumbnail else { return }
            onStaleDisplay?(position, url)
        }
    }

    private let fades: Bool
    /// Whether the cell shows the images' own placeholders (their ThumbHashes) while they load.
    private let imagePlaceholders: Bool

    func bind(to item: GalleryItem, at position: Int, placeholder: ImageContainer, statistics: GalleryStatistics) {
        self.position = position
        self.item = item
        isSettled = false
        gtk_widget_set_tooltip_text(view.widget, item.name)
        // Thumbnails: the first frame of an animation (it plays in the detail view), and large
        // images decoded straight to about the cell's size (the manager's scale-down limit).
        var request = ImageRequest(url: item.thumbnail, options: GalleryPipeline.thumbnailOptions)
        if imagePlaceholders { request.placeholder = item.placeholder }
        view.setImage(
            with: request, using: binder, placeholder: ownPlaceholder(of: request) ? nil : placeholder,
            transition: fades ? .fade(.milliseconds(150)) : .none
        ) { [weak self] result in
            statistics.record(result)
            // A cancelled load was superseded: only the current binding's end settles the cell.
            if case .failure(.cancelled) = result { return }
            if let self, self.position == position, self.item == item { self.isSettled = true }
        }
    }

    /// Whether the image has a placeholder of its own to show while it loads (the view shows it
    /// when given none): the ThumbHash a proxy's page gave with the item, or the one the manager
    /// remembers from an earlier decode, in this run or, through the disk cache, an earlier one.
    private func ownPlaceholder(of request: ImageRequest) -> Bool {
        imagePlaceholders && (request.placeholder != nil || binder.manager.placeholder(for: request) != nil)
    }

    func unbind() {
        view.cancelImageLoad(using: binder)
        position = nil
        item = nil
        isSettled = false
    }
}
