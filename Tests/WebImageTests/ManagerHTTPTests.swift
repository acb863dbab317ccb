import Foundation
import MetricsTestKit
import Synchronization
import Testing
@_spi(Testing) import WebImageCore
import WebImage
@_spi(Testing) import WebImageHTTP
import WebImageTestSupport

/// The manager over the real HTTP loader, against a real server on loopback.
@Suite("ImageManager over HTTP", .timeLimit(.minutes(2 * Deadlines.stretch)))
struct ManagerHTTPTests {
    /// A running origin serving the repository's fixtures, and a manager with an HTTP loader.
    struct Setup {
        let origin: TestOrigin
        let loader: HTTPImageLoader
        let fixture: PipelineFixture

        var manager: ImageManager { fixture.manager }

        init(
            configure: (inout HTTPImageLoader.Configuration) -> Void = { _ in },
            configureManager: (inout ImageManager.Configuration) -> Void = { _ in }
        ) async throws {
            origin = try await TestOrigin.start()
            var configuration = HTTPImageLoader.Configuration()
            // The default whole-request timeout (15 s) is a safety net here, as long as the other
            // tests' request deadlines: a request that a test holds at the origin's gate while it
            // opens the others one by one ran past it under ASan (a prefetch batch finished 7 of
            // 8), and 15 s × stretch (45 s) is less than a gated request can wait on a loaded
            // two-core machine. Tests of the timeout set their own.
            configuration.timeout = .seconds(60 * Deadlines.stretch)
            configure(&configuration)
            loader = HTTPImageLoader(configuration: configuration)
            fixture = try PipelineFixture(loaders: [loader], configure: configureManager)
            for name in ["hopper.jpg", "hopper.png", "hopper.webp", "hopper.gif"] {
                origin.register("/\(name)", data: try Fixture.data(name))
            }
        }

        func tearDown() async throws {
            await manager.waitUntilIdle()
            try await loader.shutdown()
            try await origin.shutdown()
            fixture.directory.remove()
        }
    }

    /// The decoder of `format` among the fixture's counted ones.
    func decoder(_ format: ImageFormat, in setup: Setup) throws -> CountingDecoder {
        try #require(setup.fixture.decoders.first { $0.formats.contains(format) })
    }

    @Test("bytes that arrived are stored on disk when their last requester cancels during the decode: scrolling back downloads nothing")
    func cancelDuringDecodeKeepsTheBytes() async throws {
        let setup = try await Setup()
        let jpeg = try decoder(.jpeg, in: setup)
        jpeg.closeGate()
        let url = setup.origin.url("/hopper.jpg")
        let task = setup.manager.loadImage(with: ImageRequest(url: url))
        #expect(await yieldUntil { jpeg.concurrency.now == 1 })
        task.cancel()
        jpeg.openGate()
        await setup.manager.waitUntilIdle()

        let scrolledBack = try await setup.fixture.relaunched(loaders: [setup.loader]).image(for: ImageRequest(url: url))
        #expect(scrolledBack.cacheType == .disk)
        #expect(setup.origin.requestCount(path: "/hopper.jpg") == 1)
        try await setup.tearDown()
    }

    @Test("bytes that arrived are stored on disk when their last requester cancels while the decode waits for memory")
    func cancelWhileWaitingForDecodeMemoryKeepsTheBytes() async throws {
        // One byte of decode memory: each decode runs alone, so the second waits for the first.
        let setup = try await Setup(configureManager: { $0.decodeMemoryLimit = 1 })
        let gif = try decoder(.gif, in: setup)
        gif.closeGate()
        let holder = setup.manager.loadImage(with: ImageRequest(url: setup.origin.url("/hopper.gif")))
        #expect(await yieldUntil { gif.concurrency.now == 1 })
        let url = setup.origin.url("/hopper.png")
        let task = setup.manager.loadImage(with: ImageRequest(url: url))
        #expect(await yieldUntil { setup.manager.decodeMemory.waiting == 1 })
        task.cancel()
        gif.openGate()
        _ = try await holder.response
        await setup.manager.waitUntilIdle()

        #expect(try decoder(.png, in: setup).count == 0)
        let scrolledBack = try await setup.fixture.relaunched(loaders: [setup.loader]).image(for: ImageRequest(url: url))
        #expect(scrolledBack.cacheType == .disk)
        #expect(setup.origin.requestCount(path: "/hopper.png") == 1)
        try await setup.tearDown()
    }

