import Foundation
import Testing
@testable import WebImageHTTP
import WebImageCore
import WebImageTestSupport

/// The loader against a real HTTP/1.1 server on loopback.
@Suite("HTTPImageLoader")
struct HTTPImageLoaderTests {
    static let png = try! Data(contentsOf: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/apng-single_frame.png"))

    @Test func loadsBytesAndMetadata() async throws {
        try await withLoader { origin, loader in
            origin.register("/a.png", data: Self.png, contentType: "image/png", etag: "\"a1\"",
                            lastModified: "Wed, 01 Jan 2025 00:00:00 GMT", cacheControl: "public, max-age=3600")
            let url = origin.url("/a.png")
            let before = Date()
            let response = try await loader.load(url)
            let after = Date()
            #expect(response.data == Self.png)
            #expect(response.statusCode == 200)
            #expect(response.url == url)
            #expect(!response.isNotModified)
            #expect(response.metadata.contentType == "image/png")
            #expect(response.metadata.url == url.absoluteString)
            #expect(response.metadata.etag == "\"a1\"")
            #expect(response.metadata.lastModified == "Wed, 01 Jan 2025 00:00:00 GMT")
            // An hour from the loader's reading of the clock, which lies between the test's
            // readings around the load, however long that took.
            let expiresAt = try #require(response.metadata.expiresAt)
            #expect(expiresAt >= before.addingTimeInterval(3600) && expiresAt <= after.addingTimeInterval(3600))
        }
    }

    @Test func expiresHeaderIsUsedWithoutCacheControl() async throws {
        try await withLoader { origin, loader in
            let expires = "Sun, 06 Nov 2039 08:49:37 GMT"
            origin.register("/e.png", data: Self.png, extraHeaders: ["Expires": expires])
            let byExpires = try await loader.load(origin.url("/e.png")).metadata.expiresAt
            #expect(byExpires == HTTPDate.parse(expires))
            #expect(byExpires == Date(timeIntervalSince1970: 2_204_182_177))

            // Cache-Control wins over Expires.
            origin.register("/e.png", data: Self.png, cacheControl: "max-age=60", extraHeaders: ["Expires": expires])
            let byMaxAge = try #require(try await loader.load(origin.url("/e.png")).metadata.expiresAt)
            #expect(byMaxAge.timeIntervalSinceNow <= 60)

            // An invalid Expires ("0") means already expired.
            origin.register("/e.png", data: Self.png, extraHeaders: ["Expires": "0"])
            let invalid = try #require(try await loader.load(origin.url("/e.png")).metadata.expiresAt)
            #expect(invalid.timeIntervalSinceNow <= 0)
        }
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("not a date") == nil)
    }

    @Test func sendsAcceptUserAgentGlobalAndRequestHeadersAndModifiers() async throws {
        try await withLoader({ configuration in
            configuration = HTTPImageLoader.Configuration(acceptedFormats: [.gif, .png, .jpeg, .webp])
            configuration.headers = ["X-Global": "g", "X-Both": "global"]
            configuration.requestModifier = { request in
                var request = request
                request.headers["X-Order"] = "global"
                request.url = URL(string: request.url.absoluteString + "?signed=1")!
                return request
            }
        }) { origin, loader in
            origin.register("/h.png", data: Self.png)
            var request = ImageLoadRequest(url: origin.url("/h.png"), headers: ["X-Both": "request", "user-agent": "custom/1"])
            request.modifier = { request in
                var request = request
                request.headers["X-Order"] = (request.headers["X-Order"] ?? "") + ",request"
                return request
            }
            _ = try await loader.load(request, context: ImageLoadContext())
            let record = try #require(origin.requests(path: "/h.png").first)
            #expect(record.uri == "/h.png?signed=1")
            #expect(record.header("Accept") == "image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8")
            #expect(record.header("User-Agent") == "custom/1")
            #expect(record.header("X-Global") == "g")
            #expect(record.header("X-Both") == "request")
            #expect(record.header("X-Order") == "global,request")
            #expect(record.headers.count(where: { $0.name.lowercased() == "x-both" }) == 1)
        }
    }

