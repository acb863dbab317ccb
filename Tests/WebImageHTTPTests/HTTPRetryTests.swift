import Foundation
import Testing
@testable import WebImageHTTP
import WebImageCore
import WebImageTestSupport

/// The loader's retries against a real server on loopback whose `/flaky/` endpoint fails the
/// first requests of a URL as told (a status, a reset or a stall before the head) and counts
/// every request.
@Suite("HTTPImageLoader retries", .timeLimit(.minutes(2 * Deadlines.stretch)))
struct HTTPRetryTests {
    static let png = HTTPImageLoaderTests.png

    /// What one load did: its response or its error, and the retries its context heard of.
    struct Outcome {
        var response: ImageLoadResponse?
        var error: ImageError?
        var retries: [RetryPolicy.Retry]
    }

    /// Loads `url` (with the request's own `policy` when given), collecting the retries.
    static func load(_ loader: HTTPImageLoader, _ url: URL, policy: RetryPolicy? = nil) async -> Outcome {
        var request = ImageLoadRequest(url: url)
        request.retryPolicy = policy
        let retries = Collected<RetryPolicy.Retry>()
        let context = ImageLoadContext()
        context.onRetry { retries.append($0) }
        do {
            let response = try await loader.load(request, context: context)
            return Outcome(response: response, retries: retries.values)
        } catch {
            return Outcome(error: error as? ImageError, retries: retries.values)
        }
    }

    @Test("503 twice, then the image: the load succeeds at the third attempt, and the origin counted three")
    func serviceUnavailableTwice() async throws {
        try await withLoader { origin, loader in
            origin.register("/a.png", data: Self.png, contentType: "image/png")
            let outcome = await Self.load(loader, origin.url("/flaky/a.png?fail=2&status=503"))
            #expect(outcome.response?.data == Self.png)
            #expect(origin.requestCount(path: "/flaky/a.png") == 3)
            #expect(outcome.retries.map(\.attempt) == [1, 2])
            #expect(outcome.retries.map(\.reason) == [.status(503), .status(503)])
            // Full jitter: each wait within its doubling range.
            try #require(outcome.retries.count == 2)
            #expect(outcome.retries[0].delay <= .milliseconds(200))
            #expect(outcome.retries[1].delay <= .milliseconds(400))
        }
    }

    @Test("429 with Retry-After: 1: the second attempt reaches the origin no earlier than a second after the first")
    func tooManyRequestsWaitsRetryAfter() async throws {
        try await withLoader { origin, loader in
            origin.register("/b.png", data: Self.png)
            let outcome = await Self.load(loader, origin.url("/flaky/b.png?fail=1&status=429&retryAfter=1"))
            #expect(outcome.response?.data == Self.png)
            #expect(outcome.retries.map(\.delay) == [.seconds(1)])
            #expect(outcome.retries.map(\.reason) == [.status(429)])
            let arrivals = origin.requests(path: "/flaky/b.png").map(\.arrivalNanoseconds)
            try #require(arrivals.count == 2)
            #expect(arrivals[1] - arrivals[0] >= 1_000_000_000)
        }
    }

    @Test("a Retry-After past the cap is waited only up to the cap")
    func retryAfterIsCapped() async throws {
        try await withLoader({ $0.retryPolicy = RetryPolicy(maximumAttempts: 2, maximumDelay: .milliseconds(300)) }) { origin, loader in
            origin.register("/c.png", data: Self.png)
            let started = ContinuousClock.now
            let outcome = await Self.load(loader, origin.url("/flaky/c.png?fail=1&status=503&retryAfter=120"))
            #expect(outcome.response?.data == Self.png)
            #expect(outcome.retries.map(\.delay) == [.milliseconds(300)])
            let arrivals = origin.requests(path: "/flaky/c.png").map(\.arrivalNanoseconds)
            try #require(arrivals.count == 2)
            #expect(arrivals[1] - arrivals[0] >= 300_000_000)
            // Far from the two minutes asked: only the cap can have ended the wait.
            #expect(ContinuousClock.now - started < .seconds(60))
        }
    }

