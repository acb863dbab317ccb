import CGTK
import CWebImageGTK
import Foundation
import WebImage
// The binding API this package shares between its modules (package access).
import WebImageCore

/// A GTK 4 button whose content is an image from a URL: SDWebImage's `UIButton` category for
/// GTK. The image is a ``WebImageView`` inside the button, with all of its rules (placeholder,
/// spinner, previews, fade, cancellation on re-bind, unmap and destroy).
///
/// The button is a ``MainActorImageTarget`` whose bindings are its image view's: its
/// `setImage(with:using:…)` and `cancelImageLoad(using:)` are the image view's.
///
/// ```swift
/// @MainActor func avatarButton(_ url: URL, placeholder: ImageContainer) -> WebImageButton {
///     let button = WebImageButton()
///     button.setImage(with: url, using: .shared, placeholder: placeholder)
///     return button   // pack button.widget; connect "clicked" on it as on any GtkButton
/// }
/// ```
@MainActor
public final class WebImageButton: MainActorImageTarget {
    /// The `GtkButton`. The button keeps a reference to it for as long as it lives.
    public let widget: UnsafeMutablePointer<GtkWidget>
    /// The image inside the button.
    public let imageView: WebImageView

    /// A new button showing nothing.
    public init() {
        // gtk_button_new never returns NULL.
        widget = gtk_button_new()!
        _ = g_object_ref_sink(widget)
        imageView = WebImageView()
        widget.withMemoryRebound(to: GtkButton.self, capacity: 1) { gtk_button_set_child($0, imageView.widget) }
    }

    isolated deinit {
        g_object_unref(widget)
    }

    /// Shows `display` in the button's image view.
    public func display(_ display: ImageDisplay) {
        imageView.display(display)
    }
}

/// The button's bindings are its image view's.
extension WebImageButton: MainActorImageTargetProxy {
    package var boundImageTarget: any MainActorImageTarget { imageView }
}