    @Test("shutdown waits for the work under way, then closes the HTTP client: a later download fails")
    func shutdownClosesTheHTTPClient() async throws {
        let setup = try await Setup()
        let response = try await setup.manager.image(for: ImageRequest(url: setup.origin.url("/hopper.jpg")))
        #expect(response.image.width == 128)
        await setup.manager.shutdown()
        // The bytes were stored before it returned.
        #expect(setup.fixture.cache.diskCount == 1)
        do {
            _ = try await setup.manager.image(for: ImageRequest(url: setup.origin.url("/hopper.png")))
            Issue.record("a download after shutdown succeeded")
        } catch {}
        #expect(setup.origin.requestCount(path: "/hopper.png") == 0)
        try await setup.origin.shutdown()
        setup.fixture.directory.remove()
    }

    @Test("100 concurrent requests for one URL make one request; cancelling 99 leaves the last to complete")
    func coalescingAndPartialCancellation() async throws {
        let setup = try await Setup()
        let gate = setup.origin.gate("/hopper.jpg")
        let url = setup.origin.url("/hopper.jpg")
        let outcomes = Recorder<(Int, Result<ImageResponse, ImageError>)>()
        let tasks = (0..<100).map { index in
            setup.manager.loadImage(with: ImageRequest(url: url)) { outcomes.append((index, $0)) }
        }
        #expect(await setup.origin.waitForRequests(path: "/hopper.jpg", count: 1))
        for task in tasks.dropLast() { task.cancel() }
        #expect(outcomes.all.count == 99)
        #expect(outcomes.all.allSatisfy { if case .failure(.cancelled) = $0.1 { true } else { false } })
        gate.open()
        let last = try await tasks.last!.response
        #expect(last.cacheType == .none)
        #expect(last.image.width == 128)
        await setup.manager.waitUntilIdle()
        #expect(outcomes.all.count == 100)
        #expect(setup.origin.requestCount(path: "/hopper.jpg") == 1)
        #expect(setup.fixture.decodeCount == 1)
        try await setup.tearDown()
    }

    @Test("cancelling every request closes the connection and stores nothing")
    func cancellingAllStopsTheDownload() async throws {
        let setup = try await Setup()
        _ = setup.origin.gate("/hopper.png", mode: .sendHeadersThenHold(bytes: 100))
        let tasks = (0..<10).map { _ in setup.manager.loadImage(with: ImageRequest(url: setup.origin.url("/hopper.png"))) }
        #expect(await setup.origin.waitForRequests(path: "/hopper.png", count: 1))
        for task in tasks { task.cancel() }
        #expect(await setup.origin.waitForConnectionClose(path: "/hopper.png"))
        await setup.manager.waitUntilIdle()
        for task in tasks {
            guard case .failure(.cancelled) = task.result else { Issue.record("\(task): \(String(describing: task.result))"); continue }
        }
        #expect(setup.origin.requests(path: "/hopper.png").first?.outcome == .aborted)
        #expect(setup.fixture.decodeCount == 0)
        #expect(setup.fixture.cache.diskCount == 0)
        #expect(setup.fixture.cache.memoryCount == 0)
        #expect(setup.manager.activeJobs == (0, 0, 0))
        try await setup.tearDown()
    }

    @Test("requests with different processors share one download and one decode; a thumbnail adds one decode")
    func processorsShareDownloadAndDecode() async throws {
        let setup = try await Setup()
        let gate = setup.origin.gate("/hopper.jpg")
        let url = setup.origin.url("/hopper.jpg")
        let variants: [ImageRequest] = [
            ImageRequest(url: url),
            ImageRequest(url: url, processors: [ImageProcessors.Circle()]),
            ImageRequest(url: url, processors: [ImageProcessors.Grayscale()]),
            ImageRequest(url: url, processors: [ImageProcessors.Resize(width: 64, height: 64, contentMode: .fit)]),
            ImageRequest(url: url, thumbnail: .maxPixelSize(32)),
        ]
        let tasks = variants.map { setup.manager.loadImage(with: $0) }
        #expect(await setup.origin.waitForRequests(path: "/hopper.jpg", count: 1))
        gate.open()
        var sizes: [Int] = []
        for task in tasks { sizes.append(try await task.response.image.width) }
        #expect(sizes == [128, 128, 128, 64, 32])
        #expect(setup.origin.requestCount(path: "/hopper.jpg") == 1)
        #expect(setup.fixture.decodeCount == 2)
        await setup.manager.waitUntilIdle()
        #expect(setup.fixture.cache.memoryCount == 5)
        #expect(setup.fixture.cache.diskCount == 1)
        try await setup.tearDown()
    }

