import CGTK
import CWebImageGTK
import Foundation
import WebImage
// The binding API this package shares between its modules (package access).
import WebImageCore

/// A GTK 4 widget that shows an image from a URL: SDWebImage's `sd_setImage(with:)` for GTK.
///
/// The view is a ``MainActorImageTarget``: it is bound with the protocol's one
/// `setImage(with:using:placeholder:options:operationKey:transition:completion:progress:)`,
/// through the ``MainActorImageBinder`` each call names (`.shared`, over
/// ``ImageManager/shared``, or one of the application's), which brings the binding rules: the
/// placeholder while loading, a memory hit shown at once (inside `setImage`, with no
/// placeholder flash), progressive previews with ``ImageOptions/progressiveLoad``, the previous
/// load cancelled when the view is bound again, and nothing stale ever shown. The view adds what
/// a toolkit's widget needs, to every binding of its main image:
///
/// - the image's ThumbHash while it loads, when the caller gives no placeholder: the one the
///   request carries (``ImageRequest/placeholder``), else the one its manager remembers from an
///   earlier decode (``ImageBindingOptions/rememberedPlaceholder``, added to every binding of the
///   main image while ``showsRememberedPlaceholder`` is on);
/// - a spinner over the placeholder while the image loads (``showsActivityIndicator``);
/// - ``ImageTransition/fade(_:)`` as a cross-fade, paced by GTK's frame clock, from what the view
///   showed (the placeholder, a preview) to the image;
/// - animated images played by an ``AnimatedImagePlayer`` on GTK's frame clock
///   (``playsAnimations``), stopped while the widget is unmapped;
/// - the load cancelled when the widget stays unmapped (scrolled away, its page hidden) for
///   longer than ``unmappedCancellationDelay``, and when it is destroyed;
/// - memory given back when GIO's memory monitor warns (``MemoryPressure``): the player's
///   frames decoded ahead, and part of the memory cache the view loads through.
///
/// ```swift
/// @MainActor func show(_ url: URL, in window: UnsafeMutablePointer<GtkWindow>, placeholder: ImageContainer) -> WebImageView {
///     let view = WebImageView()
///     gtk_window_set_child(window, view.widget)
///     view.setImage(with: url, using: .shared, placeholder: placeholder, transition: .fade(.milliseconds(200)))
///     return view   // the view keeps its widget (and the binding) as long as it lives
/// }
///
/// @MainActor func bind(_ view: WebImageView, to url: URL, through binder: MainActorImageBinder) {
///     view.setImage(with: ImageRequest(url: url, options: .progressiveLoad), using: binder) { result in
///         if case .failure(let error) = result { print(error) }
///     }
/// }
/// ```
@MainActor
public final class WebImageView: MainActorImageTarget {
    /// The widget to pack into a container (a `GtkOverlay` holding ``picture`` and the spinner).
    /// The view keeps a reference to it for as long as the view lives.
    public let widget: UnsafeMutablePointer<GtkWidget>
    /// The `GtkPicture` that shows the image, for styling (content fit, CSS classes).
    public let picture: UnsafeMutablePointer<GtkWidget>
    /// The `GtkPicture` under ``picture`` that keeps showing what the view showed before while
    /// a fade brings the new content in over it; hidden otherwise.
    package let backdrop: UnsafeMutablePointer<GtkWidget>
    /// The binder the view's main image was last bound through: what an unmap or a destroy
    /// cancels in, and whose memory cache and coders the view uses.
    private(set) var currentBinder: MainActorImageBinder?
    /// The binder a view made with the deprecated `init(binder:)` binds through in the
    /// deprecated `setImage(with:placeholder:…)`.
    var legacyBinder: ImageBinder?
    /// What the view shows now.
    public private(set) var shownContent: ImageDisplay.Content?
    /// Show a spinner over the placeholder while an image loads (SDWebImage's activity
    /// indicator). Default: on.
    public var showsActivityIndicator = true {
        didSet { if !showsActivityIndicator { setSpinning(false) } }
    }
    /// While an image loads and the caller gave no placeholder, show the one its manager
    /// remembers: the ThumbHash of the source, kept from any earlier decode of it (even after
    /// its bytes left the caches), decoded to a small blurred picture of it. A request's own
    /// ``ImageRequest/placeholder`` is shown either way. Off, such a binding shows nothing until
    /// the image arrives. Default: on.
    ///
    /// ```swift
    /// @MainActor func makePlainView() -> WebImageView {
    ///     let view = WebImageView()
    ///     view.showsRememberedPlaceholder = false   // an empty view until each image arrives
    ///     return view
    /// }
    /// ```
    public var showsRememberedPlaceholder = true
    /// How long the widget may stay unmapped before its load is cancelled: long enough that a
    /// cell scrolled briefly out of view keeps its download, short enough that a page the user
    /// left stops loading. When the widget is mapped again, the same bind starts again (its
    /// completion is then called once more). `nil` never cancels on unmap. Default: 2 seconds.
    public var unmappedCancellationDelay: Duration? = .seconds(2)
    /// Called with everything the view shows, after it shows it: a caption that follows the
    /// image, a test that watches previews arrive.
    public var onDisplay: (@MainActor (ImageDisplay) -> Void)?
    /// Play animated images (GIF, APNG, animated WebP, AVIF sequences) through an
    /// ``AnimatedImagePlayer``; off shows their first frame. Default: on. See
    /// ``animationPlayer``.
    public var playsAnimations = true
    /// The most bytes of decoded frames the view's player holds. Default:
    /// ``AnimatedImagePlayer/defaultMemoryLimit``.
    public var animationMemoryLimit = AnimatedImagePlayer.defaultMemoryLimit
    /// Called for every animation frame the view shows, with the frame's position in the play
    /// and how long after its due time it reached the picture: a frame counter, a test.
    public var onAnimationFrame: (@MainActor (_ index: Int, _ lateness: Duration) -> Void)?