    @Test("a 404 is tried once; so is a body broken halfway")
    func finalFailuresAreTriedOnce() async throws {
        try await withLoader { origin, loader in
            let missing = await Self.load(loader, origin.url("/flaky/d.png?fail=5&status=404"))
            #expect(missing.error == .httpStatus(404))
            #expect(missing.retries.isEmpty)
            #expect(origin.requestCount(path: "/flaky/d.png") == 1)

            // Headers and half the body, then a reset: the caller has had bytes, so no retry.
            let reset = await Self.load(loader, origin.url("/reset/x?bytes=400000"))
            #expect(reset.error?.networkKind == .connectionLost || reset.error?.networkKind == .invalidResponse)
            #expect(reset.retries.isEmpty)
            #expect(origin.requestCount(path: "/reset/x") == 1)
        }
    }

    @Test("a connection reset before the head is retried")
    func resetBeforeTheHead() async throws {
        try await withLoader { origin, loader in
            origin.register("/e.png", data: Self.png)
            let outcome = await Self.load(loader, origin.url("/flaky/e.png?mode=reset"))
            #expect(outcome.response?.data == Self.png)
            #expect(outcome.retries.map(\.reason) == [.connectionLost])
            #expect(origin.requestCount(path: "/flaky/e.png") == 2)
        }
    }

    @Test("a stall before the head, with a load timeout shorter than the head timeout, spends it and is not retried past it")
    func stallBeforeTheHead() async throws {
        try await withLoader({ $0.timeout = .seconds(2); $0.headTimeout = .seconds(5) }) { origin, loader in
            origin.register("/f.png", data: Self.png)
            let outcome = await Self.load(loader, origin.url("/flaky/f.png?mode=stall"))
            guard case .timeout = outcome.error else {
                Issue.record("expected a timeout, got \(String(describing: outcome.error)) / \(String(describing: outcome.response))")
                return
            }
            #expect(outcome.retries.isEmpty)
            #expect(origin.requestCount(path: "/flaky/f.png") == 1)
            // The stalled attempt's connection was closed when it timed out.
            #expect(await origin.waitForConnectionClose(path: "/flaky/f.png"))
        }
    }

    @Test("a stall before the head ends the attempt at the head timeout, and the retry gets the image")
    func stallBeforeTheHeadIsRetried() async throws {
        try await withLoader({ $0.headTimeout = .milliseconds(500) }) { origin, loader in
            origin.register("/g.png", data: Self.png)
            let outcome = await Self.load(loader, origin.url("/flaky/g.png?fail=1&mode=stall"))
            #expect(outcome.response?.data == Self.png)
            #expect(outcome.retries.map(\.reason) == [.timeout])
            #expect(origin.requestCount(path: "/flaky/g.png") == 2)
            // The stalled attempt's connection was closed when its head timed out.
            #expect(await origin.waitForConnectionClose(path: "/flaky/g.png"))
        }
    }

    /// The rule alone: the behaviour it sets is `stallBeforeTheHeadIsRetried`'s, whose short
    /// head timeout keeps the test's time small.
    @Test("by default the head may take a third of the load's timeout; a head timeout set wins")
    func headTimeoutIsAThirdOfTheTimeout() {
        var configuration = HTTPImageLoader.Configuration()
        #expect(configuration.resolvedHeadTimeout == .seconds(5))
        configuration.timeout = .seconds(60)
        #expect(configuration.resolvedHeadTimeout == .seconds(20))
        configuration.headTimeout = .seconds(2)
        #expect(configuration.resolvedHeadTimeout == .seconds(2))
    }

    @Test("an origin that always stalls before the head: each attempt times out, and the load fails after the last")
    func stallBeforeTheHeadEveryTime() async throws {
        try await withLoader({ $0.headTimeout = .milliseconds(300) }) { origin, loader in
            origin.register("/h.png", data: Self.png)
            let outcome = await Self.load(loader, origin.url("/flaky/h.png?fail=100&mode=stall"))
            guard case .timeout = outcome.error else {
                Issue.record("expected a timeout, got \(String(describing: outcome.error)) / \(String(describing: outcome.response))")
                return
            }
            #expect(outcome.retries.map(\.reason) == [.timeout, .timeout])
            #expect(origin.requestCount(path: "/flaky/h.png") == 3)
        }
    }

