import CGTK
import CWebImageGTK
import Foundation
import WebImage

/// A GTK 4 button whose content is an image from a URL: SDWebImage's `UIButton` category for
/// GTK. The image is a ``WebImageView`` inside the button, with all of its rules (placeholder,
/// spinner, previews, fade, cancellation on re-bind, unmap and destroy).
///
/// ```swift
/// @MainActor func avatarButton(_ url: URL, placeholder: ImageContainer) -> WebImageButton {
///     let button = WebImageButton()
///     button.setImage(with: url, placeholder: placeholder)
///     return button   // pack button.widget; connect "clicked" on it as on any GtkButton
/// }
/// ```
@MainActor
public final class WebImageButton {
    /// The `GtkButton`. The button keeps a reference to it for as long as it lives.
    public let widget: UnsafeMutablePointer<GtkWidget>
    /// The image inside the button.
    public let imageView: WebImageView

    /// A new button showing nothing. `binder`'s delivery must be ``ImageBinder/Delivery/mainActor``.
    public init(binder: ImageBinder = .shared) {
        // gtk_button_new never returns NULL.
        widget = gtk_button_new()!
        _ = g_object_ref_sink(widget)
        imageView = WebImageView(binder: binder)
        widget.withMemoryRebound(to: GtkButton.self, capacity: 1) { gtk_button_set_child($0, imageView.widget) }
    }

    isolated deinit {
        g_object_unref(widget)
    }

    /// Loads `url` into the button's image; see ``WebImageView/setImage(with:placeholder:options:requestOptions:transition:completion:progress:)``.
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
        imageView.setImage(
            with: url, placeholder: placeholder, options: options, requestOptions: requestOptions,
            transition: transition, completion: completion, progress: progress)
    }
}