    private let spinner: UnsafeMutablePointer<GtkWidget>
    private var signalHandlers: [(instance: UnsafeMutablePointer<GtkWidget>, id: gulong)] = []
    /// Counts binds, so that the completion of a load bound before knows it is stale.
    private var binding = 0
    private var isLoading = false
    private var fadeTick: guint = 0
    private var unmappedTimer: guint = 0
    private var animation: PictureAnimation?
    /// The last bind, to start again when its load was cancelled for staying unmapped too long
    /// and the widget is mapped again (a page the user comes back to shows its images).
    private var lastBind: (@MainActor () -> Void)?
    private var reloadsOnMap = false
    /// Making the player for an image whose frames come from its bytes (off the main thread).
    private var animationStart: Task<Void, Never>?

    /// A new, empty view.
    public init() {
        // GTK's constructors never return NULL.
        widget = gtk_overlay_new()!
        picture = gtk_picture_new()!
        backdrop = gtk_picture_new()!
        spinner = gtk_spinner_new()!
        _ = g_object_ref_sink(widget)
        // GtkOverlay draws its main child under its overlays: the backdrop, then the picture
        // (whose size the view's size follows, as the main child's would), then the spinner.
        gtk_overlay_set_child(OpaquePointer(widget), backdrop)
        gtk_widget_set_visible(backdrop, 0)
        gtk_widget_set_can_target(backdrop, 0)
        gtk_overlay_add_overlay(OpaquePointer(widget), picture)
        gtk_overlay_set_measure_overlay(OpaquePointer(widget), picture, 1)
        gtk_widget_set_halign(spinner, GTK_ALIGN_CENTER)
        gtk_widget_set_valign(spinner, GTK_ALIGN_CENTER)
        gtk_widget_set_visible(spinner, 0)
        gtk_overlay_add_overlay(OpaquePointer(widget), spinner)
        let me = Unmanaged.passUnretained(self).toOpaque()
        for (signal, handler) in [("destroy", Self.onDestroy), ("map", Self.onMap), ("unmap", Self.onUnmap)] {
            signalHandlers.append((widget, wi_gtk_signal_connect(widget, signal, unsafeBitCast(handler, to: GCallback.self), me)))
        }
        MemoryPressure.register(self)
    }

    isolated deinit {
        MemoryPressure.forget(ObjectIdentifier(self))
        for handler in signalHandlers { g_signal_handler_disconnect(handler.instance, handler.id) }
        stopFade()
        cancelUnmappedTimer()
        animationStart?.cancel()
        if let currentBinder { cancelImageLoad(using: currentBinder) }
        g_object_unref(widget)
    }

    // MARK: Binding