    @Test func defaultUserAgentAndAcceptHeaderBuilder() async throws {
        try await withLoader { origin, loader in
            origin.register("/u.png", data: Self.png)
            _ = try await loader.load(origin.url("/u.png"))
            // The product and a semantic version (the number itself moves with each release).
            let agent = try #require(origin.requests(path: "/u.png").first?.header("User-Agent"))
            #expect(agent.wholeMatch(of: /swift-web-image\/\d+\.\d+\.\d+(-[a-z0-9.]+)?/) != nil, "\(agent)")
        }
        #expect(HTTPImageLoader.Configuration.acceptHeader(for: [.jpeg, .avif]) == "image/avif,image/jpeg,image/*;q=0.8")
        #expect(HTTPImageLoader.Configuration.acceptHeader(for: []) == "image/*;q=0.8")
    }

    @Test func basicCredentials() async throws {
        try await withLoader { origin, loader in
            #expect(await imageError { try await loader.load(origin.url("/auth/p?bytes=64")) } == .httpStatus(401))
        }
        try await withLoader({ $0.credentials = .init(user: "ann", password: "secret") }) { origin, loader in
            origin.setCredentials(user: "ann", password: "secret")
            let response = try await loader.load(origin.url("/auth/p?bytes=64"))
            #expect(response.data == TestOrigin.generatedBody(size: 64))
        }
    }

    @Test func cookiesAreKeptAndSentOnlyWhenAsked() async throws {
        try await withLoader { origin, loader in
            _ = try await loader.load(origin.url("/cookie/set?session=abc&theme=dark"), options: .handleCookies)
            let echoed = try await loader.load(origin.url("/cookie/echo"), options: .handleCookies)
            #expect(String(decoding: echoed.data, as: UTF8.self) == "session=abc; theme=dark")

            let without = try await loader.load(origin.url("/cookie/echo"))
            #expect(without.data.isEmpty)
            #expect(origin.requests(path: "/cookie/echo").last?.header("Cookie") == nil)

            // Max-Age=0 deletes.
            _ = try await loader.load(origin.url("/cookie/set?session=gone&maxAge=0"), options: .handleCookies)
            let afterDelete = try await loader.load(origin.url("/cookie/echo"), options: .handleCookies)
            #expect(String(decoding: afterDelete.data, as: UTF8.self) == "theme=dark")
        }
        // Without the option a response's cookies are not even kept.
        try await withLoader { origin, loader in
            _ = try await loader.load(origin.url("/cookie/set?session=abc"))
            let echoed = try await loader.load(origin.url("/cookie/echo"), options: .handleCookies)
            #expect(echoed.data.isEmpty)
        }
        // The configuration can turn cookies on for every request.
        try await withLoader({ $0.handlesCookies = true }) { origin, loader in
            _ = try await loader.load(origin.url("/cookie/set?k=v"))
            let echoed = try await loader.load(origin.url("/cookie/echo")).data
            #expect(echoed == Data("k=v".utf8))
        }
    }

    @Test func cookieJarDomainPathAndExpiry() {
        let jar = CookieJar()
        let now = Date()
        let page = URL(string: "http://img.example.com/gallery/a.png")!
        jar.store(setCookie: [
            "a=1",                                   // host-only, path /gallery
            "b=2; Domain=.example.com; Path=/",      // the parent domain
            "c=3; Domain=other.com",                 // refused: not our domain
            "d=4; Path=/; Expires=Sun, 06 Nov 1994 08:49:37 GMT",  // already expired
            "e=5; Path=/; Secure",
            "f=6; Path=/; Max-Age=10",
        ], from: page, now: now)
        #expect(jar.cookieHeader(for: URL(string: "http://img.example.com/gallery/b.png")!, now: now) == "a=1; b=2; f=6")
        #expect(jar.cookieHeader(for: URL(string: "https://img.example.com/other")!, now: now) == "b=2; e=5; f=6")
        #expect(jar.cookieHeader(for: URL(string: "http://cdn.example.com/")!, now: now) == "b=2")
        #expect(jar.cookieHeader(for: URL(string: "http://other.com/")!, now: now) == nil)
        #expect(jar.cookieHeader(for: URL(string: "http://img.example.com/")!, now: now.addingTimeInterval(11)) == "b=2")
    }

    @Test func followsRedirectsAndChecksEveryHop() async throws {
        let hops = Collected<String>()
        try await withLoader({ $0.redirectPolicy = { url in hops.append(url.path) } }) { origin, loader in
            origin.register("/r.png", data: Self.png)
            let response = try await loader.load(origin.url("/redirect/3/r.png"))
            #expect(response.data == Self.png)
            #expect(response.url == origin.url("/r.png"))
            #expect(response.metadata.url == origin.url("/redirect/3/r.png").absoluteString)
            #expect(hops.values == ["/redirect/3/r.png", "/redirect/2/r.png", "/redirect/1/r.png", "/r.png"])
            #expect(origin.allRequests.map(\.path) == hops.values)

            let absolute = try await loader.load(origin.url("/redirect/2/r.png?absolute=1"))
            #expect(absolute.url == origin.url("/r.png?absolute=1"))
        }
    }

