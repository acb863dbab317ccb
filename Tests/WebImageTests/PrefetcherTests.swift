import Foundation
import Synchronization
import Testing
@_spi(Testing) import WebImageCore
import WebImage
@_spi(Testing) import WebImageHTTP
import WebImageTestSupport

/// The prefetcher over the real HTTP loader and a real disk cache, against a real server on
/// loopback.
@Suite("ImagePrefetcher", .timeLimit(.minutes(2 * Deadlines.stretch)))
struct PrefetcherTests {
    typealias Setup = ManagerHTTPTests.Setup

    @Test("counts: fresh URLs finish, cached and recently failed ones are skipped, 404s fail; nothing is decoded")
    func counts() async throws {
        let setup = try await Setup()
        let origin = setup.origin
        let manager = setup.manager
        // Two images cached beforehand, through the manager.
        _ = try await manager.image(for: ImageRequest(url: origin.url("/hopper.webp")))
        _ = try await manager.image(for: ImageRequest(url: origin.url("/hopper.gif")))
        await manager.waitUntilIdle()
        let decodesBefore = setup.fixture.decodeCount

        let paths = ["/hopper.jpg", "/hopper.png", "/hopper.webp", "/hopper.gif", "/status/404", "/missing.jpg"]
        let urls = paths.map(origin.url)
        let prefetcher = ImagePrefetcher(manager: manager)
        let summary = await prefetcher.prefetch(urls)
        #expect(summary.total == 6)
        #expect(summary.finished == 2)
        #expect(summary.skipped == 2)
        #expect(summary.failed == 2)
        // Which ones, and why.
        #expect(summary.failures.map(\.url) == [urls[4], urls[5]] || summary.failures.map(\.url) == [urls[5], urls[4]])
        for failure in summary.failures { #expect(failure.error == .httpStatus(404), "\(failure)") }
        #expect(summary.cancelled == 0)
        let expectedBytes = try Fixture.data("hopper.jpg").count + Fixture.data("hopper.png").count
        #expect(summary.bytes == expectedBytes)
        await manager.waitUntilIdle()
        // Undecoded: bytes on disk, no pixels anywhere.
        #expect(setup.fixture.decodeCount == decodesBefore)
        #expect(setup.fixture.cache.existsOnDisk(forKey: ImageCacheKey(urls[0].absoluteString)))
        #expect(setup.fixture.cache.existsOnDisk(forKey: ImageCacheKey(urls[1].absoluteString)))
        #expect(manager.cachedResponse(for: ImageRequest(url: urls[0])) == nil)
        for path in ["/hopper.webp", "/hopper.gif"] { #expect(origin.requestCount(path: path) == 1) }

        // Again: the images are on disk, the 404s are refused without a load.
        let again = await prefetcher.prefetch(urls)
        #expect(again.finished == 0)
        #expect(again.skipped == 6)
        #expect(again.failed == 0)
        #expect(again.bytes == 0)
        for path in paths { #expect(origin.requestCount(path: path) == 1, "\(path)") }

        // A following foreground load reads the prefetched bytes from disk.
        let loaded = try await manager.image(for: ImageRequest(url: urls[0]))
        #expect(loaded.cacheType == .disk)
        #expect(loaded.image.width == 128)
        try await setup.tearDown()
    }

    @Test("the memory destination decodes thumbnails into the memory cache; a later request of that size is a memory hit")
    func memoryDestination() async throws {
        let setup = try await Setup()
        var configuration = ImagePrefetcher.Configuration()
        configuration.destination = .memory(thumbnail: .maxPixelSize(32))
        let prefetcher = ImagePrefetcher(manager: setup.manager, configuration: configuration)
        let urls = ["/hopper.jpg", "/hopper.png"].map(setup.origin.url)
        let summary = await prefetcher.prefetch(urls)
        #expect(summary.finished == 2)
        let hit = setup.manager.cachedResponse(for: ImageRequest(url: urls[0], thumbnail: .maxPixelSize(32)))
        #expect(hit?.image.width == 32)
        // In memory now: a second prefetch skips both without a load.
        let again = await prefetcher.prefetch(urls)
        #expect(again.skipped == 2)
        #expect(setup.origin.allRequests.count == 2)
        try await setup.tearDown()
    }

    @Test("progress is reported once per URL, in order, ending at the total; completion once, after it")
    func progressIsMonotonic() async throws {
        let setup = try await Setup()
        let names = ["hopper.jpg", "hopper.png", "hopper.webp", "hopper.gif"]
        // Each URL twice under different queries: eight distinct downloads, plus a 404.
        let urls = names.flatMap { [setup.origin.url("/\($0)?v=1"), setup.origin.url("/\($0)?v=2")] } + [setup.origin.url("/status/404")]
        let events = Recorder<String>()
        let progress = Recorder<ImagePrefetcher.Summary>()
        let completions = Recorder<ImagePrefetcher.Summary>()
        let prefetcher = ImagePrefetcher(manager: setup.manager)
        let batch = prefetcher.startPrefetching(urls, progress: { summary in
            events.append("progress")
            progress.append(summary)
        }, completion: { summary in
            events.append("completion")
            completions.append(summary)
        })
        let final = await batch.summary
        #expect(progress.all.map(\.completed) == Array(1...urls.count))
        #expect(progress.all.allSatisfy { $0.total == urls.count })
        #expect(progress.all.map(\.bytes) == progress.all.map(\.bytes).sorted())
        #expect(completions.all == [final])
        #expect(events.all.last == "completion")
        #expect(events.all.count == urls.count + 1)
        #expect(final.finished == 8 && final.failed == 1)
        #expect(batch.isFinished)
        await setup.manager.waitUntilIdle()
        #expect(completions.all.count == 1)
        try await setup.tearDown()
    }

    @Test("an empty list completes at once")
    func emptyList() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.directory.remove() }
        let completions = Recorder<ImagePrefetcher.Summary>()
        let batch = ImagePrefetcher(manager: fixture.manager).startPrefetching([URL](), completion: { completions.append($0) })
        #expect(batch.isFinished)
        #expect(completions.all == [ImagePrefetcher.Summary(total: 0)])
    }

    @Test("no more than the maximum of prefetches reach the server at once; the next starts as one finishes")
    func concurrencyLimit() async throws {
        let setup = try await Setup()
        let jpeg = try Fixture.data("hopper.jpg")
        let paths = (0..<8).map { "/p\($0).jpg" }
        var gates: [String: TestOrigin.Gate] = [:]
        for path in paths {
            setup.origin.register(path, data: jpeg)
            gates[path] = setup.origin.gate(path)
        }
        let prefetcher = ImagePrefetcher(manager: setup.manager)   // default: 3
        let batch = prefetcher.startPrefetching(paths.map(setup.origin.url))
        #expect(await setup.origin.waitForRequests(count: 3))
        #expect(prefetcher.runningCount == 3)
        #expect(prefetcher.pendingCount == 5)
        // Open the gates one at a time, in arrival order: each lets exactly one more request in.
        for opened in 1...paths.count {
            let arrived = setup.origin.allRequests
            let next = arrived[opened - 1].path
            gates[next]?.open()
            if opened <= paths.count - 3 {
                #expect(await setup.origin.waitForRequests(count: 3 + opened))
            }
        }
        let summary = await batch.summary
        #expect(summary.finished == 8)
        #expect(setup.origin.allRequests.count == 8)
        #expect(setup.origin.maxConcurrentRequests == 3)
        try await setup.tearDown()
    }

    @Test("stopPrefetching drops the given URLs, queued or loading, and the rest of the batch goes on")
    func stopPrefetchingURLs() async throws {
        let setup = try await Setup()
        let jpeg = try Fixture.data("hopper.jpg")
        let paths = (0..<6).map { "/s\($0).jpg" }
        var gates: [TestOrigin.Gate] = []
        for path in paths {
            setup.origin.register(path, data: jpeg)
            gates.append(setup.origin.gate(path))
        }
        let urls = paths.map(setup.origin.url)
        let prefetcher = ImagePrefetcher(manager: setup.manager)   // 3 at a time
        let batch = prefetcher.startPrefetching(urls)
        #expect(await setup.origin.waitForRequests(count: 3))
        let loading = setup.origin.allRequests.map(\.path)
        // Rows that left the window: one loading, two still queued.
        let loadingURL = try #require(urls.first { $0.path == loading[0] })
        let queued = urls.filter { !loading.contains($0.path) }.prefix(2)
        prefetcher.stopPrefetching([loadingURL] + queued)
        for gate in gates { gate.open() }
        let summary = await batch.summary
        #expect(summary.cancelled == 3)
        #expect(summary.finished == 3)
        for url in queued { #expect(setup.origin.requestCount(path: url.path) == 0) }
        try await setup.tearDown()
    }

    @Test("cancel() drops queued URLs (never requested) and cancels those in flight; completion is called once")
    func cancel() async throws {
        let setup = try await Setup()
        let jpeg = try Fixture.data("hopper.jpg")
        let paths = (0..<6).map { "/c\($0).jpg" }
        var gates: [TestOrigin.Gate] = []
        for path in paths {
            setup.origin.register(path, data: jpeg)
            gates.append(setup.origin.gate(path))
        }
        let completions = Recorder<ImagePrefetcher.Summary>()
        let prefetcher = ImagePrefetcher(manager: setup.manager)
        let batch = prefetcher.startPrefetching(paths.map(setup.origin.url), completion: { completions.append($0) })
        #expect(await setup.origin.waitForRequests(count: 3))
        prefetcher.cancel()
        prefetcher.cancel()
        let summary = await batch.summary
        #expect(summary.cancelled == 6)
        #expect(summary.finished == 0)
        for gate in gates { gate.open() }
        await setup.manager.waitUntilIdle()
        #expect(completions.all == [summary])
        #expect(setup.origin.allRequests.count == 3)
        for path in paths.suffix(3) { #expect(setup.origin.requestCount(path: path) == 0) }
        #expect(setup.fixture.cache.diskCount == 0)
        #expect(prefetcher.runningCount == 0 && prefetcher.pendingCount == 0)
        try await setup.tearDown()
    }

    @Test("cancelling the task awaiting prefetch(_:) cancels its batch")
    func taskCancellation() async throws {
        let setup = try await Setup()
        let gate = setup.origin.gate("/hopper.jpg")
        let prefetcher = ImagePrefetcher(manager: setup.manager)
        let urls = ["/hopper.jpg", "/hopper.png", "/hopper.webp", "/hopper.gif"].map(setup.origin.url)
        let task = Task { await prefetcher.prefetch(urls) }
        #expect(await setup.origin.waitForRequests(path: "/hopper.jpg", count: 1))
        task.cancel()
        let summary = await task.value
        #expect(summary.cancelled >= 1)
        #expect(summary.completed == 4)
        gate.open()
        try await setup.tearDown()
    }

    @Test("a foreground request for a URL being prefetched joins its download: one request at the server, both complete")
    func foregroundJoinsPrefetch() async throws {
        let setup = try await Setup()
        let gate = setup.origin.gate("/hopper.jpg")
        let url = setup.origin.url("/hopper.jpg")
        let prefetcher = ImagePrefetcher(manager: setup.manager)
        let batch = prefetcher.startPrefetching([url])
        #expect(await setup.origin.waitForRequests(path: "/hopper.jpg", count: 1))
        #expect(setup.manager.downloadPriority(for: url) == .low)
        let foreground = setup.manager.loadImage(with: ImageRequest(url: url))
        // Joined once the download runs at the foreground's priority.
        #expect(await yieldUntil { setup.manager.downloadPriority(for: url) == .normal })
        gate.open()
        let response = try await foreground.response
        #expect(response.cacheType == .none)
        #expect(response.image.width == 128)
        let summary = await batch.summary
        #expect(summary.finished == 1)
        #expect(summary.bytes == (try Fixture.data("hopper.jpg")).count)
        await setup.manager.waitUntilIdle()
        #expect(setup.origin.requestCount(path: "/hopper.jpg") == 1)
        #expect(setup.fixture.decodeCount == 1)
        #expect(setup.fixture.cache.diskCount == 1)
        try await setup.tearDown()
    }

    @Test("a foreground request raises a queued prefetch's priority: the server sees that URL before the other prefetches")
    func foregroundRaisesPriority() async throws {
        let setup = try await Setup { $0.maximumConcurrentDownloads = 1 }
        let gate = setup.origin.gate("/blocker.png")
        setup.origin.register("/blocker.png", data: try Fixture.data("hopper.png"))
        let blocker = setup.manager.loadImage(with: ImageRequest(url: setup.origin.url("/blocker.png")))
        #expect(await setup.origin.waitForRequests(path: "/blocker.png", count: 1))

        let paths = ["/hopper.jpg", "/hopper.png", "/hopper.webp"]
        let prefetcher = ImagePrefetcher(manager: setup.manager)
        let batch = prefetcher.startPrefetching(paths.map(setup.origin.url))
        #expect(await yieldUntil { setup.loader.waitingDownloadCount == 3 })
        #expect(setup.loader.waitingDownloadPriorities == [.low, .low, .low])

        let last = setup.origin.url(paths[2])
        let foreground = setup.manager.loadImage(with: ImageRequest(url: last))
        #expect(await yieldUntil { setup.loader.waitingDownloadPriorities.first == .normal })
        gate.open()
        _ = try await blocker.response
        let response = try await foreground.response
        #expect(response.image.width == 128)
        let summary = await batch.summary
        #expect(summary.finished == 3)
        // The raised one first; the other two are equals, queued in whichever order their
        // tasks reached the loader.
        let order = setup.origin.allRequests.map(\.path).filter { $0 != "/blocker.png" }
        #expect(order.first == "/hopper.webp")
        #expect(order.sorted() == paths.sorted())
        #expect(setup.origin.requestCount(path: "/hopper.webp") == 1)
        try await setup.tearDown()
    }
}
