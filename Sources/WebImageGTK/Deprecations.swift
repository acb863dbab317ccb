import Foundation
import WebImage
// The binding API this package shares between its modules (package access).
import WebImageCore

// The 1.0 spellings of the GTK views' binding API, kept so that 1.0 code still compiles (with a
// warning that names the replacement). A view no longer owns a binder: each
// `setImage(with:using:…)` names the one it binds through. These forward to it, with the binder
// a view was made with (it must deliver on the main actor, as 1.0 required) or `.shared`.

extension WebImageView {
    @available(*, deprecated, message: "make the view with WebImageView() and name the binder in each setImage(with:using:…): a MainActorImageBinder")
    public convenience init(binder: ImageBinder) {
        self.init()
        legacyBinder = binder
    }

    @available(*, deprecated, message: "the view loads through the MainActorImageBinder each setImage(with:using:…) names")
    public var binder: ImageBinder {
        legacyBinder ?? currentBinder?.binder ?? .shared
    }

    @available(*, deprecated, message: "name the binder: setImage(with: url, using: .shared, …); pass an ImageRequest for request options")
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
        let request: (any ImageRequestConvertible)? = url.map { ImageRequest(url: $0, options: requestOptions) }
        return setImage(
            with: request, using: legacyMainActorBinder, placeholder: placeholder, options: options,
            transition: transition, completion: completion, progress: progress)
    }

    /// What the deprecated calls bind through: the deprecated `init(binder:)`'s binder, else the
    /// shared one.
    var legacyMainActorBinder: MainActorImageBinder {
        legacyBinder.map { MainActorImageBinder(wrapping: $0) } ?? .shared
    }
}

extension WebImageButton {
    @available(*, deprecated, message: "make the button with WebImageButton() and name the binder in each setImage(with:using:…): a MainActorImageBinder")
    public convenience init(binder: ImageBinder) {
        self.init()
        imageView.legacyBinder = binder
    }

    @available(*, deprecated, message: "name the binder: setImage(with: url, using: .shared, …); pass an ImageRequest for request options")
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
        let request: (any ImageRequestConvertible)? = url.map { ImageRequest(url: $0, options: requestOptions) }
        return setImage(
            with: request, using: imageView.legacyMainActorBinder, placeholder: placeholder, options: options,
            transition: transition, completion: completion, progress: progress)
    }
}
