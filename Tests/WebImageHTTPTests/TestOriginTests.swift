import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import WebImageTestSupport

/// The test server's endpoints behave as the loader tests assume, seen through a plain
/// AsyncHTTPClient that follows no redirects.
@Suite("TestOrigin")
struct TestOriginTests {
    struct Reply {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
    }

    /// Runs `body` with a started origin and a raw client, and stops both afterwards.
    func withOrigin(_ body: (TestOrigin, HTTPClient) async throws -> Void) async throws {
        let origin = try await TestOrigin.start()
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await body(origin, client)
        } catch {
            try? await client.shutdown()
            try? await origin.shutdown()
            throw error
        }
        try await client.shutdown()
        try await origin.shutdown()
    }

    func get(_ client: HTTPClient, _ url: URL, headers: [(String, String)] = []) async throws -> Reply {
        var request = HTTPClientRequest(url: url.absoluteString)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        // Only a hang should reach it: a gated answer waits for the test, which on a loaded
        // two-core machine can wait longer than a fixed 10 s for a thread.
        let response = try await client.execute(request, timeout: .seconds(60 * Int64(Deadlines.stretch)))
        let body = try await response.body.collect(upTo: 1 << 26)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
    }

    @Test func servesRegisteredContentAndRecordsTheRequest() async throws {
        try await withOrigin { origin, client in
            let data = Data((0..<5000).map { UInt8($0 % 251) })
            origin.register("/a.bin", data: data, contentType: "image/png", cacheControl: "max-age=60")
            let reply = try await get(client, origin.url("/a.bin?x=1"), headers: [("X-Test", "yes")])
            #expect(reply.status == 200)
            #expect(reply.body == data)
            #expect(reply.headers["Content-Type"].first == "image/png")
            #expect(reply.headers["Cache-Control"].first == "max-age=60")
            #expect(await origin.waitForResponsesSettled(path: "/a.bin"))
            let record = try #require(origin.requests(path: "/a.bin").first)
            #expect(record.uri == "/a.bin?x=1")
            #expect(record.method == "GET")
            #expect(record.header("x-test") == "yes")
            #expect(record.outcome == .completed)
            #expect(record.bodyBytesSent == data.count)
            #expect(origin.requestCount(path: "/missing") == 0)
            let missingStatus = try await get(client, origin.url("/missing")).status
            #expect(missingStatus == 404)
        }
    }

    @Test func answersValidatorsWith304UntilTheContentChanges() async throws {
        try await withOrigin { origin, client in
            let modified = "Wed, 01 Jan 2025 00:00:00 GMT"
            origin.register("/v.png", data: Data("one".utf8), contentType: "image/png", etag: "\"v1\"", lastModified: modified)
            let byTag = try await get(client, origin.url("/v.png"), headers: [("If-None-Match", "\"v1\"")])
            #expect(byTag.status == 304)
            #expect(byTag.body.isEmpty)
            #expect(byTag.headers["ETag"].first == "\"v1\"")
            let byDate = try await get(client, origin.url("/v.png"), headers: [("If-Modified-Since", modified)])
            #expect(byDate.status == 304)
            let older = try await get(client, origin.url("/v.png"), headers: [("If-Modified-Since", "Tue, 31 Dec 2024 00:00:00 GMT")])
            #expect(older.status == 200)

            origin.register("/v.png", data: Data("two".utf8), contentType: "image/png", etag: "\"v2\"")
            let changed = try await get(client, origin.url("/v.png"), headers: [("If-None-Match", "\"v1\"")])
            #expect(changed.status == 200)
            #expect(changed.body == Data("two".utf8))
        }
    }

    @Test func gateHoldsResponsesUntilOpened() async throws {
        try await withOrigin { origin, client in
            origin.register("/held", data: Data("held".utf8))
            let gate = origin.gate("/held")
            async let reply = get(client, origin.url("/held"))
            #expect(await origin.waitForRequests(path: "/held", count: 1))
            #expect(origin.requests(path: "/held").first?.outcome == .pending)
            #expect(gate.heldCount == 1)
            gate.open()
            let heldBody = try await reply.body
            #expect(heldBody == Data("held".utf8))
            #expect(origin.requests(path: "/held").first?.outcome == .completed)
        }
    }

    @Test func redirectsHopThenServe() async throws {
        try await withOrigin { origin, client in
            origin.register("/r.png", data: Data("final".utf8))
            let first = try await get(client, origin.url("/redirect/2/r.png"))
            #expect(first.status == 302)
            #expect(first.headers["Location"].first == "/redirect/1/r.png")
            let second = try await get(client, origin.url("/redirect/1/r.png?absolute=1"))
            #expect(second.headers["Location"].first == origin.url("/r.png?absolute=1").absoluteString)
            let loop = try await get(client, origin.url("/redirect-loop/a"))
            #expect(loop.headers["Location"].first == "/redirect-loop/b")
        }
    }

    @Test func statusAuthCookiesAndHTML() async throws {
        try await withOrigin { origin, client in
            let tooManyStatus = try await get(client, origin.url("/status/429")).status
            #expect(tooManyStatus == 429)
            let serverErrorStatus = try await get(client, origin.url("/status/500")).status
            #expect(serverErrorStatus == 500)

            let denied = try await get(client, origin.url("/auth/x?bytes=10"))
            #expect(denied.status == 401)
            #expect(denied.headers["WWW-Authenticate"].first?.hasPrefix("Basic") == true)
            let basic = "Basic " + Data("user:pass".utf8).base64EncodedString()
            let allowed = try await get(client, origin.url("/auth/x?bytes=10"), headers: [("Authorization", basic)])
            #expect(allowed.status == 200)
            #expect(allowed.body == TestOrigin.generatedBody(size: 10))

            let set = try await get(client, origin.url("/cookie/set?session=abc&maxAge=60"))
            #expect(set.headers["Set-Cookie"] == ["session=abc; Path=/; Max-Age=60"])
            let echo = try await get(client, origin.url("/cookie/echo"), headers: [("Cookie", "a=1; b=2")])
            #expect(String(decoding: echo.body, as: UTF8.self) == "a=1; b=2")

            let html = try await get(client, origin.url("/html"))
            #expect(html.headers["Content-Type"].first?.hasPrefix("text/html") == true)
        }
    }

    @Test("/flaky/ fails the first requests of each client key as asked, then serves the content")
    func flakyFailsThenServes() async throws {
        try await withOrigin { origin, client in
            origin.register("/f.png", data: Data("image".utf8), contentType: "image/png")
            let url = origin.url("/flaky/f.png?fail=2&status=429&retryAfter=3")
            let first = try await get(client, url)
            #expect(first.status == 429)
            #expect(first.headers["Retry-After"].first == "3")
            #expect(try await get(client, url).status == 429)
            let third = try await get(client, url)
            #expect(third.status == 200)
            #expect(third.body == Data("image".utf8))
            // Another key (here, another target) counts from zero.
            #expect(try await get(client, origin.url("/flaky/f.png?fail=2&status=429&retryAfter=3&key=b")).status == 429)
            #expect(origin.requestCount(path: "/flaky/f.png") == 4)

            let slowDown = try await get(client, origin.url("/flaky/f.png?code=SlowDown"))
            #expect(slowDown.status == 503)
            #expect(String(decoding: slowDown.body, as: UTF8.self).contains("<Code>SlowDown</Code>"))

            // A reset before any response, then the content on the next request.
            let reset = origin.url("/flaky/g?mode=reset&bytes=10")
            await #expect(throws: (any Error).self) { try await get(client, reset) }
            #expect(await origin.waitForConnectionClose(path: "/flaky/g"))
            #expect(origin.requests(path: "/flaky/g").first?.outcome == .aborted)
            #expect(try await get(client, reset).body == TestOrigin.generatedBody(size: 10))
        }
    }

    @Test func hugeBodiesStreamWithOrWithoutLength() async throws {
        try await withOrigin { origin, client in
            let sized = try await get(client, origin.url("/huge?bytes=300000"))
            #expect(sized.headers["Content-Length"].first == "300000")
            #expect(sized.body.count == 300_000)
            let chunked = try await get(client, origin.url("/huge?bytes=300000&length=0"))
            #expect(chunked.headers["Content-Length"].isEmpty)
            #expect(chunked.body.count == 300_000)
            #expect(chunked.body.prefix(1000) == TestOrigin.generatedBody(size: 1000))
        }
    }

    @Test func slowBodiesArriveWhole() async throws {
        try await withOrigin { origin, client in
            let reply = try await get(client, origin.url("/slow/x?bytes=5000&chunk=1000&delayMs=5"))
            #expect(reply.body == TestOrigin.generatedBody(size: 5000))
        }
    }

    @Test func brokenBodiesFailAtTheClient() async throws {
        try await withOrigin { origin, client in
            await #expect(throws: (any Error).self) { try await get(client, origin.url("/reset/x?bytes=200000")) }
            await #expect(throws: (any Error).self) { try await get(client, origin.url("/wrong-length/x?bytes=1000")) }
            #expect(await origin.waitForConnectionClose(path: "/reset/x"))
            #expect(origin.requests(path: "/reset/x").first?.outcome == .aborted)
        }
    }

    @Test func aClientThatGivesUpOnAStallClosesTheConnection() async throws {
        try await withOrigin { origin, client in
            let task = Task { try await get(client, origin.url("/stall/x?bytes=5000")) }
            #expect(await origin.waitForRequests(path: "/stall/x", count: 1))
            task.cancel()
            _ = try? await task.value
            #expect(await origin.waitForConnectionClose(path: "/stall/x"))
            #expect(origin.requests(path: "/stall/x").first?.outcome == .aborted)
        }
    }

    @Test func countsConcurrentRequests() async throws {
        try await withOrigin { origin, client in
            origin.register("/c", data: Data("c".utf8))
            let gate = origin.gate("/c")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<3 { group.addTask { _ = try await get(client, origin.url("/c")) } }
                #expect(await origin.waitForRequests(path: "/c", count: 3))
                #expect(gate.releaseOne())
                gate.open()
                try await group.waitForAll()
            }
            #expect(origin.maxConcurrentRequests == 3)
        }
    }

    @Test func aClosedPortRefuses() async throws {
        let port = try await TestOrigin.closedPort()
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/")
        request.method = .GET
        await #expect(throws: (any Error).self) {
            _ = try await HTTPClient.shared.execute(request, timeout: .seconds(1))
        }
    }
}
