import Foundation
import Synchronization
import Testing
@_spi(Testing) import WebImageCore
import WebImage
import WebImageTestSupport

/// The view binding over the real pipeline and HTTP loader, against a real server on loopback.
@Suite("ImageBinder")
struct BindingTests {
    typealias Setup = ManagerHTTPTests.Setup

    @Test("rebinding during a slow load cancels it and never shows the old image")
    func rebindDuringSlowLoad() async throws {
        let setup = try await Setup()
        let binder = ImageBinder(manager: setup.manager)
        let target = RecordingTarget()
        let gate = setup.origin.gate("/hopper.jpg")
        let old = CompletionProbe()
        target.setImage(with: setup.origin.url("/hopper.jpg"), using: binder, placeholder: .placeholder, completion: old.callback)
        #expect(await setup.origin.waitForRequests(path: "/hopper.jpg", count: 1))

        let new = CompletionProbe()
        target.setImage(with: setup.origin.url("/hopper.png"), using: binder, placeholder: .placeholder, completion: new.callback)
        #expect(old.wasCancelled)
        let response = try await new.result.get()
        #expect(response.url.path == "/hopper.png")
        // The old download was dropped: its connection closed before the server sent a byte.
        #expect(await setup.origin.waitForConnectionClose(path: "/hopper.jpg"))
        gate.open()
        await setup.manager.waitUntilIdle()

        #expect(target.summary == ["placeholder", "placeholder", "image /hopper.png none"])
        #expect(old.results.count == 1)
        #expect(new.results.count == 1)
        #expect(binder.boundURL(of: target) == setup.origin.url("/hopper.png"))
        #expect(setup.fixture.cache.memoryCount == 1)
        try await setup.tearDown()
    }

    @Test("a result that reaches the delivery after a rebind is not shown (the sentinel)")
    func staleDeliveryIsDropped() async throws {
        let setup = try await Setup()
        let main = ManualDelivery()
        let binder = ImageBinder(manager: setup.manager, delivery: main.delivery)
        let target = RecordingTarget()
        let old = CompletionProbe()
        let oldTask = target.setImage(with: setup.origin.url("/hopper.jpg"), using: binder, placeholder: .placeholder, completion: old.callback)
        // The old load has finished and its result waits for the "main loop"; the task can no
        // longer be cancelled, so only the generation check stands between it and the target.
        _ = try await oldTask?.response
        #expect(main.pendingCount >= 1)

        let new = CompletionProbe()
        let newGate = setup.origin.gate("/hopper.png")
        target.setImage(with: setup.origin.url("/hopper.png"), using: binder, placeholder: .placeholder, completion: new.callback)
        main.drain()
        #expect(old.wasCancelled)
        #expect(target.summary == ["placeholder", "placeholder"])

        newGate.open()
        // Progress jobs may come first: run jobs until the completion has come.
        while new.results.isEmpty {
            await main.waitForJobs(1)
            main.drain()
        }
        _ = try await new.result.get()
        #expect(target.summary == ["placeholder", "placeholder", "image /hopper.png none"])
        try await setup.tearDown()
    }

    @Test("a memory hit is shown synchronously, without the placeholder first")
    func memoryHitShowsNoPlaceholder() async throws {
        let setup = try await Setup()
        let binder = ImageBinder(manager: setup.manager)
        let first = setup.origin.url("/hopper.jpg")
        let second = setup.origin.url("/hopper.png")
        _ = try await setup.manager.image(for: ImageRequest(url: first))
        _ = try await setup.manager.image(for: ImageRequest(url: second))

        // A reused cell: it shows one image, then is bound to another that is in memory.
        let cell = RecordingTarget()
        let probe = CompletionProbe()
        let task = cell.setImage(with: first, using: binder, placeholder: .placeholder, transition: .fade(.milliseconds(300)), completion: probe.callback)
        #expect(task == nil)
        #expect(cell.summary == ["image /hopper.jpg memory"])
        #expect(try probe.results.first?.get().cacheType == .memory)

        cell.setImage(with: second, using: binder, placeholder: .placeholder, transition: .fade(.milliseconds(300)))
        #expect(cell.summary == ["image /hopper.jpg memory", "image /hopper.png memory"])
        // Memory hits appear at once, unless the caller forces the transition.
        #expect(cell.shown.allSatisfy { $0.transition == .none })
        cell.setImage(with: first, using: binder, options: .forceTransition, transition: .fade(.milliseconds(300)))
        #expect(cell.shown.last?.transition == .fade(.milliseconds(300)))
        #expect(setup.origin.allRequests.count == 2)
        try await setup.tearDown()
    }

