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
/// @MainActor func configure(_ picture: Picture, binder: MainActorImageBinder) {
///     picture.setImage(with: URL(string: "https://example.com/a.jpg"), using: binder) { result in
///         picture.pixels = try? result.get().image   // on the main actor
///     }
/// }
/// ```
///
/// It binds through a ``MainActorImageBinder``, whose delivery is the main actor: everything it
/// is shown, and every progress and completion call, comes on the main actor, and the compiler
/// checks it (an ``ImageBinder`` that delivers elsewhere cannot be passed).
@MainActor
public protocol MainActorImageTarget: AnyObject, Sendable {
    /// Shows `display`'s content, applying its transition if the target animates.
    func display(_ display: ImageDisplay)
}

extension MainActorImageTarget {
    /// Binds this target (under `operationKey`) to the image `source` names, through `binder`,
    /// replacing whatever it was bound to: the main actor's
    /// ``ImageTarget/setImage(with:using:placeholder:options:operationKey:transition:completion:progress:)``,
    /// with the same rules (see ``ImageBinder``).
    ///
    /// ```swift
    /// @MainActor func bind(_ picture: some MainActorImageTarget, to url: URL, binder: MainActorImageBinder) {
    ///     picture.setImage(with: ImageRequest(url: url, options: .progressiveLoad), using: binder) { result in
    ///         if case .failure(let error) = result { log(error) }
    ///     } progress: { received, expected in
    ///         bar.update(received, expected)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - source: what to load, a `URL` or an ``ImageRequest``; `nil` (or a request without a
    ///     URL) clears the binding: the placeholder is shown and the completion gets
    ///     ``ImageError/invalidURL(_:)``.
    ///   - binder: the manager to load through; it delivers on the main actor.
    ///   - placeholder: shown at once (or, with ``ImageBindingOptions/delayPlaceholder``, when
    ///     the load fails); `nil` shows nothing.
    ///   - options: what the binding shows, beside the request's own ``ImageOptions``.
    ///   - operationKey: which of the target's bindings this replaces;
    ///     ``ImageBinder/defaultOperationKey`` for its main image.
    ///   - transition: passed to the target with a loaded image (not with memory hits, unless
    ///     ``ImageBindingOptions/forceTransition``).
    ///   - completion: called exactly once, on the main actor: before `setImage` returns on a
    ///     memory hit or a cleared binding. A superseded binding completes with
    ///     ``ImageError/cancelled``.
    ///   - progress: bytes received and expected, on the main actor, while this binding is
    ///     current.
    /// - Returns: the load's task, or `nil` when no load was needed (memory hit, no URL).
    @discardableResult
    public func setImage(
        with source: (any ImageRequestConvertible)?,
        using binder: MainActorImageBinder,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        operationKey: String = ImageBinder.defaultOperationKey,
        transition: ImageTransition = .none,
        completion: (@MainActor (Result<ImageResponse, ImageError>) -> Void)? = nil,
        progress: (@MainActor (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) -> ImageTask? {
        if let proxy = self as? any MainActorImageTargetProxy {
            return proxy.boundImageTarget.setImage(
                with: source, using: binder, placeholder: placeholder, options: options, operationKey: operationKey,
                transition: transition, completion: completion, progress: progress)
        }
        let request = source?.asImageRequest()
        let host = self as? any MainActorImageBindingHost
        // The host's own defaults join the caller's options (the rebind below passes the
        // caller's again, so a default the host has since turned off is not kept).
        let bindingOptions = host?.bindingOptions(options, operationKey: operationKey) ?? options
        let bind: @MainActor (_ first: (@MainActor (Result<ImageResponse, ImageError>) -> Void)?) -> ImageTask? = { first in
            var onCompletion = completion
            if let first {
                onCompletion = { result in
                    first(result)
                    completion?(result)
                }
            }
            return binder.bind(
                self, to: request, placeholder: placeholder, options: bindingOptions, operationKey: operationKey,
                transition: transition, completion: onCompletion, progress: progress)
        }
        guard let host else { return bind(nil) }
        let rebind: @MainActor () -> Void = { [weak self] in
            _ = self?.setImage(
                with: source, using: binder, placeholder: placeholder, options: options, operationKey: operationKey,
                transition: transition, completion: completion, progress: progress)
        }
        return host.hostBinding(operationKey: operationKey, binder: binder, rebind: rebind, bind: bind)
    }

    /// Cancels this target's load under `operationKey` in `binder` (SDWebImage's
    /// `sd_cancelCurrentImageLoad`) and forgets its URL: nothing more is shown for it, what it
    /// shows stays, and the load's completion gets ``ImageError/cancelled``.
    public func cancelImageLoad(using binder: MainActorImageBinder, operationKey: String = ImageBinder.defaultOperationKey) {
        if let proxy = self as? any MainActorImageTargetProxy {
            proxy.boundImageTarget.cancelImageLoad(using: binder, operationKey: operationKey)
            return
        }
        binder.cancel(self, operationKey: operationKey)
    }
}

/// A main-actor target with bookkeeping of its own around each of its bindings (WebImageView's
/// spinner, its reload when mapped again): `setImage` runs the binding through it.
package protocol MainActorImageBindingHost: MainActorImageTarget {
    /// The options a binding under `operationKey` runs with, given the caller's `options`: the
    /// caller's and the host's defaults (WebImageView adds
    /// ``ImageBindingOptions/rememberedPlaceholder`` to its main image's).
    func bindingOptions(_ options: ImageBindingOptions, operationKey: String) -> ImageBindingOptions

    /// Starts a binding under `operationKey` through `binder` by calling `bind` once, and returns
    /// what `bind` returns (the load's task, or `nil` when the binding ended at once). `bind`'s
    /// argument, if any, is called with the binding's outcome before the caller's completion.
    /// `rebind` makes the same `setImage` call again.
    func hostBinding(
        operationKey: String,
        binder: MainActorImageBinder,
        rebind: @escaping @MainActor () -> Void,
        bind: @MainActor (_ first: (@MainActor (Result<ImageResponse, ImageError>) -> Void)?) -> ImageTask?
    ) -> ImageTask?
}

extension MainActorImageBindingHost {
    /// The caller's options as they are.
    package func bindingOptions(_ options: ImageBindingOptions, operationKey: String) -> ImageBindingOptions { options }
}

/// A main-actor target whose bindings another target carries (a button, the image view inside
/// it): `setImage` and `cancelImageLoad` on it are those of ``boundImageTarget``.
package protocol MainActorImageTargetProxy: MainActorImageTarget {
    /// The target that is bound instead.
    var boundImageTarget: any MainActorImageTarget { get }
}

/// The ``ImageTarget`` a binder keeps state for on behalf of a main-actor target: one per
/// target, alive as long as the target is (the binder holds targets weakly), so that every
/// binding of the target meets the same per-target state and sentinel.
final class MainActorTargetAdapter: ImageTarget {
    weak let target: (any MainActorImageTarget)?

    private init(_ target: any MainActorImageTarget) {
        self.target = target
    }

    /// Called by the binder from its delivery, the main queue (the main actor's) for every
    /// ``MainActorImageBinder``, or from a main-actor `setImage` itself.
    func display(_ display: ImageDisplay) {
        MainActor.assumeIsolated { target?.display(display) }
    }

    @MainActor private static var adapters = WeakIdentityTable<MainActorTargetAdapter>()

    /// The adapter of `target`, made on first use.
    @MainActor static func adapter(for target: any MainActorImageTarget) -> MainActorTargetAdapter {
        adapters.value(for: target) { MainActorTargetAdapter(target) }
    }
}
