import Foundation
import Synchronization

/// Binds targets to images: SDWebImage's `UIView+WebCache`, made portable. A binder is the
/// manager that loads and the ``Delivery`` that brings results to the targets; targets bind
/// themselves through it with ``ImageTarget/setImage(with:using:placeholder:options:operationKey:transition:completion:progress:)``.
/// (``MainActorImageTarget``s bind through a ``MainActorImageBinder``, which delivers on the
/// main actor.)
///
/// Per target and per operation key, a binder:
/// - cancels the previous load when a new URL is set, and clears the binding on a `nil` URL
///   (the completion gets ``ImageError/invalidURL(_:)``);
/// - shows the placeholder at once, unless ``ImageBindingOptions/delayPlaceholder`` (then only
///   if the load fails);
/// - serves a memory hit synchronously, before `setImage` returns and without showing the
///   placeholder first, so a reused cell never flashes;
/// - never applies a result that belongs to an older URL: every `setImage` (and
///   ``ImageTarget/cancelImageLoad(using:operationKey:)``) advances the binding's generation,
///   and every result is checked against it before anything is shown (YYWebImage's sentinel);
/// - shows progressive previews (with ``ImageOptions/progressiveLoad``) in order and none after
///   the final image, reports progress, and completes exactly once per `setImage`, with the
///   response (its ``ImageResponse/cacheType`` says where it came from) or an error;
///   ``ImageError/cancelled`` when a later `setImage` superseded it.
///
/// ```swift
/// let binder = ImageBinder(manager: manager, delivery: .init { job in mainLoop.schedule(job) })
///
/// func configure(_ cell: Cell, row: Row) {
///     cell.thumbnail.setImage(with: row.imageURL, using: binder, placeholder: grey,
///                             transition: .fade(.milliseconds(200)), completion: { result in
///         if case .success(let response) = result { log(response.cacheType) }
///     })
/// }
/// ```
///
/// See ``ImageTarget`` for the threading model. The binder keeps no target alive: a target
/// that goes away simply shows nothing more, and its state is dropped.
public final class ImageBinder: Sendable {
    /// How results reach targets: runs each job it is given, in order.
    ///
    /// ```swift
    /// // A toolkit with a main loop: display on it.
    /// let delivery = ImageBinder.Delivery { job in DispatchQueue.main.async(execute: job) }
    /// ```
    public struct Delivery: Sendable {
        let schedule: @Sendable (@escaping @Sendable () -> Void) -> Void
        /// Whether every job runs on the main actor: checked by the deprecated 1.0 calls that
        /// bind a ``MainActorImageTarget`` through an `ImageBinder`.
        let runsOnMainActor: Bool

        /// `schedule` runs each job it is given, in the order given (a serial queue, a main
        /// loop's idle source).
        public init(_ schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
            self.schedule = schedule
            self.runsOnMainActor = false
        }

        /// Runs each job on the main actor, in order: the main dispatch queue, which the main
        /// actor runs on. What a ``MainActorImageBinder`` delivers through; the program's main
        /// thread must drain the queue (an `async` `main` does, as does `dispatchMain()`).
        static let mainQueue = Delivery(schedule: { job in DispatchQueue.main.async(execute: job) }, runsOnMainActor: true)

        private init(schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void, runsOnMainActor: Bool) {
            self.schedule = schedule
            self.runsOnMainActor = runsOnMainActor
        }

        /// Runs each job at once on the thread that produced the result (the pipeline's): for
        /// servers, command-line tools and tests, which have no main thread. The binder's
        /// per-target lock still keeps what a target is shown consistent.
        public static let immediate = Delivery { job in job() }
    }

    /// The operation key of a target's main image.
    public static let defaultOperationKey = "image"

    /// The manager that loads.
    public let manager: ImageManager
    /// How results reach the targets.
    package let delivery: Delivery

    private let targets = Mutex(WeakIdentityTable<TargetState>())

    /// A binder that loads through `manager` and brings results to targets through `delivery`.
    public init(manager: ImageManager, delivery: Delivery = .immediate) {
        self.manager = manager
        self.delivery = delivery
    }

    // MARK: - Binding

