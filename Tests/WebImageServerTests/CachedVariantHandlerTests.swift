import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Synchronization
import Testing
import WebImage
@_spi(Testing) @testable import WebImageServer
import WebImageTestSupport

/// Cached variants answered on the event loop, before Hummingbird's router: the same answers
/// as the router's, in request order, with the router's checks, log and metrics.
@Suite struct CachedVariantHandlerTests {
    /// Headers that differ between two answers for reasons other than who answered.
    static let varying: Set<String> = ["date", "x-cache"]

    @Test func aHitIsAnsweredOnTheEventLoopAsTheRouterWouldAnswerIt() async throws {
        let fast = try await ProxyHarness.start()
        let origin = fast.origin
        let routed = try await ProxyHarness.start(origin: origin, answersCachedVariantsOnEventLoop: false)
        defer { Task { await routed.stop(keepOrigin: true); await fast.stop() } }
        origin.register("/e.jpg", data: try Fixture.elephants)

        for harness in [fast, routed] {
            #expect(try await harness.get("/e.jpg", "w=100").header("X-Cache") == "miss")
        }
        let viaHandler = try await fast.get("/e.jpg", "w=100")
        let viaRouter = try await routed.get("/e.jpg", "w=100")
        #expect(try await fast.eventLoopAnswers() == 1)
        #expect(try await routed.eventLoopAnswers() == 0)

        #expect(viaHandler.status == 200 && viaRouter.status == 200)
        #expect(viaHandler.header("X-Cache") == "memory" && viaRouter.header("X-Cache") == "memory")
        #expect(viaHandler.body == viaRouter.body)
        #expect(viaHandler.header("Date") != nil && viaHandler.header("Server") == "swift-web-image")
        let names = { (reply: Reply) in Set(reply.headers.map { $0.name.lowercased() }).subtracting(Self.varying) }
        #expect(names(viaHandler) == names(viaRouter))
        for name in names(viaRouter) {
            #expect(viaHandler.headers[name] == viaRouter.headers[name], "\(name)")
        }
    }