    @Test func redirectPolicyCanRefuseAHop() async throws {
        try await withLoader({ $0.redirectPolicy = { url in
            if url.path == "/r.png" { throw ImageError.invalidURL("private") }
        } }) { origin, loader in
            origin.register("/r.png", data: Self.png)
            #expect(await imageError { try await loader.load(origin.url("/redirect/1/r.png")) } == .invalidURL("private"))
            #expect(origin.requestCount(path: "/r.png") == 0)
        }
    }

    @Test func redirectLoopsAndTooManyRedirectsFail() async throws {
        try await withLoader({ $0.maximumRedirects = 2 }) { origin, loader in
            origin.register("/r.png", data: Self.png)
            let loop = await imageError { try await loader.load(origin.url("/redirect-loop/a")) }
            #expect(loop?.networkKind == .redirects)
            #expect(loop?.isPermanent == true)
            // a → b → a: the cycle is seen at the second hop, before any further request.
            #expect(origin.allRequests.map(\.path) == ["/redirect-loop/a", "/redirect-loop/b"])

            let tooMany = await imageError { try await loader.load(origin.url("/redirect/3/r.png")) }
            #expect(tooMany?.networkKind == .redirects)
            #expect(origin.requestCount(path: "/r.png") == 0)
            let followed = try await loader.load(origin.url("/redirect/2/r.png")).data
            #expect(followed == Self.png)
        }
    }

    @Test(arguments: [404, 500, 429, 408, 403])
    func statusesFailTyped(status: Int) async throws {
        try await withLoader { origin, loader in
            let error = await imageError { try await loader.load(origin.url("/status/\(status)")) }
            #expect(error == .httpStatus(status))
        }
    }

    @Test func aTooLargeContentLengthFailsWithoutReadingTheBody() async throws {
        let total = 64 << 20
        try await withLoader({ $0.maximumResponseSize = 1 << 20 }) { origin, loader in
            let progress = Collected<Int>()
            let context = ImageLoadContext { progress.append($0.received) }
            let error = await imageError {
                try await loader.load(ImageLoadRequest(url: origin.url("/huge?bytes=\(total)")), context: context)
            }
            #expect(error?.isTooLarge == true)
            #expect(progress.values.isEmpty)
            // The client closed the connection instead of draining 64 MiB.
            #expect(await origin.waitForConnectionClose(path: "/huge"))
            let record = try #require(origin.requests(path: "/huge").first)
            #expect(record.outcome == .aborted)
            #expect(record.bodyBytesSent < total / 2)
        }
    }

    @Test func aTooLargeBodyWithoutLengthFailsWhileStreaming() async throws {
        let limit = 1 << 20
        try await withLoader({ $0.maximumResponseSize = limit }) { origin, loader in
            let progress = Collected<Int>()
            let context = ImageLoadContext { progress.append($0.received) }
            let error = await imageError {
                try await loader.load(ImageLoadRequest(url: origin.url("/huge?bytes=\(16 << 20)&length=0")), context: context)
            }
            #expect(error?.isTooLarge == true)
            #expect(!progress.values.isEmpty)
            #expect((progress.values.max() ?? .max) <= limit)
            #expect(await origin.waitForConnectionClose(path: "/huge"))
        }
    }

    @Test func brokenBodiesFailWithATypedNetworkError() async throws {
        try await withLoader { origin, loader in
            let short = await imageError { try await loader.load(origin.url("/wrong-length/x?bytes=5000")) }
            #expect([.connectionLost, .invalidResponse].contains(short?.networkKind))
            let reset = await imageError { try await loader.load(origin.url("/reset/x?bytes=400000")) }
            #expect([.connectionLost, .invalidResponse].contains(reset?.networkKind))
            #expect(reset?.isPermanent == false)
        }
    }

