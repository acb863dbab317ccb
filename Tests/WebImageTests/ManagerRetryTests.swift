import Foundation
import MetricsTestKit
import Testing
@testable import WebImageCore
import WebImage
import WebImageTestSupport

/// The manager over the HTTP loader when the origin fails for a while: retries happen inside
/// the one shared download, are counted by reason, and never put a URL on the failed list.
@Suite("ImageManager retries", .timeLimit(.minutes(2 * Deadlines.stretch)))
struct ManagerRetryTests {
    /// Short waits between attempts: these tests count attempts, not time.
    static let quick = RetryPolicy(baseDelay: .milliseconds(10))

    @Test("two requests for one URL share one download, retried once for both: the origin counts three requests")
    func coalescedRequestsRetryOnce() async throws {
        let metrics = TestMetrics()
        let setup = try await ManagerHTTPTests.Setup(configure: { $0.retryPolicy = Self.quick }, configureManager: { $0.metricsFactory = metrics })
        // The first attempt is held until both requests have joined.
        let gate = setup.origin.gate("/flaky/hopper.jpg")
        let url = setup.origin.url("/flaky/hopper.jpg?fail=2")
        let tasks = (0..<2).map { _ in setup.manager.loadImage(with: ImageRequest(url: url)) }
        #expect(await setup.origin.waitForRequests(path: "/flaky/hopper.jpg", count: 1))
        gate.open()
        for task in tasks {
            #expect(try await task.response.image.width == 128)
        }
        #expect(setup.origin.requestCount(path: "/flaky/hopper.jpg") == 3)
        #expect(metrics.counterTotal(label: "webimage_coalesced_requests_total") == 1)
        #expect(metrics.counterTotal(label: "webimage_retries_total", dimensions: [("reason", "http_503")]) == 2)
        #expect(setup.fixture.decodeCount == 1)
        #expect(!setup.manager.isFailedURL(url))
        try await setup.tearDown()
    }

    @Test("the failed-URL list keeps neither a URL that succeeded on retry nor one whose retries all failed with a 503")
    func failedURLListAfterRetries() async throws {
        let setup = try await ManagerHTTPTests.Setup(configure: { $0.retryPolicy = Self.quick })
        let recovered = setup.origin.url("/flaky/hopper.png?fail=2")
        #expect(try await setup.manager.image(for: ImageRequest(url: recovered)).cacheType == .none)
        #expect(!setup.manager.isFailedURL(recovered))

        let failing = setup.origin.url("/flaky/hopper.gif?fail=100")
        for round in 1...2 {
            await #expect(throws: ImageError.httpStatus(503)) { _ = try await setup.manager.image(for: ImageRequest(url: failing)) }
            // Each load made its three attempts: the second was not refused as failed recently.
            #expect(setup.origin.requestCount(path: "/flaky/hopper.gif") == 3 * round)
        }
        #expect(!setup.manager.isFailedURL(failing))

        // A 404 is final at once: one attempt, and the list keeps the URL.
        let missing = setup.origin.url("/flaky/missing.png?fail=100&status=404")
        await #expect(throws: ImageError.httpStatus(404)) { _ = try await setup.manager.image(for: ImageRequest(url: missing)) }
        #expect(setup.origin.requestCount(path: "/flaky/missing.png") == 1)
        #expect(setup.manager.isFailedURL(missing))
        try await setup.tearDown()
    }

    @Test("a request's own policy reaches the loader, either way")
    func requestPolicyWins() async throws {
        let setup = try await ManagerHTTPTests.Setup(configure: { $0.retryPolicy = .never })
        let once = setup.origin.url("/flaky/hopper.png?fail=1")
        await #expect(throws: ImageError.httpStatus(503)) { _ = try await setup.manager.image(for: ImageRequest(url: once)) }
        #expect(setup.origin.requestCount(path: "/flaky/hopper.png") == 1)

        var patient = ImageRequest(url: setup.origin.url("/flaky/hopper.webp?fail=3"))
        patient.retryPolicy = RetryPolicy(maximumAttempts: 4, baseDelay: .milliseconds(10))
        #expect(try await setup.manager.image(for: patient).cacheType == .none)
        #expect(setup.origin.requestCount(path: "/flaky/hopper.webp") == 4)

        try await setup.tearDown()

        let retrying = try await ManagerHTTPTests.Setup(configure: { $0.retryPolicy = Self.quick })
        var impatient = ImageRequest(url: retrying.origin.url("/flaky/hopper.gif?fail=1"))
        impatient.retryPolicy = .never
        await #expect(throws: ImageError.httpStatus(503)) { _ = try await retrying.manager.image(for: impatient) }
        #expect(retrying.origin.requestCount(path: "/flaky/hopper.gif") == 1)
        try await retrying.tearDown()
    }

    @Test("the observer bound where a download starts hears its retries")
    func observerHearsTheRetries() async throws {
        let setup = try await ManagerHTTPTests.Setup(configure: { $0.retryPolicy = Self.quick })
        let heard = Recorder<RetryPolicy.Retry>()
        let url = setup.origin.url("/flaky/hopper.jpg?fail=2&status=502")
        let response = try await RetryObserver.$current.withValue(RetryObserver { heard.append($0) }) {
            try await setup.manager.image(for: ImageRequest(url: url))
        }
        #expect(response.image.width == 128)
        #expect(heard.all.map(\.reason) == [.status(502), .status(502)])
        // Unbound, a load tells nobody (and still retries).
        _ = try await setup.manager.image(for: ImageRequest(url: setup.origin.url("/flaky/hopper.png?fail=1"), options: .fromLoaderOnly))
        #expect(heard.all.count == 2)
        try await setup.tearDown()
    }
}