    /// What `setImage(with:using:…)` does around each binding of the view's main image (loads
    /// under other operation keys get none of it): the previous load's spinner and unmap timer
    /// go, the call is kept to make again when the load was cancelled for staying unmapped, and
    /// the spinner shows over the placeholder until the load ends (unless memory held the image).
    package func hostBinding(
        operationKey: String,
        binder: MainActorImageBinder,
        rebind: @escaping @MainActor () -> Void,
        bind: @MainActor (_ first: (@MainActor (Result<ImageResponse, ImageError>) -> Void)?) -> ImageTask?
    ) -> ImageTask? {
        guard operationKey == ImageBinder.defaultOperationKey else { return bind(nil) }
        binding += 1
        let current = binding
        cancelUnmappedTimer()
        isLoading = false
        reloadsOnMap = false
        currentBinder = binder
        lastBind = rebind
        let task = bind { [weak self] _ in
            if let self, self.binding == current {
                self.isLoading = false
                self.setSpinning(false)
            }
        }
        // A memory hit is already shown, and a finished load has already completed.
        if task != nil, binding == current, !isShowingImage {
            isLoading = true
            setSpinning(showsActivityIndicator)
        }
        return task
    }

    /// The caller's options, and for the main image the remembered placeholder while
    /// ``showsRememberedPlaceholder`` is on.
    package func bindingOptions(_ options: ImageBindingOptions, operationKey: String) -> ImageBindingOptions {
        guard operationKey == ImageBinder.defaultOperationKey, showsRememberedPlaceholder else { return options }
        return options.union(.rememberedPlaceholder)
    }

    /// Shows `display`'s bitmap (nothing for an empty placeholder), fading it in over what the
    /// view showed when asked.
    public func display(_ display: ImageDisplay) {
        shownContent = display.content
        stopFade()
        stopAnimation()
        var fade: Duration?
        if case .fade(let duration) = display.transition, duration > .zero, display.image != nil {
            fade = duration
            keepUnderFade()
        }
        PictureAnimation.show(display.image, in: picture)
        if case .image(let response) = display.content {
            setSpinning(false)
            if playsAnimations { startAnimation(of: response) }
        }
        if let fade { startFade(over: fade) }
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

    // MARK: Animation

    /// The player of the animation on screen; `nil` for a still image, before its player is
    /// ready, or with ``playsAnimations`` off.
    public var animationPlayer: AnimatedImagePlayer? { animation?.player }

    /// The formats whose bytes may hold an animation the decode did not keep (a load with
    /// ``ImageOptions/decodeFirstFrameOnly``).
    private static let animatableFormats: Set<ImageFormat> = [.gif, .apng, .png, .webp, .avif]

    /// Plays `response`'s animation: its decoded frames when the load kept them all, otherwise
    /// frames decoded on demand from its bytes (a load with
    /// ``ImageOptions/decodeFirstFrameOnly`` keeps one frame in memory, and the player decodes
    /// the rest ahead of time within ``animationMemoryLimit``: how an animation of any length
    /// plays in bounded memory). A still image, or a memory hit without its bytes, stays still.
    private func startAnimation(of response: ImageResponse) {
        let container = response.container
        if let decoded = container.animation, decoded.frames.count > 1 {
            begin(AnimatedImagePlayer(source: decoded.makeFrameSource(), memoryLimit: animationMemoryLimit))
            return
        }
        guard let data = response.data, let format = container.format, Self.animatableFormats.contains(format) else { return }
        let registry = loadingManager?.configuration.registry ?? .system()
        let size = (width: container.image.width, height: container.image.height)
        let limit = animationMemoryLimit
        // Opening the file parses it (libwebp demuxes every frame's header): not on GTK's thread.
        animationStart = Task { [weak self] in
            let player = try? await AnimatedImagePlayer.decodingExecutor.run {
                try Self.makePlayer(of: data, registry: registry, size: size, memoryLimit: limit)
            }
            // A display or bind since then cancelled this task, and its image is gone.
            guard let self, let player, !Task.isCancelled else { return }
            self.begin(player)
        }
    }

    /// A player of the animation in `data`, its frames at `size` (the size the load gave the
    /// first frame); `nil` for a still image.
    private nonisolated static func makePlayer(
        of data: Data, registry: CoderRegistry, size: (width: Int, height: Int), memoryLimit: Int
    ) throws -> AnimatedImagePlayer? {
        guard var source = try registry.makeAnimationFrameSource(for: data), source.frameCount != 1 else { return nil }
        if source.canvasWidth != size.width || source.canvasHeight != size.height {
            var options = ImageDecodingOptions()
            options.thumbnail = .size(width: size.width, height: size.height, contentMode: .fill)
            guard let scaled = try registry.makeAnimationFrameSource(for: data, options: options) else { return nil }
            source = scaled
        }
        return AnimatedImagePlayer(source: source, memoryLimit: memoryLimit)
    }

    private func begin(_ player: AnimatedImagePlayer) {
        let animation = PictureAnimation(player: player, picture: picture)
        animation.onFrame = { [weak self] index, lateness in self?.onAnimationFrame?(index, lateness) }
        self.animation = animation
        if gtk_widget_get_mapped(widget) != 0 { animation.play() }
    }

    private func stopAnimation() {
        animationStart?.cancel()
        animationStart = nil
        animation?.stop()
        animation = nil
    }

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
        releaseBackdrop()
        guard fadeTick != 0 else { return }
        gtk_widget_remove_tick_callback(picture, fadeTick)
        fadeTick = 0
        gtk_widget_set_opacity(picture, 1)
    }