    @Test("delayPlaceholder: nothing is shown while loading; the placeholder only after a failure")
    func delayPlaceholder() async throws {
        let setup = try await Setup()
        let binder = ImageBinder(manager: setup.manager)

        let failing = RecordingTarget()
        let failingGate = setup.origin.gate("/status/404")
        let failure = CompletionProbe()
        failing.setImage(with: setup.origin.url("/status/404"), using: binder, placeholder: .placeholder, options: .delayPlaceholder, completion: failure.callback)
        #expect(await setup.origin.waitForRequests(path: "/status/404", count: 1))
        #expect(failing.summary.isEmpty)
        failingGate.open()
        guard case .failure(.httpStatus(404)) = await failure.result else {
            Issue.record("expected a 404: \(failure.results)")
            return
        }
        #expect(failing.summary == ["placeholder"])

        let succeeding = RecordingTarget()
        let gate = setup.origin.gate("/hopper.webp")
        let success = CompletionProbe()
        succeeding.setImage(with: setup.origin.url("/hopper.webp"), using: binder, placeholder: .placeholder, options: .delayPlaceholder, completion: success.callback)
        #expect(await setup.origin.waitForRequests(path: "/hopper.webp", count: 1))
        #expect(succeeding.summary.isEmpty)
        gate.open()
        _ = try await success.result.get()
        #expect(succeeding.summary == ["image /hopper.webp none"])

        // Without the option the placeholder comes at once, and a failure adds nothing.
        let eager = RecordingTarget()
        let eagerFailure = CompletionProbe()
        eager.setImage(with: setup.origin.url("/status/500"), using: binder, placeholder: .placeholder, completion: eagerFailure.callback)
        #expect(eager.summary == ["placeholder"])
        _ = await eagerFailure.result
        #expect(eager.summary == ["placeholder"])
        try await setup.tearDown()
    }

    @Test("avoidAutoSetImage: the completion gets the image, the target only the placeholder")
    func avoidAutoSetImage() async throws {
        let setup = try await Setup()
        let binder = ImageBinder(manager: setup.manager)
        let target = RecordingTarget()
        let probe = CompletionProbe()
        target.setImage(with: setup.origin.url("/hopper.png"), using: binder, placeholder: .placeholder, options: .avoidAutoSetImage, completion: probe.callback)
        let response = try await probe.result.get()
        #expect(response.image.width == 128)
        #expect(response.cacheType == .none)
        #expect(target.summary == ["placeholder"])

        // A memory hit under the option: the completion has it, the target is untouched.
        let again = RecordingTarget()
        let hit = CompletionProbe()
        again.setImage(with: setup.origin.url("/hopper.png"), using: binder, placeholder: .placeholder, options: .avoidAutoSetImage, completion: hit.callback)
        #expect(try hit.results.first?.get().cacheType == .memory)
        #expect(again.summary.isEmpty)
        try await setup.tearDown()
    }

    @Test("a nil URL cancels the load, shows the placeholder and fails with invalidURL")
    func nilURLClearsTheBinding() async throws {
        let setup = try await Setup()
        let binder = ImageBinder(manager: setup.manager)
        let target = RecordingTarget()
        let gate = setup.origin.gate("/hopper.gif")
        let old = CompletionProbe()
        target.setImage(with: setup.origin.url("/hopper.gif"), using: binder, completion: old.callback)
        #expect(await setup.origin.waitForRequests(path: "/hopper.gif", count: 1))

        let cleared = CompletionProbe()
        let task = target.setImage(with: nil, using: binder, placeholder: .placeholder, completion: cleared.callback)
        #expect(task == nil)
        #expect(old.wasCancelled)
        guard cleared.results.count == 1, case .failure(.invalidURL) = cleared.results[0] else {
            Issue.record("expected invalidURL: \(cleared.results)")
            return
        }
        #expect(binder.boundURL(of: target) == nil)
        gate.open()
        await setup.manager.waitUntilIdle()
        #expect(target.summary == ["placeholder(none)", "placeholder"])
        try await setup.tearDown()
    }