    /// The head arrives, then nothing: AsyncHTTPClient's own deadline would let this hang for
    /// good; the time limit turns such a hang into a failure.
    @Test(.timeLimit(.minutes(1 * Deadlines.stretch)))
    func aStalledBodyTimesOut() async throws {
        try await withLoader({ $0.timeout = .milliseconds(300) }) { origin, loader in
            let error = await imageError { try await loader.load(origin.url("/stall/x?bytes=100000")) }
            #expect(error?.isTimeout == true)
            #expect(await origin.waitForConnectionClose(path: "/stall/x"))
        }
    }

    @Test func refusedConnectionsAndUnknownHostsFailTyped() async throws {
        try await withLoader { _, loader in
            let port = try await TestOrigin.closedPort()
            let refused = await imageError { try await loader.load(URL(string: "http://127.0.0.1:\(port)/a.png")!) }
            #expect(refused?.networkKind == .connectionRefused)
            let dns = await imageError { try await loader.load(URL(string: "http://nonexistent.invalid/a.png")!) }
            #expect(dns?.networkKind == .dnsFailure)
            #expect(await imageError { try await loader.load(URL(string: "ftp://127.0.0.1/a.png")!) } == .invalidURL("ftp://127.0.0.1/a.png"))
        }
    }

    @Test func contentTypeValidation() async throws {
        try await withLoader({ $0.validatesContentType = true }) { origin, loader in
            let error = await imageError { try await loader.load(origin.url("/html")) }
            #expect(error?.isUnsupportedFormat == true)
            origin.register("/ok.png", data: Self.png, contentType: "image/png")
            let image = try await loader.load(origin.url("/ok.png")).data
            #expect(image == Self.png)
        }
        try await withLoader { origin, loader in
            let isHTML = try await loader.load(origin.url("/html")).metadata.contentType?.hasPrefix("text/html")
            #expect(isHTML == true)
        }
    }

    @Test func revalidatesWithETagAndLastModified() async throws {
        try await withLoader { origin, loader in
            origin.register("/v.png", data: Self.png, contentType: "image/png", etag: "\"v1\"",
                            lastModified: "Wed, 01 Jan 2025 00:00:00 GMT", cacheControl: "max-age=600")
            let byTag = ImageLoadRequest(url: origin.url("/v.png"), validators: .init(etag: "\"v1\""))
            let notModified = try await loader.load(byTag, context: ImageLoadContext())
            #expect(notModified.isNotModified)
            #expect(notModified.statusCode == 304)
            #expect(notModified.data.isEmpty)
            #expect(notModified.metadata.etag == "\"v1\"")
            #expect(notModified.metadata.expiresAt != nil)
            #expect(origin.requests(path: "/v.png").last?.header("If-None-Match") == "\"v1\"")

            let byDate = ImageLoadRequest(url: origin.url("/v.png"), validators: .init(lastModified: "Wed, 01 Jan 2025 00:00:00 GMT"))
            let byDateNotModified = try await loader.load(byDate, context: ImageLoadContext()).isNotModified
            #expect(byDateNotModified)
            #expect(origin.requests(path: "/v.png").last?.header("If-Modified-Since") == "Wed, 01 Jan 2025 00:00:00 GMT")

            let changed = Data(Self.png.reversed())
            origin.register("/v.png", data: changed, contentType: "image/png", etag: "\"v2\"")
            let fresh = try await loader.load(byTag, context: ImageLoadContext())
            #expect(!fresh.isNotModified)
            #expect(fresh.data == changed)
            #expect(fresh.metadata.etag == "\"v2\"")
        }
    }

    @Test func reportsMonotonicProgressAndChunks() async throws {
        try await withLoader { origin, loader in
            let steps = Collected<ImageLoadContext.Progress>()
            let context = ImageLoadContext(wantsChunks: true) { steps.append($0) }
            let response = try await loader.load(ImageLoadRequest(url: origin.url("/slow/x?bytes=20000&chunk=4000&delayMs=5")), context: context)
            let received = steps.values.map(\.received)
            #expect(received.count >= 2)
            #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 })
            #expect(received.last == 20000)
            #expect(steps.values.allSatisfy { $0.expected == 20000 })
            #expect(Data(steps.values.compactMap(\.chunk).joined()) == response.data)

            let quiet = Collected<ImageLoadContext.Progress>()
            _ = try await loader.load(ImageLoadRequest(url: origin.url("/slow/x?bytes=3000&chunk=1000&delayMs=1")), context: ImageLoadContext { quiet.append($0) })
            #expect(!quiet.values.isEmpty && quiet.values.allSatisfy { $0.chunk == nil })
        }
    }
}
