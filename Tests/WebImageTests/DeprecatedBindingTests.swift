import Foundation
import Testing
import WebImage
import WebImageCore
import WebImageTestSupport

/// The 1.0 spellings of the binding API still bind, through the API that replaced them. The
/// tests are deprecated themselves, so that calling the old spellings warns nowhere; they are
/// in the serialized main-actor suite because the binder-less ones use ImageManager.shared.
extension MainActorBindingTests {
    @available(*, deprecated, message: "exercises the deprecated 1.0 binding API")
    @Test("1.0: ImageBinder.setImage(on:with:), url(of:), cancel(on:) and ImageTarget.setImage(with:using:requestOptions:) forward")
    func deprecatedBinderCalls() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let binder = ImageBinder(manager: fixture.manager)
        let url = Fixture.url("hopper.png")

        let target = RecordingTarget()
        let probe = CompletionProbe()
        binder.setImage(on: target, with: url, placeholder: .placeholder, requestOptions: .decodeFirstFrameOnly, completion: probe.callback)
        #expect(try await probe.result.get().image.width == 128)
        await fixture.manager.waitUntilIdle()
        #expect(binder.url(of: target) == url)
        binder.cancel(on: target)
        #expect(binder.url(of: target) == nil)

        let byRequest = RecordingTarget()
        binder.setImage(on: byRequest, with: ImageRequest(url: url, options: .decodeFirstFrameOnly))
        #expect(byRequest.summary == ["image \(url.path) memory"])

        let byTarget = RecordingTarget()
        byTarget.setImage(with: url, using: binder, requestOptions: .decodeFirstFrameOnly)
        #expect(byTarget.summary == ["image \(url.path) memory"])
    }

    @available(*, deprecated, message: "exercises the deprecated 1.0 binding API")
    @Test("1.0: a main-actor target bound through an ImageBinder with Delivery.mainActor, and without a binder")
    func deprecatedMainActorCalls() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let binder = ImageBinder(manager: fixture.manager, delivery: .mainActor)
        let url = Fixture.url("hopper.png")

        let picture = MainActorPicture()
        let result = await withCheckedContinuation { continuation in
            picture.setImage(with: url, using: binder, requestOptions: .decodeFirstFrameOnly) { result in
                continuation.resume(returning: result)
            }
        }
        #expect(try result.get().image.width == 128)
        await fixture.manager.waitUntilIdle()
        // The ImageBinder keeps the per-target state the MainActorImageBinder over it uses.
        #expect(MainActorImageBinder(wrapping: binder).boundURL(of: picture) == url)
        picture.cancelImageLoad(using: binder)
        #expect(MainActorImageBinder(wrapping: binder).boundURL(of: picture) == nil)
        picture.setImage(with: ImageRequest(url: url, options: .decodeFirstFrameOnly), using: binder)
        #expect(picture.shown.last == "image memory")

        // Without a binder: the shared one, over ImageManager.shared.
        ImageManager.shared = fixture.manager
        let shared = MainActorPicture()
        shared.setImage(with: url, requestOptions: .decodeFirstFrameOnly)
        #expect(shared.shown == ["image memory"])
        #expect(MainActorImageBinder.shared.boundURL(of: shared) == url)
        shared.cancelImageLoad()
        #expect(MainActorImageBinder.shared.boundURL(of: shared) == nil)
        let plain = RecordingTarget()
        plain.setImage(with: url, requestOptions: .decodeFirstFrameOnly)
        #expect(plain.summary == ["image \(url.path) memory"])
    }
}