    @Test("a queued request whose priority is raised runs before the others")
    func priorityChangeWhileQueued() async throws {
        let setup = try await Setup { $0.maximumConcurrentDownloads = 1 }
        let gate = setup.origin.gate("/hopper.gif")
        let blocker = setup.manager.loadImage(with: ImageRequest(url: setup.origin.url("/hopper.gif")))
        #expect(await setup.origin.waitForRequests(path: "/hopper.gif", count: 1))
        let names = ["hopper.jpg", "hopper.png", "hopper.webp"]
        let tasks = names.map { setup.manager.loadImage(with: ImageRequest(url: setup.origin.url("/\($0)"), priority: .low)) }
        // The manager starts each download in a task of its own; yield (never sleep) until all
        // three wait in the loader's queue.
        while setup.loader.waitingDownloadCount < 3 { await Task.yield() }
        tasks[2].priority = .veryHigh
        tasks[1].priority = .high
        gate.open()
        _ = try await blocker.response
        for task in tasks { _ = try await task.response }
        let order = setup.origin.allRequests.map(\.path).filter { $0 != "/hopper.gif" }
        #expect(order == ["/hopper.webp", "/hopper.png", "/hopper.jpg"])
        try await setup.tearDown()
    }

    @Test("refreshCached with a 304 keeps the cached bytes; with a 200 replaces them and delivers the new image")
    func refreshCached() async throws {
        let setup = try await Setup()
        let png = try Fixture.data("hopper.png")
        setup.origin.register("/avatar.png", data: png, etag: "\"v1\"")
        let url = setup.origin.url("/avatar.png")
        let first = try await setup.manager.image(for: ImageRequest(url: url))
        await setup.manager.waitUntilIdle()

        // 304: the cached copy first, then the same image, marked revalidated.
        let unchanged = setup.manager.loadImage(with: ImageRequest(url: url, options: .refreshCached))
        var events: [String] = []
        for await event in unchanged.events {
            switch event {
            case .cached(let response): events.append("cached:\(response.cacheType)")
            case .finished(.success(let response)): events.append("finished:\(response.cacheType):\(response.isRevalidated)")
            case .finished(.failure(let error)): events.append("failed:\(error)")
            case .progress, .preview: break
            }
        }
        #expect(events == ["cached:memory", "finished:memory:true"])
        let revalidation = try #require(setup.origin.requests(path: "/avatar.png").last)
        #expect(revalidation.header("If-None-Match") == "\"v1\"")
        #expect(setup.origin.requestCount(path: "/avatar.png") == 2)

        // 200: the origin has a new image.
        let jpeg = try Fixture.data("hopper.jpg")
        setup.origin.register("/avatar.png", data: jpeg, etag: "\"v2\"")
        let changed = try await setup.manager.image(for: ImageRequest(url: url, options: .refreshCached))
        #expect(changed.cacheType == .none)
        #expect(changed.container.format == .jpeg)
        #expect(changed.image.pixels != first.image.pixels)
        await setup.manager.waitUntilIdle()
        #expect(try await setup.manager.image(for: ImageRequest(url: url)).container.format == .jpeg)
        let relaunched = try setup.fixture.relaunched(loaders: [setup.loader])
        let fromDisk = try await relaunched.image(for: ImageRequest(url: url))
        #expect(fromDisk.cacheType == .disk)
        #expect(fromDisk.container.format == .jpeg)
        try await setup.tearDown()
    }