    /// Binds `target` (under `operationKey`) to the image `request` names, replacing whatever it
    /// was bound to: what ``ImageTarget/setImage(with:using:placeholder:options:operationKey:transition:completion:progress:)``
    /// does, and ``MainActorImageBinder`` for main-actor targets. `completion` is called exactly
    /// once: synchronously on a memory hit or a cleared binding, else through the binder's delivery.
    /// Returns the load's task, or `nil` when no load was needed (memory hit, no URL).
    @discardableResult
    package func bind<Target: ImageTarget>(
        _ target: Target,
        to request: ImageRequest?,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        operationKey: String = ImageBinder.defaultOperationKey,
        transition: ImageTransition = .none,
        completion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)? = nil,
        progress: (@Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) -> ImageTask? {
        let state = self.state(of: target)
        let url = request?.url
        // A new generation: from here on, everything the previous load delivers is stale. The
        // previous task is cancelled only after the new one has joined the manager, so that
        // rebinding to a URL already downloading keeps the shared download alive.
        let (generation, previous) = state.begin(operationKey, url: url)
        func binding(placeholder: ImageContainer?) -> Binding<Target> {
            Binding(
                target: target, state: state, key: operationKey, generation: generation, placeholder: placeholder,
                options: options, transition: transition, progress: progress, completion: completion)
        }

        guard let request, url != nil else {
            previous?.cancel()
            binding(placeholder: placeholder).finish(.failure(.invalidURL("no URL to load")), showing: .placeholder(placeholder))
            return nil
        }

        if let response = manager.cachedResponse(for: request) {
            previous?.cancel()
            let shown: ImageDisplay.Content? = options.contains(.avoidAutoSetImage) ? nil : .image(response)
            binding(placeholder: placeholder).finish(.success(response), showing: shown, transition: options.contains(.forceTransition) ? transition : .none)
            return nil
        }

        // Decoded only now: a memory hit never pays for a placeholder it does not show.
        let binding = binding(placeholder: placeholder ?? hashPlaceholder(for: request, options: options))
        if !options.contains(.delayPlaceholder) {
            binding.show(.placeholder(binding.placeholder))
        }
        let delivery = self.delivery
        let blur = options.contains(.progressiveBlur) ? ProgressiveBlur() : nil
        let task = manager.start(request) { event in
            let event = blur?.apply(to: event) ?? event
            delivery.schedule { binding.handle(event) }
        }
        previous?.cancel()
        if !state.attach(task, to: operationKey, generation: generation) {
            // Superseded (or finished) while starting: a finished task ignores the cancel.
            task.cancel()
        }
        return task
    }

    /// The picture of the request's own placeholder, else (with
    /// ``ImageBindingOptions/rememberedPlaceholder``) of the one the manager remembers.
    private func hashPlaceholder(for request: ImageRequest, options: ImageBindingOptions) -> ImageContainer? {
        guard let placeholder = request.placeholder
            ?? (options.contains(.rememberedPlaceholder) ? manager.placeholder(for: request) : nil),
            let picture = try? placeholder.bitmap(maxSide: 32)
        else { return nil }
        return ImageContainer(image: picture, isPreview: true)
    }

    /// Cancels `target`'s load under `operationKey` and forgets its URL, leaving what it shows
    /// untouched; the load's completion gets ``ImageError/cancelled``.
    package func cancel(_ target: some ImageTarget, operationKey: String = ImageBinder.defaultOperationKey) {
        let (_, previous) = state(of: target).begin(operationKey, url: nil)
        previous?.cancel()
    }

    /// The URL `target` is bound to under `operationKey`, or `nil`.
    package func boundURL(of target: some ImageTarget, operationKey: String = ImageBinder.defaultOperationKey) -> URL? {
        state(of: target).url(of: operationKey)
    }

    /// How many targets the binder keeps state for (targets that went away are dropped as new
    /// ones arrive).
    package var targetCount: Int { targets.withLock { $0.count } }

    // MARK: - Per-target state

    private func state(of target: some ImageTarget) -> TargetState {
        targets.withLock { $0.value(for: target, make: TargetState.init) }
    }
}

/// One target's bindings, one slot per operation key, behind the lock that also covers every
/// call to the target's ``ImageTarget/display(_:)``.
final class TargetState: Sendable {
    struct Slot {
        /// Advanced by every `setImage` and cancel: the sentinel results are checked against.
        var generation: UInt64 = 0
        var url: URL?
        var task: ImageTask?
        /// The current generation has delivered its outcome: nothing more is shown for it.
        var isFinished = false
    }

