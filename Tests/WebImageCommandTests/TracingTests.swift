import AsyncHTTPClient
import Foundation
import Glibc
import Testing
import WebImage
import WebImageTestSupport

/// OpenTelemetry from `webimage serve` and `webimage fetch` to a receiver of the real protocol
/// (Tests/Fixtures/otlp-receiver.py, over opentelemetry-proto): spans of the incoming trace for
/// the request and each stage, with their parent links; the origin sees the same trace; spans
/// are sent on a graceful shutdown; and without `OTEL_*` nothing is exported or propagated.
@Suite(
    .enabled(if: WebImageExecutable.url != nil),
    .enabled(if: Requirement.met(OTLPReceiver.isAvailable), "opentelemetry-proto is not installed (python3 -m pip install opentelemetry-proto)"),
    .timeLimit(.minutes(2 * Deadlines.stretch)))
struct TracingTests {
    /// A client's trace, as its `traceparent` says it: the trace, and the client's own span.
    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let clientSpanID = "00f067aa0ba902b7"
    static let traceparent = "00-\(traceID)-\(clientSpanID)-01"

    /// The exporter's settings: the receiver, a service name, and a batch delay longer than any
    /// test, so that spans arrive only with the flush of a graceful shutdown (or a command's end).
    static func environment(_ receiver: OTLPReceiver) -> [String: String] {
        [
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_SERVICE_NAME": "webimage-under-test",
            "OTEL_BSP_SCHEDULE_DELAY": "600000",
        ]
    }