    @Test("404 enters the failed-URL list and is not requested again; 500, 408 and 429 never do")
    func failedURLRules() async throws {
        // One attempt a load, so that the origin counts loads (the retries have their tests).
        let setup = try await Setup { $0.retryPolicy = .never }
        let missing = setup.origin.url("/status/404")
        await #expect(throws: ImageError.httpStatus(404)) { _ = try await setup.manager.image(for: ImageRequest(url: missing)) }
        await #expect(throws: ImageError.recentlyFailed(missing.absoluteString)) { _ = try await setup.manager.image(for: ImageRequest(url: missing)) }
        #expect(setup.origin.requestCount(path: "/status/404") == 1)
        await #expect(throws: ImageError.httpStatus(404)) { _ = try await setup.manager.image(for: ImageRequest(url: missing, options: .retryFailed)) }
        #expect(setup.origin.requestCount(path: "/status/404") == 2)

        for status in [500, 408, 429] {
            let url = setup.origin.url("/status/\(status)")
            for _ in 0..<2 {
                await #expect(throws: ImageError.httpStatus(status)) { _ = try await setup.manager.image(for: ImageRequest(url: url)) }
            }
            #expect(setup.origin.requestCount(path: "/status/\(status)") == 2)
            #expect(!setup.manager.isFailedURL(url))
        }
        try await setup.tearDown()
    }

    @Test("a stalled download fails with a timeout, a closed port with connectionRefused; neither is remembered")
    func transientNetworkFailures() async throws {
        let setup = try await Setup { $0.timeout = .milliseconds(300) }
        let stalled = setup.origin.url("/stall/x?bytes=5000")
        do {
            _ = try await setup.manager.image(for: ImageRequest(url: stalled))
            Issue.record("a stalled download completed")
        } catch ImageError.timeout {}
        #expect(!setup.manager.isFailedURL(stalled))
        try await setup.tearDown()

        // The default time limit here: under load (the suite also runs under ASan) even a
        // refused connection can take longer than the stall test's 300 ms.
        let unhurried = try await Setup()
        let port = try await TestOrigin.closedPort()
        let refused = try #require(URL(string: "http://127.0.0.1:\(port)/a.png"))
        await #expect(throws: ImageError.self) { _ = try await unhurried.manager.image(for: ImageRequest(url: refused)) }
        do {
            _ = try await unhurried.manager.image(for: ImageRequest(url: refused))
        } catch ImageError.network(let failure) {
            #expect(failure.kind == .connectionRefused)
        }
        #expect(!unhurried.manager.isFailedURL(refused))
        try await unhurried.tearDown()
    }

    @Test("progress events rise to the expected size and come before the outcome")
    func progressEvents() async throws {
        let setup = try await Setup()
        let size = try Fixture.data("hopper.webp").count
        let task = setup.manager.loadImage(with: ImageRequest(url: setup.origin.url("/slow/hopper.webp?chunk=1000&delayMs=1")))
        var received: [Int] = []
        var finished = false
        for await event in task.events {
            switch event {
            case .progress(let bytes, let expected):
                #expect(!finished)
                #expect(expected == size)
                received.append(bytes)
            case .finished(let result):
                finished = true
                #expect(try result.get().image.width == 128)
            case .preview, .cached: break
            }
        }
        #expect(finished)
        #expect(received.count >= 2)
        #expect(received == received.sorted())
        #expect(received.last == size)
        try await setup.tearDown()
    }

