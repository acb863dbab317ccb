import Foundation

/// A decoded image and the bytes it came from: the decode stage's result.
struct DecodedImage: Sendable {
    /// `nil` with ``ImageManager/data(for:)``, or after a `304` (the caller keeps its copy).
    var container: ImageContainer?
    var loaded: LoadedData
    var duration: Duration?
}

extension DecodedImage {
    /// As a request that joined after the decode finished gets it (see ``Replayable/replayed``).
    var replayed: DecodedImage {
        var copy = self
        copy.loaded = loaded.replayed
        return copy
    }
}