    @Test("a refused connection is retried, and fails as refused after the last attempt")
    func refusedConnection() async throws {
        try await withLoader({ $0.retryPolicy = RetryPolicy(baseDelay: .milliseconds(10)) }) { _, loader in
            let port = try await TestOrigin.closedPort()
            let outcome = await Self.load(loader, URL(string: "http://127.0.0.1:\(port)/a.png")!)
            #expect(outcome.error?.networkKind == .connectionRefused)
            #expect(outcome.retries.map(\.reason) == [.connectionRefused, .connectionRefused])
        }
    }

    @Test("RetryPolicy.never, the request's or the configuration's, tries once")
    func noneTriesOnce() async throws {
        try await withLoader { origin, loader in
            let perRequest = await Self.load(loader, origin.url("/flaky/g.png?fail=1"), policy: .never)
            #expect(perRequest.error == .httpStatus(503))
            #expect(origin.requestCount(path: "/flaky/g.png") == 1)
        }
        try await withLoader({ $0.retryPolicy = .never }) { origin, loader in
            let configured = await Self.load(loader, origin.url("/flaky/h.png?fail=1"))
            #expect(configured.error == .httpStatus(503))
            #expect(origin.requestCount(path: "/flaky/h.png") == 1)
            // The request's own policy wins over the configuration's.
            origin.register("/i.png", data: Self.png)
            let overridden = await Self.load(loader, origin.url("/flaky/i.png?fail=1"), policy: RetryPolicy())
            #expect(overridden.response?.data == Self.png)
            #expect(origin.requestCount(path: "/flaky/i.png") == 2)
        }
    }

    @Test("a load cancelled while it waits to retry stops at once: the origin sees no further request")
    func cancelledDuringTheBackoff() async throws {
        // A minute's wait (the jitter's draw is the whole range): only the cancellation ends it.
        let policy = RetryPolicy(baseDelay: .seconds(60), maximumDelay: .seconds(60))
        // The load's timeout is past the wait: no retry starts that could not begin before it.
        try await withLoader({ $0.retryPolicy = policy; $0.timeout = .seconds(600) }) { origin, loader in
            let (retried, continuation) = AsyncStream<RetryPolicy.Retry>.makeStream()
            let context = ImageLoadContext()
            context.onRetry { continuation.yield($0) }
            let started = ContinuousClock.now
            let task = Task {
                try await RetryPolicy.$jitter.withValue({ 1 }) {
                    try await loader.load(ImageLoadRequest(url: origin.url("/flaky/j.png?fail=5")), context: context)
                }
            }
            var heard: RetryPolicy.Retry?
            for await retry in retried {
                heard = retry
                break
            }
            #expect(heard?.delay == .seconds(60))
            task.cancel()
            await #expect(throws: ImageError.cancelled) { try await task.value }
            #expect(origin.requestCount(path: "/flaky/j.png") == 1)
            #expect(loader.runningDownloadCount == 0)
            #expect(ContinuousClock.now - started < .seconds(50))
        }
    }

    @Test("a download waiting to retry holds no slot: another download runs meanwhile")
    func theBackoffHoldsNoSlot() async throws {
        let policy = RetryPolicy(baseDelay: .seconds(60), maximumDelay: .seconds(60))
        try await withLoader({ $0.maximumConcurrentDownloads = 1; $0.retryPolicy = policy; $0.timeout = .seconds(600) }) { origin, loader in
            origin.register("/k.png", data: Self.png)
            let (retried, continuation) = AsyncStream<RetryPolicy.Retry>.makeStream()
            let context = ImageLoadContext()
            context.onRetry { continuation.yield($0) }
            let waiting = Task {
                try await RetryPolicy.$jitter.withValue({ 1 }) {
                    try await loader.load(ImageLoadRequest(url: origin.url("/flaky/l.png?fail=5")), context: context)
                }
            }
            for await _ in retried { break }
            // The one slot is free while the first download waits its minute.
            let other = try await loader.load(origin.url("/k.png"))
            #expect(other.data == Self.png)
            waiting.cancel()
            await #expect(throws: ImageError.cancelled) { try await waiting.value }
        }
    }
}
