import Foundation

/// A target that lives on the main actor, as the wrapper of a toolkit's widget does: it holds a
/// pointer only the main thread may touch, and shows images without hopping or asserting.
///
/// ```swift
/// @MainActor final class Picture: MainActorImageTarget {
///     var pixels: Bitmap?
///     func display(_ display: ImageDisplay) { pixels = display.image }
/// }
///
/// @MainActor func configure(_ picture: Picture, binder: ImageBinder) {
///     picture.setImage(with: URL(string: "https://example.com/a.jpg"), using: binder) { result in
///         picture.pixels = try? result.get().image   // on the main actor
///     }
/// }
/// ```
///
/// It binds through a binder whose ``ImageBinder/Delivery`` is ``ImageBinder/Delivery/mainActor``
/// (the default binder's is): everything it is shown, and every progress and completion
/// call, then comes on the main actor.
@MainActor
public protocol MainActorImageTarget: AnyObject, Sendable {
    /// Shows `display`'s content, applying its transition if the target animates.
    func display(_ display: ImageDisplay)
}

extension MainActorImageTarget {
    /// Binds this target to `url` through `binder`, whose delivery must be
    /// ``ImageBinder/Delivery/mainActor``; see ``ImageTarget/setImage(with:using:placeholder:options:requestOptions:operationKey:transition:completion:progress:)``.
    @discardableResult
    public func setImage(
        with url: URL?,
        using binder: ImageBinder,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        requestOptions: ImageOptions = [],
        operationKey: String = ImageBinder.defaultOperationKey,
        transition: ImageTransition = .none,
        completion: (@MainActor (Result<ImageResponse, ImageError>) -> Void)? = nil,
        progress: (@MainActor (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) -> ImageTask? {
        setImage(
            with: url.map { ImageRequest(url: $0, options: requestOptions) }, using: binder, placeholder: placeholder,
            options: options, operationKey: operationKey, transition: transition, completion: completion, progress: progress)
    }

    /// Binds this target to the image `request` names through `binder`, whose delivery must be
    /// ``ImageBinder/Delivery/mainActor``.
    @discardableResult
    public func setImage(
        with request: ImageRequest?,
        using binder: ImageBinder,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        operationKey: String = ImageBinder.defaultOperationKey,
        transition: ImageTransition = .none,
        completion: (@MainActor (Result<ImageResponse, ImageError>) -> Void)? = nil,
        progress: (@MainActor (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) -> ImageTask? {
        precondition(binder.delivery.runsOnMainActor, "a MainActorImageTarget binds through a binder with the .mainActor delivery")
        // The binder calls these from its delivery (the main actor, checked above) or, for a
        // memory hit, from this main-actor call itself.
        var onMainActorProgress: (@Sendable (Int, Int?) -> Void)?
        if let progress {
            onMainActorProgress = { received, expected in MainActor.assumeIsolated { progress(received, expected) } }
        }
        var onMainActorCompletion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)?
        if let completion {
            onMainActorCompletion = { result in MainActor.assumeIsolated { completion(result) } }
        }
        return binder.setImage(
            on: MainActorTargetAdapter.adapter(for: self), with: request, placeholder: placeholder, options: options,
            operationKey: operationKey, transition: transition, completion: onMainActorCompletion, progress: onMainActorProgress)
    }

    /// Cancels this target's load under `operationKey` in `binder`: nothing more is shown for it.
    public func cancelImageLoad(using binder: ImageBinder, operationKey: String = ImageBinder.defaultOperationKey) {
        binder.cancel(on: MainActorTargetAdapter.adapter(for: self), operationKey: operationKey)
    }
}

/// The ``ImageTarget`` a binder keeps state for on behalf of a main-actor target: one per
/// target, alive as long as the target is (the binder holds targets weakly), so that every
/// binding of the target meets the same per-target state and sentinel.
final class MainActorTargetAdapter: ImageTarget {
    weak let target: (any MainActorImageTarget)?

    private init(_ target: any MainActorImageTarget) {
        self.target = target
    }

    /// Called by the binder from its delivery, which ``MainActorImageTarget/setImage(with:using:placeholder:options:operationKey:transition:completion:progress:)``
    /// checked runs on the main actor, or from that main-actor call itself.
    func display(_ display: ImageDisplay) {
        MainActor.assumeIsolated { target?.display(display) }
    }

    @MainActor private static var adapters = WeakIdentityTable<MainActorTargetAdapter>()

    /// The adapter of `target`, made on first use.
    @MainActor static func adapter(for target: any MainActorImageTarget) -> MainActorTargetAdapter {
        adapters.value(for: target) { MainActorTargetAdapter(target) }
    }
}