    /// Puts what the picture shows now (the placeholder, a preview, an image) on the backdrop,
    /// drawn the same way, so that the fade goes from it to the new content rather than from
    /// an empty view: a cross-fade, for opaque images. The texture is shared, not copied.
    private func keepUnderFade() {
        guard let shown = gtk_picture_get_paintable(OpaquePointer(picture)) else { return }
        gtk_picture_set_content_fit(OpaquePointer(backdrop), gtk_picture_get_content_fit(OpaquePointer(picture)))
        gtk_picture_set_can_shrink(OpaquePointer(backdrop), gtk_picture_get_can_shrink(OpaquePointer(picture)))
        gtk_picture_set_paintable(OpaquePointer(backdrop), shown)
        gtk_widget_set_visible(backdrop, 1)
    }

    /// Empties and hides the backdrop: the fade has ended, or another display replaces it.
    private func releaseBackdrop() {
        guard gtk_widget_get_visible(backdrop) != 0 else { return }
        gtk_widget_set_visible(backdrop, 0)
        gtk_picture_set_paintable(OpaquePointer(backdrop), nil)
    }

    /// One frame of the fade: the frame clock's time (microseconds) sets the opacity.
    private func fadeStep(at time: Int64) -> Bool {
        if fadeStart == 0 { fadeStart = time }
        let progress = min(1, Double(time - fadeStart) / Double(fadeLength))
        gtk_widget_set_opacity(picture, progress)
        if progress >= 1 {
            fadeTick = 0
            releaseBackdrop()
        }
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
            view.stopAnimation()
            view.lastBind = nil
        }
    }

    private static let onMap: @convention(c) (UnsafeMutablePointer<GtkWidget>?, gpointer?) -> Void = { _, data in
        view(data) { view in
            view.cancelUnmappedTimer()
            view.animation?.play()
            if view.reloadsOnMap {
                view.reloadsOnMap = false
                view.lastBind?()
            }
        }
    }

    /// Unmapped: the load is cancelled unless the widget is mapped again within the delay.
    private static let onUnmap: @convention(c) (UnsafeMutablePointer<GtkWidget>?, gpointer?) -> Void = { _, data in
        view(data) { view in
            // Out of sight, an animation stops at once: no drawing, no decoding ahead.
            view.animation?.stop()
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
            view.reloadsOnMap = true
        }
        return 0   // G_SOURCE_REMOVE
    }

    private func cancelUnmappedTimer() {
        guard unmappedTimer != 0 else { return }
        g_source_remove(unmappedTimer)
        unmappedTimer = 0
    }

    private func cancelLoad() {
        if let currentBinder { cancelImageLoad(using: currentBinder) }
        isLoading = false
        setSpinning(false)
    }

    /// The manager the view loads through: its last binding's, or the deprecated
    /// `init(binder:)`'s before any; `nil` for a view never bound.
    var loadingManager: ImageManager? {
        currentBinder?.manager ?? legacyBinder?.manager
    }
}

/// `setImage(with:using:…)` runs every binding of the view through `hostBinding`.
extension WebImageView: MainActorImageBindingHost {}
