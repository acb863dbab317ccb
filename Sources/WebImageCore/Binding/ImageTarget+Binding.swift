import Foundation

extension ImageTarget {
    /// Binds this target (under `operationKey`) to the image `source` names, through `binder`,
    /// replacing whatever it was bound to: SDWebImage's `sd_setImage(with:)`.
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, options: .progressiveLoad, thumbnail: .maxPixelSize(256))
    /// view.setImage(with: request, using: binder, placeholder: grey, options: .delayPlaceholder) { result in
    ///     print((try? result.get())?.cacheType ?? .none)
    /// } progress: { received, expected in
    ///     bar.update(received, expected)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - source: what to load, a `URL` or an ``ImageRequest``; `nil` (or a request without a
    ///     URL) clears the binding: the placeholder is shown and the completion gets
    ///     ``ImageError/invalidURL(_:)``.
    ///   - binder: the manager to load through and the delivery that brings results here (see
    ///     ``ImageBinder``).
    ///   - placeholder: shown at once (or, with ``ImageBindingOptions/delayPlaceholder``, when
    ///     the load fails); `nil` shows nothing.
    ///   - options: what the binding shows, beside the request's own ``ImageOptions``.
    ///   - operationKey: which of the target's bindings this replaces (e.g. an image and a
    ///     background image); ``ImageBinder/defaultOperationKey`` for its main image.
    ///   - transition: passed to the target with a loaded image (not with memory hits, unless
    ///     ``ImageBindingOptions/forceTransition``).
    ///   - completion: called exactly once: synchronously on a memory hit or a cleared binding,
    ///     else through the binder's delivery. A superseded binding completes
    ///     with ``ImageError/cancelled``. It comes before `progress`, so that a single trailing
    ///     closure is the completion.
    ///   - progress: bytes received and expected, while this binding is current.
    /// - Returns: the load's task, or `nil` when no load was needed (memory hit, no URL).
    @discardableResult
    public func setImage(
        with source: (any ImageRequestConvertible)?,
        using binder: ImageBinder,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        operationKey: String = ImageBinder.defaultOperationKey,
        transition: ImageTransition = .none,
        completion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)? = nil,
        progress: (@Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) -> ImageTask? {
        binder.bind(
            self, to: source?.asImageRequest(), placeholder: placeholder, options: options, operationKey: operationKey,
            transition: transition, completion: completion, progress: progress)
    }

    /// Cancels this target's load under `operationKey` in `binder` (SDWebImage's
    /// `sd_cancelCurrentImageLoad`) and forgets its URL: nothing more is shown for it, what it
    /// shows stays, and the load's completion gets ``ImageError/cancelled``.
    public func cancelImageLoad(using binder: ImageBinder, operationKey: String = ImageBinder.defaultOperationKey) {
        binder.cancel(self, operationKey: operationKey)
    }
}