    /// A thumbor URL whose variant is in memory is answered on the event loop too, with the
    /// router's headers (its `max_age()` included); a `meta/` URL is not (imgproxy's URLs:
    /// `CachedVariantHandlerTests+Imgproxy.swift`).
    @Test func thumborHitsAreAnsweredOnTheEventLoopAsTheRouterWould() async throws {
        let unsafe = { (configuration: inout ImageProxy.Configuration) in configuration.thumbor.allowsUnsafe = true }
        let fast = try await ProxyHarness.start(configure: unsafe)
        let origin = fast.origin
        let routed = try await ProxyHarness.start(origin: origin, answersCachedVariantsOnEventLoop: false, configure: unsafe)
        defer { Task { await routed.stop(keepOrigin: true); await fast.stop() } }
        origin.register("/e.jpg", data: try Fixture.elephants)
        let path = "/thumbor/unsafe/100x100/filters:max_age(60)/" + ProxyHarness.encoded(origin.url("/e.jpg").absoluteString)

        for harness in [fast, routed] { #expect(try await harness.request(path).header("X-Cache") == "miss") }
        let viaHandler = try await fast.request(path)
        let viaRouter = try await routed.request(path)
        #expect(try await fast.eventLoopAnswers() == 1)
        #expect(try await routed.eventLoopAnswers() == 0)
        #expect(viaHandler.status == 200 && viaHandler.body == viaRouter.body)
        #expect(viaHandler.header("Cache-Control") == "public, max-age=60")
        let names = { (reply: Reply) in Set(reply.headers.map { $0.name.lowercased() }).subtracting(Self.varying) }
        #expect(names(viaHandler) == names(viaRouter))
        for name in names(viaRouter) {
            #expect(viaHandler.headers[name] == viaRouter.headers[name], "\(name)")
        }
        // HEAD too, with the length of the GET's body.
        let headViaHandler = try await fast.request(path, method: .HEAD)
        Self.expectSameHeaders(headViaHandler, try await routed.request(path, method: .HEAD), "HEAD")
        #expect(headViaHandler.header("Content-Length") == String(viaRouter.body.count))
        // meta/ is JSON made each time: the router's.
        _ = try await fast.request("/thumbor/unsafe/meta/100x100/" + ProxyHarness.encoded(origin.url("/e.jpg").absoluteString))
        #expect(try await fast.eventLoopAnswers() == 2)
    }

    @Test func headAndConditionalHits() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let made = try await harness.get("/e.jpg", "w=100")
        let etag = try #require(made.header("ETag"))

        let head = try await harness.request(harness.imagePath("/e.jpg", "w=100"), method: .HEAD)
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.header("Content-Length") == String(made.body.count))
        #expect(head.header("Content-Type") == "image/jpeg")
        let revalidated = try await harness.get("/e.jpg", "w=100", headers: [("If-None-Match", etag)])
        #expect(revalidated.status == 304 && revalidated.body.isEmpty)
        #expect(revalidated.header("ETag") == etag)
        #expect(try await harness.eventLoopAnswers() == 2)
    }

    /// HTTP/1.1 answers in request order: requests that arrive while an earlier one is with the
    /// router go to the router too. The origin's gate holds the first request until the later
    /// ones have arrived; nothing sleeps.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/a.jpg", data: try Fixture.elephants)
        harness.origin.register("/b.jpg", data: try Fixture.elephants)
        let hit = "GET " + harness.imagePath("/b.jpg", "w=40") + " HTTP/1.1"
        #expect(try await harness.get("/b.jpg", "w=40").status == 200)
        let gate = harness.origin.gate("/a.jpg")

        try await RawHTTPConnection.with(port: harness.port) { connection in
            try await connection.send(["GET " + harness.imagePath("/a.jpg", "w=30") + " HTTP/1.1"])
            #expect(await harness.origin.waitForRequests(path: "/a.jpg", count: 1))
            try await connection.send([hit, hit])
            gate.open()
            let answers = [try await connection.response(), try await connection.response(), try await connection.response()]
            #expect(answers.map(\.status) == [200, 200, 200])
            #expect(answers.map { $0.header("X-Cache") } == ["miss", "memory", "memory"])
            #expect(try CoderRegistry.system().decode(Data(answers[0].body)).image.width == 30)
            #expect(try CoderRegistry.system().decode(Data(answers[1].body)).image.width == 40)
            #expect(try await harness.eventLoopAnswers() == 0)

            // Nothing is with the router any more: the next hit is answered on the event loop,
            // and so are hits sent together.
            try await connection.send([hit, hit, hit])
            for _ in 0..<3 {
                let answer = try await connection.response()
                #expect(answer.status == 200 && answer.header("X-Cache") == "memory")
                #expect(answer.body == answers[1].body)
            }
            #expect(try await harness.eventLoopAnswers() == 3)
        }
    }

    /// A request that asks to close the connection is answered, then the connection is closed.
    @Test func connectionCloseIsAnsweredThenClosed() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        #expect(try await harness.get("/e.jpg", "w=50").status == 200)

        try await RawHTTPConnection.with(port: harness.port) { connection in
            try await connection.send(["GET " + harness.imagePath("/e.jpg", "w=50") + " HTTP/1.1\r\nConnection: close"])
            let answer = try await connection.response()
            #expect(answer.status == 200 && answer.header("X-Cache") == "memory")
            #expect(answer.header("Connection") == "close")
            #expect(try await connection.isClosedByServer())
        }
        #expect(try await harness.eventLoopAnswers() == 1)
    }

    /// The signature is checked on the event loop too: a cached variant is refused to a request
    /// with a wrong signature (by the router, which answers every refusal).
    @Test func signaturesAreCheckedForHits() async throws {
        let signer = URLSigner(key: "secret")
        let harness = try await ProxyHarness.start { $0.signingKey = "secret" }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let signed = signer.sign(harness.imagePath("/e.jpg", "w=60"))
        #expect(try await harness.request(signed).header("X-Cache") == "miss")
        #expect(try await harness.request(signed).header("X-Cache") == "memory")
        #expect(try await harness.eventLoopAnswers() == 1)

        let forged = String(signed.dropLast(4)) + "0000"
        let refused = try await harness.request(forged)
        #expect(refused.status == 403 && refused.text == "missing or invalid signature\n")
        #expect(try await harness.request(harness.imagePath("/e.jpg", "w=60")).status == 403)
        #expect(try await harness.eventLoopAnswers() == 1)
    }

    @Test func hitsAreLoggedAndCounted() async throws {
        let lines = RecordedLines()
        let harness = try await ProxyHarness.start {
            var logger = Logger(label: "test.access") { _ in RecordingLogHandler(lines: lines) }
            logger.logLevel = .info
            $0.accessLogger = logger
        }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        _ = try await harness.get("/e.jpg", "w=70")
        let hit = try await harness.get("/e.jpg", "w=70")

        let logged = lines.all.filter { $0["path"] == "/image" }
        #expect(logged.count == 2)
        #expect(logged.last?["cache"] == "memory")
        #expect(logged.last?["status"] == "200")
        #expect(logged.last?["bytes"] == String(hit.body.count))
        #expect(logged.last?["source"]?.hasSuffix("/e.jpg") == true)
        let metrics = try await harness.request("/metrics").text
        #expect(metrics.contains(#"webimage_proxy_requests_total{route="/image",status="200"} 2"#))
        #expect(metrics.contains(#"webimage_proxy_variants_total{source="memory"} 1"#))
        #expect(metrics.contains("webimage_proxy_event_loop_answers_total 1"))
    }

    /// A graceful shutdown closes idle connections at once (Hummingbird's state handler, after
    /// this one): its notice must wait until an answer written here has been sent. Over a real
    /// socket the moment of the notice cannot be chosen, so this drives the handler in NIO's
    /// `EmbeddedChannel`, with a socket that sends only when the test lets it (`HeldWrites`).
    @Test func shutdownWaitsForAnswersToBeSent() async throws {
        let harness = try await ProxyHarness.start { $0.originDirectory = Fixture.demoImages }
        defer { Task { await harness.stop() } }
        let target = "/image?url=local%3A%2F%2F%2Felephants-1920x1080-progressive.jpg&w=20"
        #expect(try await harness.request(target).status == 200)

        let notices = QuiesceRecorder()
        let socket = HeldWrites()
        let channel = EmbeddedChannel()
        let server = ProxyServer(proxy: harness.proxy)
        let timeouts = ConnectionTimeoutHandler(limits: server.connectionLimits)
        try channel.pipeline.syncOperations.addHandlers([socket, CachedVariantHandler(server: server, timeouts: timeouts), notices])

        // Everything below runs on the embedded loop's thread: no suspension point from here on.
        let pipeline = channel.pipeline.syncOperations
        let request = ByteBuffer(string: "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        pipeline.fireChannelRead(NIOAny(request))
        pipeline.fireChannelReadComplete()
        pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(notices.count == 0, "held while the answer is unsent")
        socket.send()
        #expect(notices.count == 1)

        let written = try #require(try channel.readOutbound(as: ByteBuffer.self), "no response head")
        let head = String(buffer: written)
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n") && head.contains("\r\nX-Cache: memory\r\n"))

        // After the notice, the router answers everything: the bytes are handed on.
        try channel.writeInbound(request)
        #expect(try channel.readInbound(as: ByteBuffer.self) == request)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }
}

/// A socket that sends nothing until ``send()``: the writes (and their promises) wait here.
private final class HeldWrites: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var held: [(NIOAny, EventLoopPromise<Void>?)] = []
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        held.append((data, promise))
    }

    func flush(context: ChannelHandlerContext) {}

    /// Writes and flushes what was held: the embedded channel's writes complete then.
    func send() {
        guard let context else { return }
        for (data, promise) in held { context.write(data, promise: promise) }
        held.removeAll()
        context.flush()
    }
}

/// What the handler after ``CachedVariantHandler`` sees of shutdown notices.
private final class QuiesceRecorder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private(set) var count = 0

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent { count += 1 }
        context.fireUserInboundEventTriggered(event)
    }
}

/// Log lines as metadata dictionaries, the message under `message`.
final class RecordedLines: Sendable {
    private let lines = Mutex<[[String: String]]>([])

    func append(_ line: [String: String]) { lines.withLock { $0.append(line) } }
    var all: [[String: String]] { lines.withLock { $0 } }
}

struct RecordingLogHandler: LogHandler {
    let lines: RecordedLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = ["message": event.message.description]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            line[key] = value.description
        }
        lines.append(line)
    }
}
