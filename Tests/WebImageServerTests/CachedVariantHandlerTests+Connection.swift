import Foundation
import NIOCore
import NIOEmbedded
import Testing
import WebImage
@_spi(Testing) @testable import WebImageServer
import WebImageTestSupport

/// The connection's side of answers made ahead of the HTTP codec: requests split across reads,
/// requests handed on between hits, bytes the scan does not delimit, `Vary`, and the
/// timeouts.
extension CachedVariantHandlerTests {
    /// A request with a body, sent with a hit behind it, is the router's, and so is the hit
    /// (answers keep request order); the next hit, once the router has answered, is answered
    /// ahead again: the body was delimited, not taken for a request.
    @Test func aRequestWithABodyIsHandedOnWholeAndHitsResumeAfterIt() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let made = try await harness.get("/e.jpg", "w=44")
        let hit = "GET " + harness.imagePath("/e.jpg", "w=44") + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

        try await RawHTTPConnection.with(port: harness.port) { connection in
            // The body looks like a request: were it taken for one, a third answer would come.
            let body = "GET /healthz HTTP/1.1\r\n\r\n"
            try await connection.sendRaw("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body + hit)
            let first = try await connection.response()
            let second = try await connection.response()
            #expect(first.header("Content-Type") != "image/jpeg")
            #expect(second.status == 200 && second.body == Array(made.body))
            #expect(try await harness.eventLoopAnswers() == 0)

            try await connection.sendRaw(hit)
            let third = try await connection.response()
            #expect(third.status == 200 && third.header("X-Cache") == "memory")
            #expect(try await harness.eventLoopAnswers() == 1)
        }
    }

    /// A chunked body cannot be delimited ahead of the codec: the connection's later requests
    /// are all the router's, and are answered right.
    @Test func aChunkedRequestHandsTheConnectionToTheCodec() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        _ = try await harness.get("/e.jpg", "w=45")
        let hit = "GET " + harness.imagePath("/e.jpg", "w=45") + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

        try await RawHTTPConnection.with(port: harness.port) { connection in
            try await connection.sendRaw("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
            _ = try await connection.response()
            for _ in 0..<2 {
                try await connection.sendRaw(hit)
                let answer = try await connection.response()
                #expect(answer.status == 200 && answer.header("X-Cache") == "memory")
            }
        }
        #expect(try await harness.eventLoopAnswers() == 0)
    }

    /// `format=auto`: each `Accept` gets its own variant, with `Vary: Accept`, ahead of the
    /// codec as from the router.
    @Test func hitsVaryOnAccept() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let target = harness.imagePath("/e.jpg", "w=46&format=auto")
        let webp = [("Accept", "image/webp,*/*")]
        _ = try await harness.request(target, headers: webp)
        _ = try await harness.request(target)

        let asWebP = try await harness.request(target, headers: webp)
        let asJPEG = try await harness.request(target)
        #expect(try await harness.eventLoopAnswers() == 2)
        #expect(asWebP.header("Content-Type") == "image/webp" && asJPEG.header("Content-Type") == "image/jpeg")
        #expect(asWebP.header("Vary") == "Accept" && asJPEG.header("Vary") == "Accept")
        #expect(asWebP.header("X-Cache") == "memory" && asJPEG.header("X-Cache") == "memory")
    }

    /// HTTP/1.0 with keep-alive, answered ahead: an HTTP/1.0 status line, `Connection:
    /// keep-alive`, the connection kept; a `HEAD` and a `304` on it, without bodies.
    @Test func http10KeepAliveHeadAndConditionalHits() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let made = try await harness.get("/e.jpg", "w=47")
        let etag = try #require(made.header("ETag"))
        let target = harness.imagePath("/e.jpg", "w=47")

        try await RawHTTPConnection.with(port: harness.port) { connection in
            try await connection.send(["GET \(target) HTTP/1.0\r\nConnection: keep-alive"])
            let got = try await connection.response()
            #expect(got.version == "HTTP/1.0" && got.status == 200 && got.body == Array(made.body))
            #expect(got.header("Connection") == "keep-alive")
            try await connection.send(["HEAD \(target) HTTP/1.0\r\nConnection: keep-alive"])
            let head = try await connection.response(bodyless: true)
            #expect(head.status == 200 && head.header("Content-Length") == String(made.body.count))
            try await connection.send(["GET \(target) HTTP/1.0\r\nConnection: keep-alive\r\nIf-None-Match: \(etag)"])
            let revalidated = try await connection.response()
            #expect(revalidated.status == 304 && revalidated.header("ETag") == etag && revalidated.header("Content-Length") == nil)
            try await connection.send(["GET /healthz HTTP/1.1"])
            #expect(try await connection.response().status == 200, "the connection is still open")
        }
        #expect(try await harness.eventLoopAnswers() == 3)
    }

    /// A head that arrives a few bytes at a time is answered once it is whole, and not before;
    /// answers ahead of the codec move the idle deadline as the router's do, and a head left
    /// unfinished is closed at the header timeout. On an embedded channel, whose clock moves
    /// only when the test moves it.
    @Test func answersAheadKeepTheTimeouts() async throws {
        let harness = try await ProxyHarness.start { $0.originDirectory = Fixture.demoImages }
        defer { Task { await harness.stop() } }
        let target = "/image?url=local%3A%2F%2F%2Felephants-1920x1080-progressive.jpg&w=21"
        #expect(try await harness.request(target).status == 200)

        let loop = EmbeddedEventLoop()
        var limits = ConnectionLimits()
        limits.headerTimeout = .seconds(2)
        limits.idleTimeout = .seconds(10)
        let timeouts = ConnectionTimeoutHandler(limits: limits)
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandler(CachedVariantHandler(server: ProxyServer(proxy: harness.proxy), timeouts: timeouts))
        try channel.pipeline.syncOperations.addHandler(timeouts)
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).get()

        let request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        /// Sends `request` in reads of `pieces` bytes; the answer's status line, if one came.
        func exchange(pieces: Int) throws -> String? {
            var rest = Substring(request)
            while !rest.isEmpty {
                #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "answered before the head was whole")
                try channel.writeInbound(ByteBuffer(string: String(rest.prefix(pieces))))
                rest = rest.dropFirst(pieces)
            }
            guard let written = try channel.readOutbound(as: ByteBuffer.self) else { return nil }
            _ = try channel.readOutbound(as: ByteBuffer.self)   // the body
            return String(buffer: written).components(separatedBy: "\r\n").first
        }
        #expect(try exchange(pieces: 1) == "HTTP/1.1 200 OK")   // idle until 10 s
        loop.advanceTime(by: .seconds(6))
        #expect(try exchange(pieces: 1000) == "HTTP/1.1 200 OK")   // idle until 16 s
        loop.advanceTime(by: .seconds(6))
        #expect(channel.isActive, "open at 12 s: the idle deadline moved with the answer ahead")
        // Half a head: the header timeout (2 s) runs from here, not the idle one (until 16 s).
        try channel.writeInbound(ByteBuffer(string: String(request.prefix(20))))
        loop.advanceTime(by: .seconds(1))
        #expect(channel.isActive, "open at 13 s")
        loop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive, "closed at 15 s, 3 s into an unfinished head")
        _ = try? channel.finish()
    }
}
