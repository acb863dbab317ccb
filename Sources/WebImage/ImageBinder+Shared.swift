import Foundation
import Synchronization
import WebImageCore

extension ImageBinder {
    /// The binder of ``ImageManager/shared`` and the one `setImage(with:)` without a binder
    /// uses.
    private static let sharedBinder = Mutex<ImageBinder?>(nil)

    /// The default binder: over ``ImageManager/shared`` (whichever manager the application set
    /// there), delivering on the main actor (``ImageBinder/Delivery/mainActor``).
    ///
    /// ```swift
    /// picture.setImage(with: url)   // binds through ImageBinder.shared
    /// ```
    public static var shared: ImageBinder {
        let manager = ImageManager.shared
        return sharedBinder.withLock { binder in
            if let binder, binder.manager === manager { return binder }
            let made = ImageBinder(manager: manager, delivery: .mainActor)
            binder = made
            return made
        }
    }
}

extension ImageTarget {
    /// Binds this target to `url` through ``ImageBinder/shared``, which delivers on the main
    /// actor; see ``setImage(with:using:placeholder:options:requestOptions:operationKey:transition:progress:completion:)``.
    ///
    /// ```swift
    /// thumbnail.setImage(with: row.imageURL, placeholder: grey)
    /// ```
    @discardableResult
    public func setImage(
        with url: URL?,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        requestOptions: ImageOptions = [],
        transition: ImageTransition = .none,
        completion: (@Sendable (Result<ImageResponse, ImageError>) -> Void)? = nil
    ) -> ImageTask? {
        setImage(
            with: url, using: .shared, placeholder: placeholder, options: options, requestOptions: requestOptions,
            transition: transition, completion: completion)
    }
}

extension MainActorImageTarget {
    /// Binds this target to `url` through ``ImageBinder/shared``: everything arrives on the
    /// main actor.
    ///
    /// ```swift
    /// @MainActor func show(_ picture: some MainActorImageTarget, _ url: URL) {
    ///     picture.setImage(with: url) { result in print((try? result.get())?.cacheType ?? .none) }
    /// }
    /// ```
    @discardableResult
    public func setImage(
        with url: URL?,
        placeholder: ImageContainer? = nil,
        options: ImageBindingOptions = [],
        requestOptions: ImageOptions = [],
        transition: ImageTransition = .none,
        completion: (@MainActor (Result<ImageResponse, ImageError>) -> Void)? = nil
    ) -> ImageTask? {
        setImage(
            with: url, using: .shared, placeholder: placeholder, options: options, requestOptions: requestOptions,
            transition: transition, completion: completion)
    }

    /// Cancels this target's load in ``ImageBinder/shared``.
    public func cancelImageLoad() {
        cancelImageLoad(using: .shared)
    }
}
