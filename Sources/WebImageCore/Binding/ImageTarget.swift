import Foundation

/// Anything that shows an image: a widget of a Linux desktop toolkit, a terminal preview, a
/// node of a server-side renderer. SDWebImage's `UIImageView` category, made portable.
///
/// A target only displays what an ``ImageBinder`` hands it; the binder decides what, when, and
/// whether a result is still wanted. A target binds itself with
/// ``setImage(with:using:placeholder:options:operationKey:transition:completion:progress:)``.
///
/// ```swift
/// final class Thumbnail: ImageTarget {
///     let widget: Widget   // the toolkit's image view
///     init(widget: Widget) { self.widget = widget }
///     func display(_ display: ImageDisplay) {
///         switch display.content {
///         case .placeholder(let placeholder): widget.setPixels(placeholder?.image)
///         case .preview(let response): widget.setPixels(response.image)
///         case .image(let response):
///             widget.setPixels(response.image, fade: display.transition.duration)
///         }
///     }
/// }
/// ```
///
/// ## Threading
///
/// The binder calls ``display(_:)``:
/// - on the caller's thread, before ``setImage(with:using:placeholder:options:operationKey:transition:completion:progress:)``
///   returns, for the placeholder, a memory hit and a cleared binding;
/// - through the binder's ``ImageBinder/Delivery`` for everything that arrives later (previews
///   and the loaded image): `.immediate` calls it on the pipeline's thread, a GUI passes its
///   main-loop scheduler.
///
/// An app with a main thread binds on its main thread and delivers on it, so `display` always
/// runs there. Whatever the threads, the binder calls `display` for one target one call at a
/// time, with that target's binding state locked: the check "does this result still belong to
/// the URL the target holds?" and the display are one step, so a rebind on another thread can
/// never slip between them. For the same reason `display` must not call back into the binder
/// for the same target (schedule such work instead); completions are called outside the lock
/// and may rebind freely.
///
/// Targets are classes (the binder keeps per-target state keyed by identity, without keeping the
/// target alive) and `Sendable` (results arrive from other threads). A widget wrapper that lives
/// on the main actor conforms to ``MainActorImageTarget`` instead, and binds through a
/// ``MainActorImageBinder``: the compiler then checks that everything reaches it there.
public protocol ImageTarget: AnyObject, Sendable {
    /// Shows `display`'s content, applying its transition if the target animates.
    func display(_ display: ImageDisplay)
}

/// What a binder asks a target to show.
public struct ImageDisplay: Sendable {
    /// The three things a target is shown.
    public enum Content: Sendable {
        /// The placeholder; `nil` means "show nothing" (the binding was cleared, or no
        /// placeholder was given).
        case placeholder(ImageContainer?)
        /// A progressive preview of the image still downloading (with
        /// ``ImageOptions/progressiveLoad``); better ones, then the final image, follow.
        case preview(ImageResponse)
        /// The loaded image. With ``ImageOptions/refreshCached`` the cached copy comes first
        /// and the revalidated one may follow.
        case image(ImageResponse)
    }

    public var content: Content
    /// How to change to the new content; ``ImageTransition/none`` for placeholders, previews
    /// and memory hits.
    public var transition: ImageTransition
    /// Which of the target's bindings this is for (e.g. an image and a background image).
    public var operationKey: String

    package init(content: Content, transition: ImageTransition = .none, operationKey: String = ImageBinder.defaultOperationKey) {
        self.content = content
        self.transition = transition
        self.operationKey = operationKey
    }

    /// The container shown: the placeholder's, the preview's or the image's.
    public var container: ImageContainer? {
        switch content {
        case .placeholder(let container): container
        case .preview(let response), .image(let response): response.container
        }
    }

    /// The bitmap shown, if any.
    public var image: Bitmap? { container?.image }

    /// The response behind a preview or an image; `nil` for a placeholder.
    public var response: ImageResponse? {
        switch content {
        case .placeholder: nil
        case .preview(let response), .image(let response): response
        }
    }
}

/// How a target changes from what it showed to a newly loaded image: a hint the target applies
/// in its own toolkit (SDWebImage's `SDWebImageTransition`).
///
/// ```swift
/// cell.setImage(with: url, using: binder, transition: .fade(.milliseconds(200)))
/// ```
public enum ImageTransition: Sendable, Hashable {
    /// Replace at once.
    case none
    /// Cross-fade over `duration`.
    case fade(Duration)
    /// A transition the target knows by name (a flip, a curl…), over `duration`.
    case custom(name: String, duration: Duration)

    /// The transition's length; zero for ``none``.
    public var duration: Duration {
        switch self {
        case .none: .zero
        case .fade(let duration), .custom(_, let duration): duration
        }
    }
}

/// Switches that change what a binding shows, beside the request's own ``ImageOptions``.
public struct ImageBindingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Show the placeholder only if the load fails, not while it runs (the target keeps what it
    /// showed until then).
    public static let delayPlaceholder = ImageBindingOptions(rawValue: 1 << 0)
    /// Hand the loaded image (and previews) to the completion only; the target is not touched
    /// except for the placeholder. For callers that post-process or animate the image
    /// themselves.
    public static let avoidAutoSetImage = ImageBindingOptions(rawValue: 1 << 1)
    /// Apply the transition to memory hits too (by default they appear at once, like an
    /// image that was never away).
    public static let forceTransition = ImageBindingOptions(rawValue: 1 << 2)
    /// When the caller gives no placeholder, show the image's own blurred picture while it
    /// loads: the request's ``ImageRequest/placeholder``, else the one the manager remembers
    /// for the source (``ImageManager/placeholder(for:)``), decoded 32 px on its longer side.
    /// (A request's own placeholder is shown without this option too.)
    ///
    /// ```swift
    /// cell.setImage(with: url, using: binder, options: .rememberedPlaceholder,
    ///               transition: .fade(.milliseconds(200)))
    /// ```
    public static let rememberedPlaceholder = ImageBindingOptions(rawValue: 1 << 3)
    /// Show progressive previews (``ImageOptions/progressiveLoad``) blurred, the blur
    /// shrinking as the bytes arrive; the final image is never blurred (YYWebImage's
    /// `YYWebImageOptionProgressiveBlur`). The blur runs on the pipeline's thread, before the
    /// preview is delivered.
    ///
    /// ```swift
    /// view.setImage(with: ImageRequest(url: url, options: .progressiveLoad), using: binder,
    ///               options: .progressiveBlur)
    /// ```
    public static let progressiveBlur = ImageBindingOptions(rawValue: 1 << 4)
}
