import Foundation

// The 1.0 spellings that 1.1 replaced, kept until 2.0 so that 1.0 code still compiles (with a
// warning that names the replacement). Each forwards to the API that replaced it. The binding's
// `setImage` and `cancelImageLoad` ones are disfavoured: where a call fits both, the new one is
// chosen.

extension ImageBinder {
    @available(*, deprecated, message: "bind from the target: target.setImage(with: ImageRequest(url: url, options: requestOptions), using: binder, …)")
    @discardableResult
    public func setImage(
        on target: some ImageTarget,
        with url: URL?,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        requestOptions: ImageOptions = [],
        operationKey: String = ImageBinder.defaultOperationKey,
        transition: ImageTransition = .none,
        completion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)? = nil,
        progress: (@Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) -> ImageTask? {
        bind(
            target, to: url.map { ImageRequest(url: $0, options: requestOptions) }, placeholder: placeholder, options: options,
            operationKey: operationKey, transition: transition, completion: completion, progress: progress)
    }

    @available(*, deprecated, message: "bind from the target: target.setImage(with: request, using: binder, …)")
    @discardableResult
    public func setImage(
        on target: some ImageTarget,
        with request: ImageRequest?,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        operationKey: String = ImageBinder.defaultOperationKey,
        transition: ImageTransition = .none,
        completion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)? = nil,
        progress: (@Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) -> ImageTask? {
        bind(
            target, to: request, placeholder: placeholder, options: options, operationKey: operationKey,
            transition: transition, completion: completion, progress: progress)
    }

    @available(*, deprecated, message: "cancel from the target: target.cancelImageLoad(using: binder, operationKey: operationKey)")
    public func cancel(on target: some ImageTarget, operationKey: String = ImageBinder.defaultOperationKey) {
        cancel(target, operationKey: operationKey)
    }

    @available(*, deprecated, message: "keep the URL the target was bound to where it is bound")
    public func url(of target: some ImageTarget, operationKey: String = ImageBinder.defaultOperationKey) -> URL? {
        boundURL(of: target, operationKey: operationKey)
    }
}

extension ImageBinder.Delivery {
    @available(*, deprecated, message: "bind a MainActorImageTarget through a MainActorImageBinder, which delivers on the main actor")
    public static var mainActor: ImageBinder.Delivery { .mainQueue }
}

extension ImageTarget {
    @available(*, deprecated, message: "pass an ImageRequest for request options: setImage(with: ImageRequest(url: url, options: requestOptions), using: binder, …)")
    @_disfavoredOverload
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
        binder.bind(
            self, to: url.map { ImageRequest(url: $0, options: requestOptions) }, placeholder: placeholder, options: options,
            operationKey: operationKey, transition: transition, completion: completion, progress: progress)
    }
}

extension MainActorImageTarget {
    @available(*, deprecated, message: "bind through a MainActorImageBinder, and pass an ImageRequest for request options: setImage(with: ImageRequest(url: url, options: requestOptions), using: MainActorImageBinder(manager: manager), …)")
    @_disfavoredOverload
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
        let request: (any ImageRequestConvertible)? = url.map { ImageRequest(url: $0, options: requestOptions) }
        return setImage(
            with: request, using: MainActorImageBinder(wrapping: binder), placeholder: placeholder, options: options,
            operationKey: operationKey, transition: transition, completion: completion, progress: progress)
    }

    @available(*, deprecated, message: "bind through a MainActorImageBinder: setImage(with: request, using: MainActorImageBinder(manager: manager), …)")
    @_disfavoredOverload
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
        let source: (any ImageRequestConvertible)? = request
        return setImage(
            with: source, using: MainActorImageBinder(wrapping: binder), placeholder: placeholder, options: options,
            operationKey: operationKey, transition: transition, completion: completion, progress: progress)
    }

    @available(*, deprecated, message: "cancel through the MainActorImageBinder the target is bound through")
    @_disfavoredOverload
    public func cancelImageLoad(using binder: ImageBinder, operationKey: String = ImageBinder.defaultOperationKey) {
        cancelImageLoad(using: MainActorImageBinder(wrapping: binder, check: false), operationKey: operationKey)
    }
}

extension ImageOptions {
    /// SDWebImage's `SDWebImageQueryDiskDataSync`: reads the disk cache on the calling thread.
    @available(*, deprecated, message: "Blocks the caller's thread, which may be the cooperative pool's; the disk cache is read on its own I/O threads without it")
    public static let queryDiskSync = readsDiskOnCallingThread
}

extension ImageManager {
    /// Whether `request`'s image is cached, in memory or on disk.
    @available(*, deprecated, message: "Use cachedType(for:) != .none")
    public func containsCachedImage(for request: ImageRequest) -> Bool {
        cachedType(for: request) != .none
    }
}

extension ImagePrefetcher {
    @available(*, deprecated, renamed: "startPrefetching(_:progress:completion:)")
    @discardableResult
    public func startPrefetching(
        requests: [ImageRequest],
        progress: (@Sendable (Summary) -> Void)? = nil,
        completion: (@Sendable (Summary) -> Void)? = nil
    ) -> Batch {
        startPrefetching(requests, progress: progress, completion: completion)
    }

    @available(*, deprecated, renamed: "prefetch(_:progress:)")
    public func prefetch(requests: [ImageRequest], progress: (@Sendable (Summary) -> Void)? = nil) async -> Summary {
        await prefetch(requests, progress: progress)
    }
}

extension ImageRequest {
    /// A request for the URL `string` names; an unparsable string fails the load with
    /// ``ImageError/invalidURL(_:)``.
    @available(*, deprecated, message: "Use ImageRequest(url: URL(string: string), options: options)")
    public init(string: String, options: ImageOptions = []) {
        self.init(url: URL(string: string), options: options)
    }
}

extension MemoryCache.Configuration {
    @available(*, deprecated, message: "Use MemoryCache.Configuration()")
    public static var `default`: Self { Self() }
}

extension ImageTask {
    /// Whether the task has its result.
    @available(*, deprecated, message: "Use result != nil")
    public var isFinished: Bool { result != nil }
}
