import Foundation

/// The binder of ``MainActorImageTarget``s: an ``ImageBinder`` whose delivery is the main actor,
/// so that a main-actor target is shown everything, and told of progress and completion, there.
/// It is the only binder a main-actor target's `setImage(with:using:…)` takes: a binder that
/// would deliver anywhere else does not compile.
///
/// ```swift
/// let binder = MainActorImageBinder(manager: manager)
///
/// @MainActor final class Picture: MainActorImageTarget {
///     var pixels: Bitmap?
///     func display(_ display: ImageDisplay) { pixels = display.image }
/// }
///
/// @MainActor func show(_ url: URL, in picture: Picture) {
///     picture.setImage(with: url, using: binder) { result in
///         if case .failure(let error) = result { log(error) }   // on the main actor
///     }
/// }
/// ```
///
/// Everything later than the `setImage` call itself comes through the main dispatch queue,
/// which the main actor runs on: the program's main thread must drain it (an `async` `main`
/// does, as does `dispatchMain()`; a GTK application calls `GTKMainLoop.install()`). It keeps
/// no target alive, as ``ImageBinder`` does not.
public final class MainActorImageBinder: Sendable {
    /// The binder it binds through, delivering on the main dispatch queue.
    package let binder: ImageBinder

    /// The manager that loads.
    public var manager: ImageManager { binder.manager }

    /// A binder that loads through `manager` and delivers on the main actor.
    public init(manager: ImageManager) {
        binder = ImageBinder(manager: manager, delivery: .mainQueue)
    }

    /// The main-actor face of `binder`, which keeps the per-target state: for the deprecated
    /// 1.0 calls that name an ``ImageBinder`` (with `check`, its delivery must run on the main
    /// actor, as 1.0 checked at run time).
    package init(wrapping binder: ImageBinder, check: Bool = true) {
        precondition(!check || binder.delivery.runsOnMainActor, "a MainActorImageTarget binds through a binder with the .mainActor delivery")
        self.binder = binder
    }

    /// Binds `target` (under `operationKey`) to `request`: ``ImageBinder``'s binding, with the
    /// main actor's closures.
    @MainActor
    package func bind(
        _ target: some MainActorImageTarget,
        to request: ImageRequest?,
        placeholder: ImageContainer?,
        options: ImageBindingOptions,
        operationKey: String,
        transition: ImageTransition,
        completion: (@MainActor (Result<ImageResponse, ImageError>) -> Void)?,
        progress: (@MainActor (_ received: Int, _ expected: Int?) -> Void)?
    ) -> ImageTask? {
        // The binder calls these from its delivery (the main queue, which the main actor runs
        // on) or, for a memory hit and a cleared binding, from this main-actor call itself.
        var onMainActorProgress: (@Sendable (Int, Int?) -> Void)?
        if let progress {
            onMainActorProgress = { received, expected in MainActor.assumeIsolated { progress(received, expected) } }
        }
        var onMainActorCompletion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)?
        if let completion {
            onMainActorCompletion = { result in MainActor.assumeIsolated { completion(result) } }
        }
        return binder.bind(
            MainActorTargetAdapter.adapter(for: target), to: request, placeholder: placeholder, options: options,
            operationKey: operationKey, transition: transition, completion: onMainActorCompletion, progress: onMainActorProgress)
    }

    /// Cancels `target`'s load under `operationKey`.
    @MainActor
    package func cancel(_ target: some MainActorImageTarget, operationKey: String) {
        binder.cancel(MainActorTargetAdapter.adapter(for: target), operationKey: operationKey)
    }

    /// The URL `target` is bound to under `operationKey`, or `nil`.
    @MainActor
    package func boundURL(of target: some MainActorImageTarget, operationKey: String = ImageBinder.defaultOperationKey) -> URL? {
        binder.boundURL(of: MainActorTargetAdapter.adapter(for: target), operationKey: operationKey)
    }
}
