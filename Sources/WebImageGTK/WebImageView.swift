import CGTK
import CWebImageGTK
import Foundation
import WebImage

/// A GTK 4 picture that shows an image from a URL: SDWebImage's `sd_setImage(with:)` for GTK.
///
/// Loads go through an ``ImageBinder`` (``ImageBinder/shared`` by default), which brings the
/// binding rules: the placeholder while loading, a memory hit shown at once (inside
/// ``setImage(with:placeholder:options:requestOptions:transition:completion:progress:)``, with no
/// placeholder flash), the previous load cancelled when the view is bound again, and nothing
/// stale ever shown. Destroying the widget cancels its load too.
///
/// ```swift
/// @MainActor func show(_ url: URL, in window: UnsafeMutablePointer<GtkWindow>, placeholder: ImageContainer) -> WebImageView {
///     let view = WebImageView()
///     gtk_window_set_child(window, view.widget)
///     view.setImage(with: url, placeholder: placeholder)
///     return view   // the view keeps its widget (and the binding) as long as it lives
/// }
/// ```
@MainActor
public final class WebImageView: MainActorImageTarget {
    /// The `GtkPicture` (a `GtkWidget*`): pack it into any container. The view keeps a
    /// reference to it for as long as the view lives.
    public let widget: UnsafeMutablePointer<GtkWidget>
    /// What the view loads through.
    public let binder: ImageBinder
    /// What the view shows now.
    public private(set) var shownContent: ImageDisplay.Content?
    private var destroyHandler: gulong = 0

    /// A new, empty picture. `binder`'s delivery must be ``ImageBinder/Delivery/mainActor``
    /// (the shared binder's is).
    public init(binder: ImageBinder = .shared) {
        // gtk_picture_new never returns NULL.
        widget = gtk_picture_new()!
        _ = g_object_ref_sink(widget)
        self.binder = binder
        destroyHandler = wi_gtk_signal_connect(
            widget, "destroy", unsafeBitCast(Self.onDestroy, to: GCallback.self), Unmanaged.passUnretained(self).toOpaque())
    }

    isolated deinit {
        g_signal_handler_disconnect(widget, destroyHandler)
        cancelImageLoad(using: binder)
        g_object_unref(widget)
    }

    /// GTK destroys a widget when its window closes or it is removed for good: no image is
    /// wanted any more. The handler is disconnected before the view goes, so the pointer it
    /// carries is always alive.
    private static let onDestroy: @convention(c) (UnsafeMutablePointer<GtkWidget>?, gpointer?) -> Void = { _, data in
        // GTK emits "destroy" on the main thread; the address crosses into the main actor as a
        // plain number.
        guard let address = data.map({ UInt(bitPattern: $0) }) else { return }
        MainActor.assumeIsolated {
            let view = Unmanaged<WebImageView>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue()
            view.cancelImageLoad(using: view.binder)
        }
    }

    /// Shows `display`'s bitmap (nothing for an empty placeholder).
    public func display(_ display: ImageDisplay) {
        shownContent = display.content
        let picture = OpaquePointer(widget)
        guard let texture = display.image?.makeTexture() else {
            gtk_picture_set_paintable(picture, nil)
            return
        }
        gtk_picture_set_paintable(picture, texture)
        g_object_unref(UnsafeMutableRawPointer(texture))
    }

    /// Loads `url` into the view through ``binder``, cancelling what the view loaded before;
    /// `placeholder` shows until the image arrives (unless memory holds it).
    ///
    /// ```swift
    /// @MainActor func bind(_ view: WebImageView, to url: URL) {
    ///     view.setImage(with: url) { result in
    ///         if case .failure(let error) = result { print(error) }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func setImage(
        with url: URL?,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        requestOptions: ImageOptions = [],
        transition: ImageTransition = .none,
        completion: (@MainActor (Result<ImageResponse, ImageError>) -> Void)? = nil,
        progress: (@MainActor (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) -> ImageTask? {
        setImage(
            with: url, using: binder, placeholder: placeholder, options: options, requestOptions: requestOptions,
            transition: transition, completion: completion, progress: progress)
    }
}
