import Foundation
import WebImageCore

// The 1.0 spellings that bound through the shared binder without naming it, kept so that 1.0
// code still compiles (with a warning that names the replacement). Each forwards to the one
// `setImage(with:using:…)` of its kind of target, with `.shared`.

extension ImageTarget {
    @available(*, deprecated, message: "name the binder: setImage(with: url, using: .shared, …); pass an ImageRequest for request options")
    @_disfavoredOverload
    @discardableResult
    public func setImage(
        with url: URL?,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        requestOptions: ImageOptions = [],
        transition: ImageTransition = .none,
        completion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)? = nil
    ) -> ImageTask? {
        let request: (any ImageRequestConvertible)? = url.map { ImageRequest(url: $0, options: requestOptions) }
        return setImage(
            with: request, using: ImageBinder.shared, placeholder: placeholder, options: options,
            transition: transition, completion: completion)
    }
}

extension MainActorImageTarget {
    @available(*, deprecated, message: "name the binder: setImage(with: url, using: .shared, …); pass an ImageRequest for request options")
    @_disfavoredOverload
    @discardableResult
    public func setImage(
        with url: URL?,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        requestOptions: ImageOptions = [],
        transition: ImageTransition = .none,
        completion: (@MainActor (Result<ImageResponse, ImageError>) -> Void)? = nil
    ) -> ImageTask? {
        let request: (any ImageRequestConvertible)? = url.map { ImageRequest(url: $0, options: requestOptions) }
        return setImage(
            with: request, using: MainActorImageBinder.shared, placeholder: placeholder, options: options,
            transition: transition, completion: completion)
    }

    @available(*, deprecated, message: "name the binder: cancelImageLoad(using: .shared)")
    public func cancelImageLoad() {
        cancelImageLoad(using: MainActorImageBinder.shared)
    }
}
