import Foundation
import Testing
import WebImage
import WebImageCore
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
    func load(_ url: URL, using binder: MainActorImageBinder) async -> Result<ImageResponse, ImageError> {
        await withCheckedContinuation { continuation in
            setImage(with: url, using: binder) { result in
                MainActor.preconditionIsolated()
                continuation.resume(returning: result)
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
        let binder = MainActorImageBinder(manager: fixture.manager)
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

    @Test("setImage(with:using: .shared) binds through the default binder over the manager the application set as shared")
    func defaultBinder() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        ImageManager.shared = fixture.manager
        #expect(MainActorImageBinder.shared.manager === fixture.manager)
        // The any-thread default binder is the one the main-actor default binds through.
        #expect(ImageBinder.shared === MainActorImageBinder.shared.binder)
        let picture = MainActorPicture()
        let result = await picture.load(Fixture.url("hopper.jpg"), using: .shared)
        #expect(try result.get().image.width == 128)
        #expect(picture.shown.last == "image none")
        #expect(fixture.manager.cachedResponse(for: ImageRequest(url: Fixture.url("hopper.jpg"))) != nil)
    }
}

extension MainActorBindingTests {
    @Test("a proxy target (WebImageButton's kind) binds and cancels the target it names")
    func proxyTarget() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let binder = MainActorImageBinder(manager: fixture.manager)
        let frame = PictureFrame()
        let url = Fixture.url("hopper.png")
        let result = await withCheckedContinuation { continuation in
            frame.setImage(with: url, using: binder) { result in continuation.resume(returning: result) }
        }
        #expect(try result.get().image.width == 128)
        #expect(frame.picture.shown == ["placeholder(none)", "image none"])
        #expect(binder.boundURL(of: frame.picture) == url)
        frame.cancelImageLoad(using: binder)
        #expect(binder.boundURL(of: frame.picture) == nil)
    }

    @Test("a binding host (WebImageView's kind) wraps each binding of its main image: its completion first, and the call kept to make again")
    func bindingHost() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let binder = MainActorImageBinder(manager: fixture.manager)
        let url = Fixture.url("hopper.png")
        _ = try await fixture.manager.image(for: ImageRequest(url: url))

        // A memory hit: the whole binding happens inside setImage.
        let host = HostPicture()
        host.setImage(with: url, using: binder) { _ in host.events.append("completion") }
        #expect(host.events == ["start image", "display image", "host completion", "completion", "started"])

        // The call kept makes the same binding again, closures included.
        host.events = []
        host.rebinds.last?()
        #expect(host.events == ["start image", "display image", "host completion", "completion", "started"])

        // Another operation key's binding passes through the host too, which tells them apart.
        host.events = []
        host.setImage(with: url, using: binder, operationKey: "background")
        #expect(host.events == ["start background", "display image", "started"])
    }
}

/// A main-actor target whose bindings are those of the picture it holds, as WebImageButton's
/// are its image view's.
@MainActor
final class PictureFrame: MainActorImageTarget, MainActorImageTargetProxy {
    let picture = MainActorPicture()

    func display(_ display: ImageDisplay) {
        Issue.record("a proxy is never shown anything itself")
    }

    var boundImageTarget: any MainActorImageTarget { picture }
}

/// A main-actor target that records how its bindings run through it, as WebImageView's do.
@MainActor
final class HostPicture: MainActorImageTarget, MainActorImageBindingHost {
    var events: [String] = []
    var rebinds: [@MainActor () -> Void] = []

    func display(_ display: ImageDisplay) {
        if case .image = display.content { events.append("display image") } else { events.append("display other") }
    }

    func hostBinding(
        operationKey: String,
        binder: MainActorImageBinder,
        rebind: @escaping @MainActor () -> Void,
        bind: @MainActor (_ first: (@MainActor (Result<ImageResponse, ImageError>) -> Void)?) -> ImageTask?
    ) -> ImageTask? {
        events.append("start \(operationKey)")
        rebinds.append(rebind)
        let task: ImageTask?
        if operationKey == ImageBinder.defaultOperationKey {
            task = bind { [weak self] _ in self?.events.append("host completion") }
        } else {
            task = bind(nil)
        }
        events.append("started")
        return task
    }
}