    let slots = Mutex<[String: Slot]>([:])

    /// Starts a new generation for `key`; returns it and the task of the previous one.
    func begin(_ key: String, url: URL?) -> (UInt64, ImageTask?) {
        slots.withLock { slots in
            var slot = slots[key] ?? Slot()
            let previous = slot.task
            slot.generation &+= 1
            slot.url = url
            slot.task = nil
            slot.isFinished = false
            slots[key] = slot
            return (slot.generation, previous)
        }
    }

    /// Records `task` as the load of `generation`; `false` when that generation is no longer
    /// current or already finished.
    func attach(_ task: ImageTask, to key: String, generation: UInt64) -> Bool {
        slots.withLock { slots in
            guard var slot = slots[key], slot.generation == generation else { return false }
            guard !slot.isFinished else { return true }
            slot.task = task
            slots[key] = slot
            return true
        }
    }

    func isCurrent(_ key: String, generation: UInt64) -> Bool {
        slots.withLock { slots in
            guard let slot = slots[key] else { return false }
            return slot.generation == generation && !slot.isFinished
        }
    }

    func url(of key: String) -> URL? {
        slots.withLock { $0[key]?.url }
    }
}

/// One `setImage` call: what it shows and whom it tells, checked against its generation.
private final class Binding<Target: ImageTarget>: Sendable {
    weak let target: Target?
    let state: TargetState
    let key: String
    let generation: UInt64
    let placeholder: ImageContainer?
    let options: ImageBindingOptions
    let transition: ImageTransition
    let progress: (@Sendable (Int, Int?) -> Void)?
    let completion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)?

    init(
        target: Target, state: TargetState, key: String, generation: UInt64, placeholder: ImageContainer?,
        options: ImageBindingOptions, transition: ImageTransition, progress: (@Sendable (Int, Int?) -> Void)?,
        completion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)?
    ) {
        self.target = target
        self.state = state
        self.key = key
        self.generation = generation
        self.placeholder = placeholder
        self.options = options
        self.transition = transition
        self.progress = progress
        self.completion = completion
    }

    /// Shows `content` if this binding is still current and unfinished.
    func show(_ content: ImageDisplay.Content, transition: ImageTransition = .none) {
        state.slots.withLock { slots in
            guard let slot = slots[key], slot.generation == generation, !slot.isFinished else { return }
            target?.display(ImageDisplay(content: content, transition: transition, operationKey: key))
        }
    }

    /// Ends this binding with `result`, showing `content` first if it is still current; then
    /// calls the completion (with ``ImageError/cancelled`` if it was superseded).
    func finish(_ result: Result<ImageResponse, ImageError>, showing content: ImageDisplay.Content?, transition: ImageTransition = .none) {
        let current = state.slots.withLock { slots -> Bool in
            guard var slot = slots[key], slot.generation == generation, !slot.isFinished else { return false }
            slot.isFinished = true
            slot.task = nil
            slots[key] = slot
            if let content {
                target?.display(ImageDisplay(content: content, transition: transition, operationKey: key))
            }
            return true
        }
        completion?(current ? result : .failure(.cancelled))
    }

    /// An event of the load, on the delivery's thread.
    func handle(_ event: ImageTask.Event) {
        switch event {
        case .progress(let received, let expected):
            guard let progress, state.isCurrent(key, generation: generation) else { return }
            progress(received, expected)
        case .preview(let response):
            guard !options.contains(.avoidAutoSetImage) else { return }
            show(.preview(response))
        case .cached(let response):
            guard !options.contains(.avoidAutoSetImage) else { return }
            show(.image(response))
        case .finished(.success(let response)):
            let shown: ImageDisplay.Content? = options.contains(.avoidAutoSetImage) ? nil : .image(response)
            let fades = response.cacheType != .memory || options.contains(.forceTransition)
            finish(.success(response), showing: shown, transition: fades ? transition : .none)
        case .finished(.failure(let error)):
            let shown: ImageDisplay.Content? = options.contains(.delayPlaceholder) && !error.isCancellation ? .placeholder(placeholder) : nil
            finish(.failure(error), showing: shown)
        }
    }
}

extension ImageError {
    fileprivate var isCancellation: Bool {
        if case .cancelled = self { true } else { false }
    }
}
