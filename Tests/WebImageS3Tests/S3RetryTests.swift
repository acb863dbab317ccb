import Foundation
import Testing
import WebImage
@testable import WebImageS3
import WebImageTestSupport

/// The S3 client's retries, which are the library's one ``RetryPolicy``.
///
/// SeaweedFS and rclone's `serve s3` never answer `SlowDown` (nor a `503`, nor a reset) on
/// demand: they have no fault injection, and loading them until they throttle would take the
/// machine. The repository's loopback origin stands in for S3 here: its `/flaky/` endpoint
/// answers S3's own error document (`<Error><Code>SlowDown</Code>…`) as many times as asked,
/// then the object, and counts the requests; the client sends it path-style requests whose
/// bucket is `flaky` and whose query carries the endpoint's parameters. Signatures go unchecked,
/// which the tests against the real servers cover.
@Suite("S3 retries", .timeLimit(.minutes(2 * Deadlines.stretch)))
struct S3RetryTests {
    /// A client of `origin`, with short waits between attempts.
    static func client(of origin: TestOrigin, policy: RetryPolicy = RetryPolicy(baseDelay: .milliseconds(10))) -> S3Client {
        var configuration = S3Configuration(
            endpoint: origin.url("/"), region: "us-east-1", credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"))
        configuration.timeout = .seconds(60 * Deadlines.stretch)
        configuration.retryPolicy = policy
        return S3Client(configuration: configuration)
    }

    @Test("SlowDown twice, then the object: the third attempt gets it, and each retry is reported as slow_down")
    func slowDownIsRetried() async throws {
        let origin = try await TestOrigin.start()
        let png = try S3Fixture.data("hopper.png")
        origin.register("/hopper.png", data: png, contentType: "image/png")
        let client = Self.client(of: origin)
        let retries = Recorder<RetryPolicy.Retry>()
        let response = try await client.send(S3Client.Request(
            method: .GET, bucket: "flaky", key: "hopper.png", query: [("fail", "2"), ("code", "SlowDown")],
            onRetry: { retries.append($0) }))
        #expect(response.body == png)
        #expect(origin.requestCount(path: "/flaky/hopper.png") == 3)
        #expect(retries.all.map(\.reason) == [.slowDown, .slowDown])
        #expect(retries.all.map(\.attempt) == [1, 2])
        try await client.shutdown()
        try await origin.shutdown()
    }

    @Test("a SlowDown's Retry-After is the wait, and the next attempt comes no earlier")
    func slowDownRetryAfter() async throws {
        let origin = try await TestOrigin.start()
        origin.register("/a.png", data: try S3Fixture.data("hopper.png"))
        let client = Self.client(of: origin)
        let retries = Recorder<RetryPolicy.Retry>()
        _ = try await client.send(S3Client.Request(
            method: .GET, bucket: "flaky", key: "a.png", query: [("fail", "1"), ("code", "SlowDown"), ("retryAfter", "1")],
            onRetry: { retries.append($0) }))
        #expect(retries.all.map(\.delay) == [.seconds(1)])
        let arrivals = origin.requests(path: "/flaky/a.png").map(\.arrivalNanoseconds)
        try #require(arrivals.count == 2)
        #expect(arrivals[1] - arrivals[0] >= 1_000_000_000)
        try await client.shutdown()
        try await origin.shutdown()
    }

    @Test("a body that stalled is sent again when only the client had its bytes, never once a progress handler had some")
    func bodyStartedIsFinalOnlyWhenDelivered() async throws {
        let origin = try await TestOrigin.start()
        // Long enough for the head and the first 100 bytes to arrive on a loaded machine; each
        // attempt then waits it out.
        var configuration = S3Configuration(
            endpoint: origin.url("/"), region: "us-east-1", credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"))
        configuration.timeout = .seconds(2 * Deadlines.stretch)
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 2, baseDelay: .milliseconds(10))
        let client = S3Client(configuration: configuration)
        // The head announcing 5000 bytes, 100 of them, then nothing.
        let buffered = await s3Failure {
            try await client.send(S3Client.Request(method: .GET, bucket: "stall", key: "x", query: [("bytes", "5000")]))
        }
        #expect(buffered?.kind == .timeout)
        #expect(buffered?.attempts == 2)
        #expect(origin.requestCount(path: "/stall/x") == 2)

        let progress = await s3Failure {
            try await client.send(S3Client.Request(
                method: .GET, bucket: "stall", key: "y", query: [("bytes", "5000")], onBody: { _, _, _ in }))
        }
        #expect(progress?.kind == .timeout)
        #expect(progress?.attempts == 1)
        #expect(progress?.isRetryable == false)
        #expect(origin.requestCount(path: "/stall/y") == 1)
        try await client.shutdown()
        try await origin.shutdown()
    }

    @Test("the image loader follows the request's policy and reports the retries to its context")
    func loaderRetries() async throws {
        let origin = try await TestOrigin.start()
        let client = Self.client(of: origin)
        let loader = S3ImageLoader(client: client)
        // `/status/503` answers a bodiless 503, which S3 means as SlowDown.
        let retries = Recorder<RetryPolicy.Retry>()
        let context = ImageLoadContext()
        context.onRetry { retries.append($0) }
        await #expect(throws: ImageError.httpStatus(503)) {
            _ = try await loader.load(ImageLoadRequest(url: URL(string: "s3://status/503")!), context: context)
        }
        #expect(origin.requestCount(path: "/status/503") == 3)
        #expect(retries.all.map(\.reason) == [.slowDown, .slowDown])

        var once = ImageLoadRequest(url: URL(string: "s3://status/502")!)
        once.retryPolicy = .never
        await #expect(throws: ImageError.httpStatus(502)) { _ = try await loader.load(once, context: ImageLoadContext()) }
        #expect(origin.requestCount(path: "/status/502") == 1)
        try await client.shutdown()
        try await origin.shutdown()
    }
}
