import CGTK
import CWebImageGTK
import Foundation
import WebImage

/// A GTK 4 widget that shows an image from a URL: SDWebImage's `sd_setImage(with:)` for GTK.
///
/// Loads go through an ``ImageBinder`` (``ImageBinder/shared`` by default), which brings the
/// binding rules: the placeholder while loading, a memory hit shown at once (inside
/// ``setImage(with:placeholder:options:requestOptions:transition:completion:progress:)``, with no
/// placeholder flash), progressive previews with ``ImageOptions/progressiveLoad``, the previous
/// load cancelled when the view is bound again, and nothing stale ever shown. The view adds what
/// a toolkit's widget needs:
///
/// - a spinner over the placeholder while the image loads (``showsActivityIndicator``);
/// - ``ImageTransition/fade(_:)`` as a fade-in of the picture, paced by GTK's frame clock;
/// - the load cancelled when the widget stays unmapped (scrolled away, its page hidden) for
///   longer than ``unmappedCancellationDelay``, and when it is destroyed.
///
/// ```swift
/// @MainActor func show(_ url: URL, in window: UnsafeMutablePointer<GtkWindow>, placeholder: ImageContainer) -> WebImageView {
///     let view = WebImageView()
///     gtk_window_set_child(window, view.widget)
///     view.setImage(with: url, placeholder: placeholder, transition: .fade(.milliseconds(200)))
///     return view   // the view keeps its widget (and the binding) as long as it lives
/// }
/// ```
@MainActor
public final class WebImageView: MainActorImageTarget {
    /// The widget to pack into a container (a `GtkOverlay` holding ``picture`` and the spinner).
    /// The view keeps a reference to it for as long as the view lives.
    public let widget: UnsafeMutablePointer<GtkWidget>
    /// The `GtkPicture` that shows the image, for styling (content fit, CSS classes).
    public let picture: UnsafeMutablePointer<GtkWidget>
    /// What the view loads through.
    public let binder: ImageBinder
    /// What the view shows now.
    public private(set) var shownContent: ImageDisplay.Content?
    /// Show a spinner over the placeholder while an image loads (SDWebImage's activity
    /// indicator). Default: on.
    public var showsActivityIndicator = true {
        didSet { if !showsActivityIndicator { setSpinning(false) } }
    }
    /// How long the widget may stay unmapped before its load is cancelled: long enough that a
    /// cell scrolled briefly out of view keeps its download, short enough that a page the user
    /// left stops loading. `nil` never cancels on unmap. Default: 2 seconds.
    public var unmappedCancellationDelay: Duration? = .seconds(2)
    /// Called with everything the view shows, after it shows it: a caption that follows the
    /// image, a test that watches previews arrive.
    public var onDisplay: (@MainActor (ImageDisplay) -> Void)?

    private let spinner: UnsafeMutablePointer<GtkWidget>
    private var signalHandlers: [(instance: UnsafeMutablePointer<GtkWidget>, id: gulong)] = []
    /// Counts binds, so that the completion of a load bound before knows it is stale.
    private var binding = 0
    private var isLoading = false
    private var fadeTick: guint = 0
    private var unmappedTimer: guint = 0

    /// A new, empty view. `binder`'s delivery must be ``ImageBinder/Delivery/mainActor``
    /// (the shared binder's is).
    public init(binder: ImageBinder = .shared) {
        // GTK's constructors never return NULL.
        widget = gtk_overlay_new()!
        picture = gtk_picture_new()!
        spinner = gtk_spinner_new()!
        _ = g_object_ref_sink(widget)
        self.binder = binder
        gtk_overlay_set_child(OpaquePointer(widget), picture)
        gtk_widget_set_halign(spinner, GTK_ALIGN_CENTER)
        gtk_widget_set_valign(spinner, GTK_ALIGN_CENTER)
        gtk_widget_set_visible(spinner, 0)
        gtk_overlay_add_overlay(OpaquePointer(widget), spinner)
        let me = Unmanaged.passUnretained(self).toOpaque()
        for (signal, handler) in [("destroy", Self.onDestroy), ("map", Self.onMap), ("unmap", Self.onUnmap)] {
            signalHandlers.append((widget, wi_gtk_signal_connect(widget, signal, unsafeBitCast(handler, to: GCallback.self), me)))
        }
    }

    isolated deinit {
        for handler in signalHandlers { g_signal_handler_disconnect(handler.instance, handler.id) }
        stopFade()
        cancelUnmappedTimer()
        cancelImageLoad(using: binder)
        g_object_unref(widget)
    }

    // MARK: Binding

