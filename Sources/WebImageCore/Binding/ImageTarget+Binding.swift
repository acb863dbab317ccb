import Foundation

extension ImageTarget {
    /// Binds this target to `url` through `binder`: SDWebImage's `sd_setImage(with:)`.
    ///
    /// ```swift
    /// cell.thumbnail.setImage(with: row.url, using: binder, placeholder: grey) { result in
    ///     if case .failure(let error) = result { log(error) }
    /// }
    /// ```
    @discardableResult
    public func setImage(
        with url: URL?,
        using binder: ImageBinder,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        requestOptions: ImageOptions = [],
        operationKey: String = ImageBinder.defaultOperationKey,
        transition: ImageTransition = .none,
        completion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)? = nil,
        progress: (@Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) -> ImageTask? {
        binder.setImage(
            on: self, with: url, placeholder: placeholder, options: options, requestOptions: requestOptions,
            operationKey: operationKey, transition: transition, completion: completion, progress: progress)
    }

    /// Cancels this target's load under `operationKey` in `binder` (SDWebImage's
    /// `sd_cancelCurrentImageLoad`): nothing more is shown for it.
    public func cancelImageLoad(using binder: ImageBinder, operationKey: String = ImageBinder.defaultOperationKey) {
        binder.cancel(on: self, operationKey: operationKey)
    }
}