    func get(_ url: String, headers: [(String, String)] = []) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.tests.execute(request, timeout: .seconds(60 * Int64(Deadlines.stretch)))
        _ = try await response.body.collect(upTo: 64 << 20)
        return Int(response.status.code)
    }

    /// One request through `webimage serve` with the client's `traceparent`: an origin on
    /// loopback serving the elephants at `/e.jpg` and `/media/e.jpg` (a bucket's path when it
    /// stands in for S3), the server over it with `arguments` and the environment `environment`
    /// gives for that origin, `/image?` plus `query` answered `200`, then a graceful stop;
    /// `check` gets the origin and the stopped server.
    func serveOneTracedRequest(
        arguments: [String] = ["--allow-loopback"], environment: (TestOrigin) -> [String: String], query: (TestOrigin) -> String,
        check: (TestOrigin, ServeProcess) async throws -> Void
    ) async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try await origin.shutdown() } }
        for path in ["/e.jpg", "/media/e.jpg"] { origin.register(path, data: try Fixture.elephants, contentType: "image/jpeg") }
        let cache = TemporaryDirectory("serve-traces")
        defer { cache.remove() }
        let server = try ServeProcess(
            try #require(WebImageExecutable.url), ["serve", "--port", "0", "--cache-dir", cache.path] + arguments, environment: environment(origin))
        defer { server.terminate() }
        let status = try await get("http://127.0.0.1:\(try await server.port())/image?" + query(origin), headers: [("traceparent", Self.traceparent)])
        #expect(status == 200)
        server.terminate()
        #expect(await server.waitForExit() == 0)
        try await check(origin, server)
    }

    /// `url=` of the origin's `/e.jpg`, `w=64`.
    static func originImage(_ origin: TestOrigin) -> String {
        "url=\(percentEncoded(origin.url("/e.jpg").absoluteString))&w=64"
    }

    @Test("serve continues an incoming traceparent: the request's span, each stage's, the origin's traceparent, the log's trace_id")
    func serveContinuesTheTrace() async throws {
        let receiver = try await OTLPReceiver.start()
        defer { receiver.stop() }
        try await serveOneTracedRequest(environment: { _ in Self.environment(receiver) }, query: { Self.originImage($0) + "&format=webp" }) { origin, server in
            let spans = try await receiver.spans()
            try checkTheTrace(spans, origin: origin, server: server)
        }
    }

    /// What `serveContinuesTheTrace` checks, once the server stopped.
    func checkTheTrace(_ received: [OTLPReceiver.Span], origin: TestOrigin, server: ServeProcess) throws {
        let spans = received.filter { $0.traceID == Self.traceID }
        let trace = Trace(spans)
        let request = try #require(trace.named("GET /image").first, "spans: \(spans)")
        #expect(request.parentSpanID == Self.clientSpanID)
        #expect(request.kind == "SPAN_KIND_SERVER")
        #expect(request.service == "webimage-under-test")
        #expect(request.attributes["http.response.status_code"] == "200")
        for stage in ["webimage.memory_lookup", "webimage.disk_read", "webimage.image", "webimage.load", "webimage.decode", "webimage.process", "webimage.encode", "webimage.store"] {
            let found = trace.named(stage)
            #expect(!found.isEmpty, "no \(stage) span in \(spans)")
            for span in found { #expect(trace.descends(span, from: request), "\(stage) is not under the request: \(spans)") }
        }
        let image = try #require(trace.named("webimage.image").first)
        for stage in ["webimage.load", "webimage.decode", "webimage.process"] {
            #expect(trace.named(stage).allSatisfy { trace.descends($0, from: image) }, "\(stage) is not under webimage.image")
        }
        // The origin's request carries the trace, its parent the loader's client span.
        let fetch = try #require(trace.named("GET").first { $0.kind == "SPAN_KIND_CLIENT" }, "\(trace.named("GET"))")
        #expect(trace.descends(fetch, from: try #require(trace.named("webimage.load").first)))
        let sent = origin.requests(path: "/e.jpg").first?.header("traceparent")
        #expect(sent == "00-\(Self.traceID)-\(fetch.spanID)-01")
        // The access log's line was written in the request's span.
        let logged = server.stderr.first { $0.contains(#""msg":"request""#) }
        #expect(logged?.contains(#""trace_id":"\#(Self.traceID)""#) == true, "\(String(describing: logged))")
        #expect(logged?.contains(#""span_id":"\#(request.spanID)""#) == true, "\(String(describing: logged))")
    }

    /// The loopback origin stands in for S3 here: SeaweedFS and rclone check signatures, but
    /// neither shows a test the headers it received, and the trace fields are what is checked.
    @Test("serve sends the trace to S3: the s3:// source's GET and the result store's requests carry the request's traceparent")
    func serveSendsTheTraceToS3() async throws {
        let receiver = try await OTLPReceiver.start()
        defer { receiver.stop() }
        let arguments = ["--allow-bucket", "media", "--result-store", "s3://results"]
        let environment = { (s3: TestOrigin) in
            Self.environment(receiver).merging([
                "AWS_ENDPOINT_URL": s3.baseURL.absoluteString, "AWS_REGION": "us-east-1",
                "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test-secret",
            ]) { $1 }
        }
        try await serveOneTracedRequest(arguments: arguments, environment: environment, query: { _ in "url=s3%3A%2F%2Fmedia%2Fe.jpg&w=64" }) { s3, _ in
            try await checkTheTraceReachedS3(s3, receiver: receiver)
        }
    }

    /// What `serveSendsTheTraceToS3` checks, once the server stopped.
    func checkTheTraceReachedS3(_ s3: TestOrigin, receiver: OTLPReceiver) async throws {
        let source = try #require(s3.requests(path: "/media/e.jpg").first?.header("traceparent"))
        #expect(source.hasPrefix("00-\(Self.traceID)-"))
        let store = s3.allRequests.filter { $0.path.hasPrefix("/results/") }
        #expect(store.contains { $0.method == "GET" } && store.contains { $0.method == "PUT" }, "\(store.map { "\($0.method) \($0.path)" })")
        for request in store {
            #expect(request.header("traceparent")?.hasPrefix("00-\(Self.traceID)-") == true, "\(request.method) \(request.path)")
        }
        let spans = try await receiver.spans().filter { $0.traceID == Self.traceID }
        #expect(spans.contains { $0.name == "S3 GET" && $0.kind == "SPAN_KIND_CLIENT" && $0.attributes["aws.s3.bucket"] == #""media""# })
    }

    /// `webimage fetch` of an origin's `/e.jpg` with `environment`, which must succeed; `check`
    /// gets the origin once the command has ended.
    func fetchOnce(environment: [String: String], check: (TestOrigin) async throws -> Void) async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try await origin.shutdown() } }
        origin.register("/e.jpg", data: try Fixture.elephants, contentType: "image/jpeg")
        let cache = TemporaryDirectory("fetch-traces")
        defer { cache.remove() }
        let fetch = try ChildProcess(try #require(WebImageExecutable.url), [
            "fetch", "--cache-dir", cache.path, origin.url("/e.jpg").absoluteString,
        ], environment: environment)
        #expect(await fetch.waitForExit() == 0, "\(fetch.stderr)")
        try await check(origin)
    }

    @Test("fetch, a library user, sends the traceparent of its own trace to the origin and exports the load's spans when it ends")
    func fetchPropagatesItsTrace() async throws {
        let receiver = try await OTLPReceiver.start()
        defer { receiver.stop() }
        try await fetchOnce(environment: Self.environment(receiver)) { origin in
            let sent = try #require(origin.requests(path: "/e.jpg").first?.header("traceparent"))
            let parts = sent.split(separator: "-").map(String.init)
            try #require(parts.count == 4)
            let spans = try await receiver.spans().filter { $0.traceID == parts[1] }
            let trace = Trace(spans)
            let image = try #require(trace.named("webimage.image").first, "spans: \(spans)")
            #expect(image.parentSpanID.isEmpty, "a command's load is a trace of its own")
            #expect(image.service == "webimage-under-test")
            let client = try #require(spans.first { $0.spanID == parts[2] })
            #expect(client.name == "GET" && client.kind == "SPAN_KIND_CLIENT")
            #expect(trace.descends(client, from: image))
            #expect(!trace.named("webimage.decode").isEmpty)
        }
    }

    /// Whether an unsampled root still sends a `traceparent` (flag `00`) is swift-otel's choice:
    /// 1.6 sends none, so only the export is checked.
    @Test("OTEL_TRACES_SAMPLER is the environment's: with always_off the load succeeds and nothing is exported")
    func samplerIsTheEnvironments() async throws {
        let receiver = try await OTLPReceiver.start()
        defer { receiver.stop() }
        var environment = Self.environment(receiver)
        environment["OTEL_TRACES_SAMPLER"] = "always_off"
        try await fetchOnce(environment: environment) { origin in
            #expect(origin.requestCount(path: "/e.jpg") == 1)
        }
        #expect(try await receiver.spans().isEmpty)
    }

    @Test("without OTEL_* configuration: nothing exported (a receiver on the standard port hears nothing), no traceparent sent, no trace_id logged")
    func nothingWithoutConfiguration() async throws {
        // 4318 is where an exporter on its defaults would send: a receiver there would hear it.
        let receiver = try await OTLPReceiver.start(port: 4318)
        defer { receiver.stop() }
        try await serveOneTracedRequest(environment: { _ in [:] }, query: Self.originImage) { origin, server in
            #expect(origin.requests(path: "/e.jpg").first?.header("traceparent") == nil)
            #expect(!server.stderr.contains { $0.contains("trace_id") })
        }
        #expect(try await receiver.spans().isEmpty)
        #expect(receiver.otherLines.isEmpty)
    }

    @Test(
        "serve exports over OTLP/gRPC when OTEL_EXPORTER_OTLP_PROTOCOL=grpc: the same spans, the same trace",
        .enabled(if: Requirement.met(OTLPReceiver.servesGRPC), "grpcio is not installed (python3 -m pip install grpcio)"))
    func serveExportsOverGRPC() async throws {
        let receiver = try await OTLPReceiver.start(grpc: true)
        defer { receiver.stop() }
        var environment = Self.environment(receiver)
        let endpoint = try #require(receiver.grpcEndpoint)
        environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        environment["OTEL_EXPORTER_OTLP_PROTOCOL"] = "grpc"
        try await serveOneTracedRequest(environment: { [environment] _ in environment }, query: Self.originImage) { _, _ in }

        let trace = Trace(try await receiver.spans().filter { $0.traceID == Self.traceID })
        let request = try #require(trace.named("GET /image").first, "spans: \(trace.spans)")
        #expect(request.parentSpanID == Self.clientSpanID)
        for stage in ["webimage.image", "webimage.load", "webimage.decode", "webimage.encode"] {
            #expect(trace.named(stage).contains { trace.descends($0, from: request) }, "no \(stage) under the request: \(trace.spans)")
        }
    }

    @Test("an OTLP protocol swift-otel does not speak is refused with a message, not a crash")
    func unknownProtocolIsRefused() async throws {
        let fetch = try ChildProcess(try #require(WebImageExecutable.url), ["fetch", "http://127.0.0.1:9/none.jpg"], environment: [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/thrift",
        ])
        let status = await fetch.waitForExit()
        #expect(status != 0)
        #expect(fetch.stderr.joined(separator: "\n").contains("http/protobuf"), "\(fetch.stderr)")
    }
}

/// The spans of one trace, by id, to follow parent links.
struct Trace {
    let byID: [String: OTLPReceiver.Span]
    let spans: [OTLPReceiver.Span]

    init(_ spans: [OTLPReceiver.Span]) {
        self.spans = spans
        byID = Dictionary(spans.map { ($0.spanID, $0) }) { first, _ in first }
    }

    func named(_ name: String) -> [OTLPReceiver.Span] { spans.filter { $0.name == name } }

    /// Whether `ancestor` is on `span`'s chain of parents.
    func descends(_ span: OTLPReceiver.Span, from ancestor: OTLPReceiver.Span) -> Bool {
        var current = span
        for _ in 0..<spans.count {
            guard current.parentSpanID != ancestor.spanID else { return true }
            guard let parent = byID[current.parentSpanID] else { return false }
            current = parent
        }
        return false
    }
}