    /// Loads `url` into the view through ``binder``, cancelling what the view loaded before;
    /// `placeholder` shows, with the spinner over it, until the image arrives (unless memory
    /// holds it).
    ///
    /// ```swift
    /// @MainActor func bind(_ view: WebImageView, to url: URL) {
    ///     view.setImage(with: url, requestOptions: .progressiveLoad) { result in
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
        binding += 1
        let current = binding
        cancelUnmappedTimer()
        isLoading = false
        let task = setImage(
            with: url, using: binder, placeholder: placeholder, options: options, requestOptions: requestOptions,
            transition: transition,
            completion: { [weak self] result in
                if let self, self.binding == current {
                    self.isLoading = false
                    self.setSpinning(false)
                }
                completion?(result)
            },
            progress: progress)
        // A memory hit is already shown, and a finished load has already completed.
        if task != nil, binding == current, !isShowingImage {
            isLoading = true
            setSpinning(showsActivityIndicator)
        }
        return task
    }

    /// Shows `display`'s bitmap (nothing for an empty placeholder), fading it in when asked.
    public func display(_ display: ImageDisplay) {
        shownContent = display.content
        let picture = OpaquePointer(self.picture)
        stopFade()
        if let texture = display.image?.makeTexture() {
            gtk_picture_set_paintable(picture, texture)
            g_object_unref(UnsafeMutableRawPointer(texture))
        } else {
            gtk_picture_set_paintable(picture, nil)
        }
        if case .image = display.content { setSpinning(false) }
        if case .fade(let duration) = display.transition, duration > .zero, display.image != nil {
            startFade(over: duration)
        }
        onDisplay?(display)
    }

    private var isShowingImage: Bool {
        if case .image = shownContent { return true }
        return false
    }

    private func setSpinning(_ spinning: Bool) {
        gtk_widget_set_visible(spinner, spinning ? 1 : 0)
        if spinning { gtk_spinner_start(OpaquePointer(spinner)) } else { gtk_spinner_stop(OpaquePointer(spinner)) }
    }

    /// Whether the spinner shows now.
    public var isSpinnerVisible: Bool { gtk_widget_get_visible(spinner) != 0 }

    // MARK: Fade

    private var fadeStart: Int64 = 0
    private var fadeLength: Int64 = 0

    /// Raises the picture's opacity from 0 to 1 over `duration`, a step each frame GTK draws.
    private func startFade(over duration: Duration) {
        fadeLength = max(1, Int64(duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000))
        fadeStart = 0
        gtk_widget_set_opacity(picture, 0)
        fadeTick = gtk_widget_add_tick_callback(picture, Self.onFadeTick, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    private func stopFade() {
        guard fadeTick != 0 else { return }
        gtk_widget_remove_tick_callback(picture, fadeTick)
        fadeTick = 0
        gtk_widget_set_opacity(picture, 1)
    }

    /// One frame of the fade: the frame clock's time (microseconds) sets the opacity.
    private func fadeStep(at time: Int64) -> Bool {
        if fadeStart == 0 { fadeStart = time }
        let progress = min(1, Double(time - fadeStart) / Double(fadeLength))
        gtk_widget_set_opacity(picture, progress)
        if progress >= 1 { fadeTick = 0 }
        return progress < 1
    }

    private static let onFadeTick: @convention(c) (UnsafeMutablePointer<GtkWidget>?, OpaquePointer?, gpointer?) -> gboolean = { _, clock, data in
        guard let address = data.map({ UInt(bitPattern: $0) }), let clock else { return 0 }
        // Read here, on GTK's thread; only the number crosses into the main actor.
        let time = Int64(gdk_frame_clock_get_frame_time(clock))
        return MainActor.assumeIsolated {
            let view = Unmanaged<WebImageView>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue()
            return view.fadeStep(at: time) ? 1 : 0
        }
    }

    // MARK: Widget life

    /// The view for a signal's user data. GTK emits its signals on the main thread; the address
    /// crosses into the main actor as a plain number. Handlers are disconnected before the view
    /// goes, so the pointer is always alive.
    private static func view(_ data: gpointer?, _ body: @MainActor (WebImageView) -> Void) {
        guard let address = data.map({ UInt(bitPattern: $0) }) else { return }
        MainActor.assumeIsolated {
            body(Unmanaged<WebImageView>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue())
        }
    }

    /// GTK destroys a widget when its window closes or it is removed for good: no image is
    /// wanted any more.
    private static let onDestroy: @convention(c) (UnsafeMutablePointer<GtkWidget>?, gpointer?) -> Void = { _, data in
        view(data) { view in
            view.cancelUnmappedTimer()
            view.cancelLoad()
        }
    }

    private static let onMap: @convention(c) (UnsafeMutablePointer<GtkWidget>?, gpointer?) -> Void = { _, data in
        view(data) { $0.cancelUnmappedTimer() }
    }

    /// Unmapped: the load is cancelled unless the widget is mapped again within the delay.
    private static let onUnmap: @convention(c) (UnsafeMutablePointer<GtkWidget>?, gpointer?) -> Void = { _, data in
        view(data) { view in
            guard view.isLoading, let delay = view.unmappedCancellationDelay else { return }
            view.cancelUnmappedTimer()
            let milliseconds = guint(clamping: delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
            view.unmappedTimer = g_timeout_add(milliseconds, onUnmappedTooLong, Unmanaged.passUnretained(view).toOpaque())
        }
    }

    private static let onUnmappedTooLong: @convention(c) (gpointer?) -> gboolean = { data in
        view(data) { view in
            view.unmappedTimer = 0
            view.cancelLoad()
        }
        return 0   // G_SOURCE_REMOVE
    }

    private func cancelUnmappedTimer() {
        guard unmappedTimer != 0 else { return }
        g_source_remove(unmappedTimer)
        unmappedTimer = 0
    }

    private func cancelLoad() {
        cancelImageLoad(using: binder)
        isLoading = false
        setSpinning(false)
    }
}
