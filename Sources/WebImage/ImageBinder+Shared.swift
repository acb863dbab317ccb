import Foundation
import Synchronization
import WebImageCore

extension MainActorImageBinder {
    /// The binder ``shared`` answers while ``ImageManager/shared`` is the manager it was made
    /// over.
    private static let sharedBinder = Mutex<MainActorImageBinder?>(nil)

    /// The default binder of main-actor targets: over ``ImageManager/shared`` (whichever
    /// manager the application set there), delivering on the main actor.
    ///
    /// ```swift
    /// @MainActor func show(_ url: URL, in picture: some MainActorImageTarget) {
    ///     picture.setImage(with: url, using: .shared) { result in print((try? result.get())?.cacheType ?? .none) }
    /// }
    /// ```
    public static var shared: MainActorImageBinder {
        let manager = ImageManager.shared
        return sharedBinder.withLock { binder in
            if let binder, binder.manager === manager { return binder }
            let made = MainActorImageBinder(manager: manager)
            binder = made
            return made
        }
    }
}

extension ImageBinder {
    /// The default binder of ``ImageTarget``s in an application whose main thread drains the
    /// main dispatch queue: over ``ImageManager/shared``, delivering on the main queue. It is
    /// the binder ``MainActorImageBinder/shared`` binds through, so the two share every
    /// target's state. Servers and command-line tools, whose main thread runs no queue, make
    /// their own with ``ImageBinder/Delivery/immediate``.
    ///
    /// ```swift
    /// cell.thumbnail.setImage(with: row.imageURL, using: .shared, placeholder: grey)
    /// ```
    public static var shared: ImageBinder {
        MainActorImageBinder.shared.binder
    }
}
