import Foundation
import NIOCore
import Testing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// Idle and slow clients are closed by the server, and connections beyond the cap are refused,
/// while the proxy keeps answering everyone else.
///
/// Each test keeps the timeout it does not exercise far above the suite's time limit: a test
/// passes only if the timeout it is about closed the connection. The timeouts it exercises
/// leave seconds between a connect and its write: in the parallel suite a test's task can wait
/// that long for a thread of the two-wide cooperative pool.
@Suite(.timeLimit(.minutes(1 * Deadlines.stretch))) struct ConnectionLimitTests {
    static func limits(header: Duration = .seconds(600), idle: Duration = .seconds(600), maximum: Int = 4_096) -> ConnectionLimits {
        var limits = ConnectionLimits()
        limits.headerTimeout = header
        limits.idleTimeout = idle
        limits.maximumConnections = maximum
        return limits
    }

    @Test func anIdleKeptAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        let harness = try await ProxyHarness.start(connections: Self.limits(idle: .seconds(10)))
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

    /// Each connection starts its partial request as soon as it is open: the header timeout runs
    /// from the accept, and a write that came after it would find the connection already closed.
    @Test func slowAndMissingRequestsAreClosedAfterTheHeaderTimeout() async throws {
        let harness = try await ProxyHarness.start(connections: Self.limits(header: .seconds(8)))
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

                #expect(try await Self.isRefused(port: harness.port))

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

    /// Whether a new connection's request goes unanswered: the server closes the connection
    /// (the client reads the end, or a reset if its request arrived after the close).
    static func isRefused(port: Int) async throws -> Bool {
        do {
            return try await RawHTTPConnection.with(port: port) { connection in
                try await connection.send(["GET /healthz HTTP/1.1"])
                _ = try await connection.response()
                return false
            }
        } catch is RawHTTPConnection.ConnectionClosed {
            return true
        } catch let error as IOError where [ECONNRESET, EPIPE].contains(error.errnoCode) {
            return true
        } catch is ChannelError {
            // Writing the request after the close.
            return true
        }
    }
}
