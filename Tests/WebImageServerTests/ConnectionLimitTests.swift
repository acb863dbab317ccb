import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// Idle and slow clients are closed by the server, and connections beyond the cap are refused,
/// while the proxy keeps answering everyone else.
///
/// Each test keeps the timeout it does not exercise far above the suite's time limit: a test
/// passes only if the timeout it is about closed the connection. The timeouts it exercises
/// leave seconds between a connect and its write, stretched by `Deadlines.stretch` (as
/// `ServeCommandTests.connectionFlags` does): in the parallel suite a test's task can wait
/// that long for a thread of the two-wide cooperative pool, and a connection closed before the
/// test's next write fails a test about keeping it open.
@Suite(.timeLimit(.minutes(1 * Deadlines.stretch))) struct ConnectionLimitTests {
    static func limits(
        header: Duration = .seconds(600), idle: Duration = .seconds(600), maximum: Int = 4_096,
        perClient: Int = 4_096, reserved: Int = 0, trusted: [String] = []
    ) -> ConnectionLimits {
        var limits = ConnectionLimits()
        limits.headerTimeout = header
        limits.idleTimeout = idle
        limits.maximumConnections = maximum
        limits.maximumConnectionsPerClient = perClient
        limits.reservedConnections = reserved
        limits.trustedProxies = trusted
        return limits
    }

    @Test func anIdleKeptAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        let harness = try await ProxyHarness.start(connections: Self.limits(idle: .seconds(10 * Deadlines.stretch)))
        defer { Task { await harness.stop() } }
        try await RawHTTPConnection.with(port: harness.port) { connection in
            // Open between requests…
            for _ in 0..<2 {
                try await connection.send(["GET /healthz HTTP/1.1"])
                #expect(try await connection.response().status == 200)
            }
            // …and closed by the server once idle.
            #expect(try await connection.isClosedByServer())
        }
    }

    /// The idle deadline moves with each request: a connection asked again before its idle
    /// timeout stays open past its first request's idle deadline (the timer set for it fires,
    /// finds a later deadline, and waits for that), and is closed once it is idle for the whole
    /// timeout. On an embedded channel, whose clock moves only when the test moves it.
    @Test func eachRequestMovesTheIdleDeadline() throws {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(handler: ConnectionTimeoutHandler(limits: Self.limits(idle: .seconds(10))), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
        func exchange() throws {
            try channel.writeInbound(HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/healthz")))
            // Each writeInbound is a read of its own, with its read-complete: a request whose
            // head and end come in two reads.
            try channel.writeInbound(HTTPServerRequestPart.end(nil))
            try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
            try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        }
        try exchange()  // idle until 10 s
        loop.advanceTime(by: .seconds(6))
        try exchange()  // idle until 16 s
        loop.advanceTime(by: .seconds(6))
        #expect(channel.isActive, "open at 12 s: the first deadline moved")
        loop.advanceTime(by: .seconds(3))
        #expect(channel.isActive, "open at 15 s")
        loop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive, "closed at 17 s, idle for the whole timeout")
        _ = try? channel.finish()
    }

    /// Each connection starts its partial request as soon as it is open: the header timeout runs
    /// from the accept, and a write that came after it would find the connection already closed.
    @Test func slowAndMissingRequestsAreClosedAfterTheHeaderTimeout() async throws {
        let harness = try await ProxyHarness.start(connections: Self.limits(header: .seconds(8 * Deadlines.stretch)))
        defer { Task { await harness.stop() } }
        let port = harness.port
        try await RawHTTPConnection.with(port: port) { silent in
            try await RawHTTPConnection.with(port: port) { partialHead in
                try await partialHead.sendRaw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                try await RawHTTPConnection.with(port: port) { partialAfterAnswer in
                    try await partialAfterAnswer.send(["GET /healthz HTTP/1.1"])
                    #expect(try await partialAfterAnswer.response().status == 200)
                    try await partialAfterAnswer.sendRaw("GET /healthz HTTP/1.1\r\nHo")
                    try await RawHTTPConnection.with(port: port) { partialBody in
                        // The body too must arrive in time (whether or not the router answers first).
                        try await partialBody.sendRaw("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nabc")

                        // While they hang on, everyone else is answered.
                        #expect(try await harness.request("/healthz").status == 200)

                        #expect(try await silent.isClosedByServer())
                        #expect(try await partialHead.isClosedByServer())
                        #expect(try await partialAfterAnswer.isClosedByServer())
                        _ = try await partialBody.readUntilClosedByServer()
                    }
                }
            }
        }
        #expect(try await harness.request("/healthz").status == 200)
    }

    /// At the cap, a new connection is closed unanswered; once the server has closed one of
    /// the connections it holds, a new one is answered. The connections are closed by the
    /// server (HTTP/1.0 answers), which frees their slots before the client sees the close.
    @Test func connectionsBeyondTheCapAreClosedUntilOneEnds() async throws {
        let harness = try await ProxyHarness.start(connections: Self.limits(maximum: 2))
        defer { Task { await harness.stop() } }
        try await RawHTTPConnection.with(port: harness.port) { first in
            try await RawHTTPConnection.with(port: harness.port) { second in
                // Answered, so both hold their slots.
                try await first.send(["GET /healthz HTTP/1.1"])
                try await second.send(["GET /healthz HTTP/1.1"])
                #expect(try await first.response().status == 200)
                #expect(try await second.response().status == 200)

                #expect(try await RawHTTPConnection.isRefused(port: harness.port))

                try await first.send(["GET /healthz HTTP/1.0"])
                #expect(try await first.response().status == 200)
                #expect(try await first.isClosedByServer())
                try await RawHTTPConnection.with(port: harness.port) { third in
                    try await third.send(["GET /healthz HTTP/1.1"])
                    #expect(try await third.response().status == 200)
                }
            }
        }
    }

    /// Hostile-input finding 6: one client holding ~4,150 idle sockets took every connection,
    /// `/healthz` included. Each client (an address) now holds at most its share; another
    /// client still gets in, and a trusted proxy's connections are not capped this way.
    @Test func oneClientCannotTakeEveryConnection() async throws {
        let harness = try await ProxyHarness.start(connections: Self.limits(maximum: 10, perClient: 2, trusted: ["127.0.0.3"]))
        defer { Task { await harness.stop() } }
        let port = harness.port
        try await RawHTTPConnection.with(port: port, from: "127.0.0.2") { first in
            try await RawHTTPConnection.with(port: port, from: "127.0.0.2") { second in
                try await first.send(["GET /healthz HTTP/1.1"])
                try await second.send(["GET /healthz HTTP/1.1"])
                #expect(try await first.response().status == 200)
                #expect(try await second.response().status == 200)
                #expect(try await RawHTTPConnection.isRefused(port: port, from: "127.0.0.2"), "a third connection of one client")
                #expect(try await !RawHTTPConnection.isRefused(port: port, from: "127.0.0.4"), "another client")
                // The trusted proxy's connections: three at once, past the per-client cap.
                try await RawHTTPConnection.with(port: port, from: "127.0.0.3") { a in
                    try await RawHTTPConnection.with(port: port, from: "127.0.0.3") { b in
                        try await a.send(["GET /healthz HTTP/1.1"])
                        try await b.send(["GET /healthz HTTP/1.1"])
                        #expect(try await a.response().status == 200)
                        #expect(try await b.response().status == 200)
                        #expect(try await !RawHTTPConnection.isRefused(port: port, from: "127.0.0.3"))
                    }
                }
                // Once the server has closed one of them, the client may open another.
                try await first.send(["GET /healthz HTTP/1.0"])
                #expect(try await first.response().status == 200)
                #expect(try await first.isClosedByServer())
                #expect(try await !RawHTTPConnection.isRefused(port: port, from: "127.0.0.2"))
            }
        }
    }

    /// With every connection taken, a connection from the reserve still answers `/healthz` and
    /// `/metrics`, and nothing else; past the reserve, connections are refused.
    @Test func theReserveAnswersOperationsOnly() async throws {
        let harness = try await ProxyHarness.start(connections: Self.limits(maximum: 2, reserved: 1))
        defer { Task { await harness.stop() } }
        let port = harness.port
        try await RawHTTPConnection.with(port: port, from: "127.0.0.5") { first in
            try await RawHTTPConnection.with(port: port, from: "127.0.0.6") { second in
                try await first.send(["GET /healthz HTTP/1.1"])
                try await second.send(["GET /healthz HTTP/1.1"])
                #expect(try await first.response().status == 200)
                #expect(try await second.response().status == 200)
                try await RawHTTPConnection.with(port: port, from: "127.0.0.7") { reserve in
                    try await reserve.send(["GET /healthz HTTP/1.1"])
                    #expect(try await reserve.response().status == 200)
                    try await reserve.send(["GET /metrics HTTP/1.1"])
                    #expect(try await reserve.response().status == 200)
                    #expect(try await RawHTTPConnection.isRefused(port: port, from: "127.0.0.8"), "past the reserve")
                    try await reserve.send(["GET /image?url=local%3A%2F%2F%2Fa.png HTTP/1.1"])
                    let refused = try await reserve.response()
                    #expect(refused.status == 503 && refused.header("Connection") == "close")
                    #expect(try await reserve.isClosedByServer())
                }
            }
        }
    }

    /// A request with `X-Forwarded-For: forwarded` for `path`, from the loopback address `source`;
    /// its status.
    static func forwardedRequest(_ harness: ProxyHarness, _ path: String, forwarded: String, from source: String = "127.0.0.1") async throws -> Int {
        try await RawHTTPConnection.with(port: harness.port, from: source) { connection in
            try await connection.sendRaw("GET \(harness.imagePath(path, "w=8")) HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: \(forwarded)\r\n\r\n")
            return try await connection.response().status
        }
    }

    /// Behind a trusted proxy, requests are counted per client `X-Forwarded-For` names: a client
    /// with a request in progress at its cap gets `503`, another client does not. Anyone else's
    /// `X-Forwarded-For` is not believed.
    @Test func forwardedClientsAreCountedWhenTheProxyIsTrusted() async throws {
        for trustsPeer in [true, false] {
            // The held download waits at the gate while the other requests are made: on CI's
            // loaded machine that passed the harness's 45 s origin timeout (a 504). The test is
            // about the forwarded count, so the origin may take as long as the suite's limit.
            let harness = try await ProxyHarness.start(connections: Self.limits(perClient: 1, trusted: [trustsPeer ? "127.0.0.1" : "127.0.0.9"])) {
                $0.originTimeout = .seconds(600)
            }
            defer { Task { await harness.stop() } }
            // A 32 px image: the requests in between are quick, so the held download's wait at the
            // gate stays far from the origin timeout on a loaded machine.
            let small = try Data(contentsOf: Fixture.fixtures.appendingPathComponent("hopper-rgba-32.png"))
            harness.origin.register("/slow.png", data: small)
            harness.origin.register("/other.png", data: small)
            let gate = harness.origin.gate("/slow.png")
            // Each untrusted request from an address of its own: their connections are capped
            // at one per address here, and only the forwarded count is under test.
            async let held = Self.forwardedRequest(harness, "/slow.png", forwarded: "198.51.100.7", from: trustsPeer ? "127.0.0.1" : "127.0.0.4")
            #expect(await harness.origin.waitForRequests(path: "/slow.png", count: 1))
            // The client is the rightmost address not trusted: 198.51.100.7 again. From an
            // untrusted peer (another address, so that its own connection cap is not the one
            // counting), the header is not believed.
            let same = try await Self.forwardedRequest(harness, "/other.png", forwarded: "203.0.113.1, 198.51.100.7", from: trustsPeer ? "127.0.0.1" : "127.0.0.2")
            #expect(same == (trustsPeer ? 503 : 200), "trusted peer: \(trustsPeer)")
            #expect(try await Self.forwardedRequest(harness, "/other.png", forwarded: "198.51.100.8", from: trustsPeer ? "127.0.0.1" : "127.0.0.3") == 200)
            gate.open()
            let heldStatus = try await held
            #expect(heldStatus == 200, "trusted peer: \(trustsPeer)")
        }
    }
}