    @Test("events can be iterated by any number of consumers; each sees the progress and the one outcome, a late one the outcome alone")
    func manyEventConsumers() async throws {
        let setup = try await Setup()
        let size = try Fixture.data("hopper.webp").count
        let task = setup.manager.loadImage(with: ImageRequest(url: setup.origin.url("/slow/hopper.webp?chunk=1000&delayMs=1")))
        // Three streams made before any event: two of events, one of progress alone.
        let streams = [task.events, task.events]
        let progress = task.progress
        let seen = try await withThrowingTaskGroup(of: (received: [Int], finished: Int).self) { group in
            for events in streams {
                group.addTask {
                    var received: [Int] = [], finished = 0
                    for await event in events {
                        switch event {
                        case .progress(let bytes, _): received.append(bytes)
                        case .finished(let result):
                            finished += 1
                            #expect((try? result.get())?.image.width == 128)
                        case .preview, .cached: break
                        }
                    }
                    return (received, finished)
                }
            }
            group.addTask {
                var received: [Int] = []
                for await step in progress {
                    #expect(step.expected == size)
                    received.append(step.received)
                }
                return (received, 1)
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(seen.count == 3)
        for (received, finished) in seen {
            #expect(finished == 1)
            #expect(received.count >= 2 && received == received.sorted() && received.last == size)
        }
        // After the outcome: a new stream gets it, and nothing else.
        var late: [String] = []
        for await event in task.events {
            if case .finished(.success) = event { late.append("finished") } else { late.append("other") }
        }
        #expect(late == ["finished"])
        var lateProgress = 0
        for await _ in task.progress { lateProgress += 1 }
        #expect(lateProgress == 0)
        try await setup.tearDown()
    }

    @Test("progressiveLoad delivers previews of a progressive JPEG while it downloads, then the final image, nothing after")
    func progressivePreviews() async throws {
        // A decoding thread of its own: the process-wide ones are queued deep with the other
        // suites' decodes, and previews made after the last byte are (rightly) dropped.
        let setup = try await Setup(configureManager: { $0.executor = BlockingExecutor(name: "test.previews", width: 1) })
        let jpeg = try Data(contentsOf: Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Demo/images/thumb-summer_1am.jpg"))
        setup.origin.register("/summer.jpg", data: jpeg)
        // The server paces the body (2 KB every 110 ms), longer than the 100 ms preview throttle.
        let task = setup.manager.loadImage(with: ImageRequest(url: setup.origin.url("/slow/summer.jpg?chunk=2000&delayMs=110"), options: .progressiveLoad))
        // A second consumer, of the previews alone.
        let previewStream = task.previews
        var kinds: [String] = []
        var previews: [ImageResponse] = []
        var final: ImageResponse?
        for await event in task.events {
            switch event {
            case .progress: kinds.append("progress")
            case .preview(let response):
                kinds.append("preview")
                previews.append(response)
            case .cached: kinds.append("cached")
            case .finished(let result):
                kinds.append("finished")
                final = try result.get()
            }
        }
        let image = try #require(final?.image)
        #expect(final?.container.isPreview == false)
        #expect(!previews.isEmpty)
        var streamedPreviews = 0
        for await preview in previewStream {
            #expect(preview.container.isPreview == true)
            streamedPreviews += 1
        }
        #expect(streamedPreviews == previews.count)
        #expect(kinds.last == "finished")
        #expect(kinds.filter { $0 == "finished" }.count == 1)
        for preview in previews {
            #expect(preview.container.isPreview == true)
            #expect(preview.image.width == image.width)
            #expect(preview.image.height == image.height)
        }
        // The last preview is closer to the final image than the first (scans refine it).
        if previews.count >= 2, let first = previews.first?.image, let last = previews.last?.image {
            #expect(meanDifference(last, image) <= meanDifference(first, image))
        }
        try await setup.tearDown()
    }

    private func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        zip(a.pixels, b.pixels).reduce(0.0) { $0 + Double(abs(Int($1.0) - Int($1.1))) } / Double(a.pixels.count)
    }

    @Test("a request modifier and per-request headers reach the server; a cache key filter drops signing parameters")
    func modifiersAndKeyFilter() async throws {
        let setup = try await Setup()
        var request = ImageRequest(url: setup.origin.url("/hopper.png?sig=abc"))
        request.headers["X-Client"] = "tests"
        request.requestModifier = { original in
            var modified = original
            modified.headers["Authorization"] = "Bearer token"
            return modified
        }
        request.cacheKeyFilter = { url in url.absoluteString.components(separatedBy: "?")[0] }
        _ = try await setup.manager.image(for: request)
        let record = try #require(setup.origin.requests(path: "/hopper.png").first)
        #expect(record.header("X-Client") == "tests")
        #expect(record.header("Authorization") == "Bearer token")
        var resigned = ImageRequest(url: setup.origin.url("/hopper.png?sig=def"))
        resigned.cacheKeyFilter = request.cacheKeyFilter
        #expect(try await setup.manager.image(for: resigned).cacheType == .memory)
        #expect(setup.origin.requestCount(path: "/hopper.png") == 1)
        try await setup.tearDown()
    }

    @Test("stress: 2,000 requests over 200 URLs with random cancellations and priority changes each complete exactly once")
    func stress() async throws {
        let setup = try await Setup()
        let images = try ["hopper.jpg", "hopper.png", "hopper.webp", "hopper.gif"].map { try Fixture.data($0) }
        for index in 0..<200 {
            setup.origin.register("/stress/\(index)", data: images[index % images.count])
        }
        var generator = SeededGenerator(seed: 42)
        let completions = Recorder<Int>()
        var tasks: [ImageTask] = []
        var listeners: [Task<Void, Never>] = []
        for _ in 0..<2000 {
            let index = Int.random(in: 0..<200, using: &generator)
            var request = ImageRequest(url: setup.origin.url("/stress/\(index)"))
            if Bool.random(using: &generator) { request.thumbnail = .maxPixelSize(48) }
            request.priority = ImagePriority.allCases.randomElement(using: &generator)!
            let task = setup.manager.loadImage(with: request) { _ in }
            tasks.append(task)
            let id = task.id
            let events = task.events
            listeners.append(Task {
                for await event in events {
                    if case .finished = event { completions.append(id) }
                }
            })
            switch Int.random(in: 0..<10, using: &generator) {
            case 0, 1: task.cancel()
            case 2: tasks.randomElement(using: &generator)!.priority = .veryHigh
            case 3: tasks.randomElement(using: &generator)!.cancel()
            default: break
            }
        }
        var succeeded = 0
        var cancelled = 0
        for task in tasks {
            do {
                _ = try await task.response
                succeeded += 1
            } catch ImageError.cancelled {
                cancelled += 1
            } catch {
                Issue.record("\(task): \(error)")
            }
        }
        for listener in listeners { await listener.value }
        #expect(succeeded + cancelled == 2000)
        #expect(succeeded > 1000)
        await setup.manager.waitUntilIdle()
        #expect(setup.manager.activeJobs == (0, 0, 0))
        // Each task's event stream ended with exactly one outcome.
        let counts = Dictionary(completions.all.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(tasks.allSatisfy { counts[$0.id] == 1 })
        #expect(counts.count == 2000)
        // Nothing holds on to a finished task: the jobs let go of their subscribers.
        final class WeakTask { weak var task: ImageTask?; init(_ task: ImageTask) { self.task = task } }
        let weakTasks = tasks.map(WeakTask.init)
        tasks.removeAll()
        #expect(weakTasks.allSatisfy { $0.task == nil })
        // No URL was downloaded more often than there were separate waves of requests for it;
        // with 2,000 requests over 200 URLs, far fewer downloads than requests.
        #expect(setup.origin.allRequests.count < 2000 / 2)
        try await setup.tearDown()
    }
}

@Suite("ImageManager metrics")
struct ManagerMetricsTests {
    @Test("requests, hits by cache type, bytes downloaded, coalesced requests and failures by kind are counted")
    func counters() async throws {
        let origin = try await TestOrigin.start()
        let metrics = TestMetrics()
        // The download deadline as Setup's: the gated request waits for the test's next steps.
        var http = HTTPImageLoader.Configuration()
        http.timeout = .seconds(60 * Deadlines.stretch)
        let loader = HTTPImageLoader(configuration: http)
        let fixture = try PipelineFixture(loaders: [loader]) { $0.metricsFactory = metrics }
        let png = try Fixture.data("hopper.png")
        origin.register("/a.png", data: png)
        let gate = origin.gate("/a.png")
        let url = origin.url("/a.png")
        let tasks = (0..<3).map { _ in fixture.manager.loadImage(with: ImageRequest(url: url)) }
        #expect(await origin.waitForRequests(path: "/a.png", count: 1))
        gate.open()
        for task in tasks { _ = try await task.response }
        _ = try await fixture.manager.image(for: ImageRequest(url: url))
        await #expect(throws: ImageError.httpStatus(404)) { _ = try await fixture.manager.image(for: ImageRequest(url: origin.url("/status/404"))) }
        await fixture.manager.waitUntilIdle()

        #expect(metrics.counterTotal(label: "webimage_requests_total") == 5)
        #expect(metrics.counterTotal(label: "webimage_hits_total", dimensions: [("cache", "none")]) == 3)
        #expect(metrics.counterTotal(label: "webimage_hits_total", dimensions: [("cache", "memory")]) == 1)
        #expect(metrics.counterTotal(label: "webimage_coalesced_requests_total") == 2)
        #expect(metrics.counterTotal(label: "webimage_downloaded_bytes_total") == Int64(png.count))
        #expect(metrics.counterTotal(label: "webimage_failures_total", dimensions: [("kind", "http_status")]) == 1)
        #expect(try metrics.expectTimer("webimage_load_duration_seconds").values.count == 4)
        try await loader.shutdown()
        try await origin.shutdown()
        fixture.directory.remove()
    }
}
