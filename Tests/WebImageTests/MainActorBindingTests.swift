import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// A widget wrapper that lives on the main actor, as a toolkit's does: it is shown images and
/// told of completions there, without hopping or asserting in its own code.
@MainActor
final class MainActorPicture: MainActorImageTarget {
    var shown: [String] = []

    func display(_ display: ImageDisplay) {
        // Traps if the binder called it off the main actor.
        MainActor.preconditionIsolated()
        switch display.content {
        case .placeholder(let container): shown.append(container == nil ? "placeholder(none)" : "placeholder")
        case .preview: shown.append("preview")
        case .image(let response): shown.append("image \(response.cacheType)")
        }
    }

    /// Binds to `url` and waits for the completion, which must come on the main actor.
    func load(_ url: URL, using binder: ImageBinder? = nil) async -> Result<ImageResponse, ImageError> {
        await withCheckedContinuation { continuation in
            let completion: @MainActor (Result<ImageResponse, ImageError>) -> Void = { result in
                MainActor.preconditionIsolated()
                continuation.resume(returning: result)
            }
            if let binder {
                setImage(with: url, using: binder, completion: completion)
            } else {
                setImage(with: url, completion: completion)
            }
        }
    }
}

@Suite("Main-actor targets and the default binder", .serialized)
@MainActor
struct MainActorBindingTests {
    @Test("a main-actor target is shown the image and told of completion on the main actor; a memory hit comes before setImage returns")
    func mainActorTarget() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let binder = ImageBinder(manager: fixture.manager, delivery: .mainActor)
        let picture = MainActorPicture()
        let url = Fixture.url("hopper.png")

        let first = await picture.load(url, using: binder)
        #expect(try first.get().image.width == 128)
        #expect(picture.shown == ["placeholder(none)", "image none"])

        var completed = false
        picture.setImage(with: url, using: binder) { result in completed = (try? result.get().cacheType) == .memory }
        #expect(completed)
        #expect(picture.shown.last == "image memory")
    }

    @Test("view.setImage(with:) binds through the default binder over the manager the application set as shared")
    func defaultBinder() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        ImageManager.shared = fixture.manager
        #expect(ImageBinder.shared.manager === fixture.manager)
        let picture = MainActorPicture()
        let result = await picture.load(Fixture.url("hopper.jpg"))
        #expect(try result.get().image.width == 128)
        #expect(picture.shown.last == "image none")
        #expect(fixture.manager.cachedResponse(for: ImageRequest(url: Fixture.url("hopper.jpg"))) != nil)
    }
}