    @Test("progress is reported while the binding is current, in order, before the completion")
    func progressCallbacks() async throws {
        let setup = try await Setup()
        let binder = ImageBinder(manager: setup.manager)
        let size = try Fixture.data("hopper.png").count
        let events = Recorder<String>()
        let received = Recorder<Int>()
        let expectedSizes = Recorder<Int?>()
        let probe = CompletionProbe()
        RecordingTarget().setImage(
            with: setup.origin.url("/slow/hopper.png?chunk=4000&delayMs=1"), using: binder,
            completion: { result in
                events.append("completion")
                probe.callback(result)
            },
            progress: { bytes, expected in
                events.append("progress")
                received.append(bytes)
                expectedSizes.append(expected)
            })
        _ = try await probe.result.get()
        #expect(received.all.count >= 2)
        #expect(received.all == received.all.sorted())
        #expect(received.all.last == size)
        #expect(expectedSizes.all.allSatisfy { $0 == size })
        #expect(events.all.last == "completion")
        #expect(events.all.filter { $0 == "completion" }.count == 1)
        try await setup.tearDown()
    }

    @Test("progressive previews reach the target in order, then the final image, nothing after")
    func progressivePreviews() async throws {
        // A decoding thread of its own, as in ManagerHTTPTests.progressivePreviews.
        let setup = try await Setup(configureManager: { $0.executor = BlockingExecutor(name: "test.previews", width: 1) })
        let jpeg = try Data(contentsOf: Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Demo/images/thumb-summer_1am.jpg"))
        setup.origin.register("/summer.jpg", data: jpeg)
        let binder = ImageBinder(manager: setup.manager)
        let target = RecordingTarget()
        let probe = CompletionProbe()
        // 2 KB every 110 ms: longer than the 100 ms preview throttle.
        target.setImage(
            with: ImageRequest(url: setup.origin.url("/slow/summer.jpg?chunk=2000&delayMs=110"), options: .progressiveLoad),
            using: binder, placeholder: .placeholder, transition: .fade(.milliseconds(150)), completion: probe.callback)
        let final = try await probe.result.get()
        await setup.manager.waitUntilIdle()

        let summary = target.summary
        #expect(summary.first == "placeholder")
        #expect(summary.last == "image /slow/summer.jpg none")
        let middle = summary.dropFirst().dropLast()
        #expect(!middle.isEmpty)
        #expect(middle.allSatisfy { $0 == "preview /slow/summer.jpg" })
        let shown = target.shown
        for display in shown.dropFirst().dropLast() {
            #expect(display.container?.isPreview == true)
            #expect(display.transition == .none)
            #expect(display.image?.width == final.image.width)
        }
        #expect(shown.last?.container?.isPreview == false)
        #expect(shown.last?.transition == .fade(.milliseconds(150)))
        try await setup.tearDown()
    }

    @Test("previews that reach the target's main loop after the final image are dropped")
    func lateDeliveredPreviewsAreDropped() async throws {
        // A decoding thread of its own, as in ManagerHTTPTests.progressivePreviews.
        let setup = try await Setup(configureManager: { $0.executor = BlockingExecutor(name: "test.previews", width: 1) })
        let jpeg = try Data(contentsOf: Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Demo/images/thumb-summer_1am.jpg"))
        setup.origin.register("/summer.jpg", data: jpeg)
        let main = ManualDelivery()
        let binder = ImageBinder(manager: setup.manager, delivery: main.delivery)
        let target = RecordingTarget()
        let request = ImageRequest(url: setup.origin.url("/slow/summer.jpg?chunk=2000&delayMs=110"), options: .progressiveLoad)
        let task = try #require(target.setImage(with: request, using: binder, placeholder: .placeholder))
        // A second request joins the same download and sees its previews: proof they were made.
        let witness = setup.manager.loadImage(with: request)
        var previews = 0
        for await event in witness.events {
            if case .preview = event { previews += 1 }
        }
        #expect(previews >= 1)
        _ = try await task.response
        // Every event of the load waits in the queue; a main loop running them newest first
        // meets the final image before the previews.
        main.drainNewestFirst()
        #expect(target.summary == ["placeholder", "image /slow/summer.jpg none"])
        try await setup.tearDown()
    }

    @Test("the completion reports where the image came from: the network, memory, the disk")
    func completionCacheType() async throws {
        let setup = try await Setup()
        let url = setup.origin.url("/hopper.jpg")
        let network = CompletionProbe()
        let first = RecordingTarget()
        let binder = ImageBinder(manager: setup.manager)
        first.setImage(with: url, using: binder, transition: .fade(.milliseconds(200)), completion: network.callback)
        #expect(try await network.result.get().cacheType == .none)
        #expect(first.shown.last?.transition == .fade(.milliseconds(200)))
        await setup.manager.waitUntilIdle()

        let memory = CompletionProbe()
        RecordingTarget().setImage(with: url, using: binder, completion: memory.callback)
        #expect(try memory.results.first?.get().cacheType == .memory)

        let relaunched = try setup.fixture.relaunched(loaders: [setup.loader])
        let disk = CompletionProbe()
        let third = RecordingTarget()
        third.setImage(with: url, using: ImageBinder(manager: relaunched), completion: disk.callback)
        #expect(try await disk.result.get().cacheType == .disk)
        #expect(third.summary == ["placeholder(none)", "image /hopper.jpg disk"])
        #expect(setup.origin.requestCount(path: "/hopper.jpg") == 1)
        await relaunched.waitUntilIdle()
        try await setup.tearDown()
    }

    @Test("operation keys keep independent loads on one target")
    func operationKeys() async throws {
        let setup = try await Setup()
        let binder = ImageBinder(manager: setup.manager)
        let button = RecordingTarget()
        let backgroundGate = setup.origin.gate("/hopper.webp")
        let imageGate = setup.origin.gate("/hopper.gif")
        let background = CompletionProbe()
        let image = CompletionProbe()
        button.setImage(with: setup.origin.url("/hopper.webp"), using: binder, operationKey: "background", completion: background.callback)
        button.setImage(with: setup.origin.url("/hopper.gif"), using: binder, completion: image.callback)
        #expect(await setup.origin.waitForRequests(count: 2))

        // Rebinding the image leaves the background's load alone.
        let replaced = CompletionProbe()
        button.setImage(with: setup.origin.url("/hopper.png"), using: binder, completion: replaced.callback)
        #expect(image.wasCancelled)
        #expect(background.results.isEmpty)
        // Opened at once: a gated request counts against the 15 s download timeout, which a
        // loaded machine can spend on the replacement's load alone.
        backgroundGate.open()
        imageGate.open()
        _ = try await replaced.result.get()
        #expect(try await background.result.get().url.path == "/hopper.webp")
        await setup.manager.waitUntilIdle()

        #expect(binder.boundURL(of: button, operationKey: "background") == setup.origin.url("/hopper.webp"))
        #expect(binder.boundURL(of: button) == setup.origin.url("/hopper.png"))
        let summary = button.summary
        #expect(summary.filter { $0.hasPrefix("background: ") } == ["background: placeholder(none)", "background: image /hopper.webp none"])
        #expect(summary.filter { !$0.hasPrefix("background: ") } == ["placeholder(none)", "placeholder(none)", "image /hopper.png none"])
        try await setup.tearDown()
    }

    @Test("cancel stops the load and shows nothing more; the binder keeps no target alive")
    func cancelAndLifetime() async throws {
        let setup = try await Setup()
        let binder = ImageBinder(manager: setup.manager)
        let target = RecordingTarget()
        let gate = setup.origin.gate("/hopper.jpg")
        let probe = CompletionProbe()
        target.setImage(with: setup.origin.url("/hopper.jpg"), using: binder, placeholder: .placeholder, completion: probe.callback)
        #expect(await setup.origin.waitForRequests(path: "/hopper.jpg", count: 1))
        target.cancelImageLoad(using: binder)
        #expect(probe.wasCancelled)
        #expect(binder.boundURL(of: target) == nil)
        gate.open()
        await setup.manager.waitUntilIdle()
        #expect(target.summary == ["placeholder"])

        weak var gone: RecordingTarget?
        do {
            let transient = RecordingTarget()
            gone = transient
            let done = CompletionProbe()
            transient.setImage(with: setup.origin.url("/hopper.png"), using: binder, completion: done.callback)
            _ = await done.result
        }
        await setup.manager.waitUntilIdle()
        #expect(gone == nil)
        try await setup.tearDown()
    }
}
