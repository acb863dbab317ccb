import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// Each error status, end to end, with short plain-text bodies that reveal nothing about the
/// origin.
@Suite struct ProxyErrorTests {
    func expectPlainError(_ reply: Reply, _ status: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == status, sourceLocation: sourceLocation)
        #expect(reply.header("Content-Type") == "text/plain; charset=utf-8", sourceLocation: sourceLocation)
        #expect(reply.body.count < 100, sourceLocation: sourceLocation)
        #expect(!reply.text.contains("127.0.0.1") && !reply.text.contains("/tmp"), sourceLocation: sourceLocation)
        #expect(reply.header("ETag") == nil, sourceLocation: sourceLocation)
    }

    @Test func badParametersAre400() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        for query in ["", "url=x", harness.imagePath("/a.jpg", "w=abc").dropFirst(7).description, "url=https%3A%2F%2Fexample.com%2Fa&bogus=1"] {
            let reply = try await harness.request("/image?" + query)
            expectPlainError(reply, 400)
        }
        let reply = try await harness.get("/a.jpg", "fit=crop")
        #expect(reply.text == "fit must be contain, cover or fill\n")
        // Nothing reached the origin.
        #expect(harness.origin.allRequests.isEmpty)
    }

    @Test func originNotFoundIs404() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let reply = try await harness.get("/missing.jpg", "w=10")
        expectPlainError(reply, 404)
        #expect(reply.text == "source not found\n")
        #expect(harness.origin.requestCount(path: "/missing.jpg") == 1)
        // Asked again, the origin is asked again: a 404 is not remembered as the original.
        #expect(try await harness.get("/missing.jpg", "w=10").status == 404)
        #expect(harness.origin.requestCount(path: "/missing.jpg") == 2)
    }

    @Test func tooManySourceBytesIs413() async throws {
        let harness = try await ProxyHarness.start { $0.limits.maximumSourceBytes = 100_000 }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)   // 1 MB
        expectPlainError(try await harness.get("/e.jpg", "w=10"), 413)
        // Chunked, without a Content-Length: stopped as the body passes the limit.
        expectPlainError(try await harness.request(ProxyHarness.imagePath(url: harness.origin.url("/huge?bytes=1000000&length=0").absoluteString)), 413)
    }

    @Test func tooManySourcePixelsIs413() async throws {
        let harness = try await ProxyHarness.start { $0.limits.maximumSourcePixels = 1_000_000 }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)   // 2 megapixels
        harness.origin.register("/a.gif", data: try Fixture.animatedGIF)  // 77 kilopixels
        expectPlainError(try await harness.get("/e.jpg", "w=10"), 413)
        #expect(try await harness.get("/a.gif", "w=10").status == 200)
    }

    /// The source limits are the proxy's whatever the dialect: a thumbor and an imgproxy URL of
    /// each source get `/image`'s status and message (too many bytes, announced or streamed; too
    /// many pixels), and a source within the limits is served through each.
    @Test(arguments: ["bytes", "pixels"])
    func sourceLimitsApplyThroughEveryDialect(_ limit: String) async throws {
        let harness = try await ProxyHarness.start { configuration in
            if limit == "bytes" { configuration.limits.maximumSourceBytes = 100_000 } else { configuration.limits.maximumSourcePixels = 1_000_000 }
            configuration.thumbor.allowsUnsafe = true
        }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)     // 1 MB, 2 megapixels
        harness.origin.register("/a.gif", data: try Fixture.animatedGIF)   // 86 KB, 77 kilopixels
        var cases = [("/e.jpg", 413), ("/a.gif", 200)]
        if limit == "bytes" { cases.append(("/huge?bytes=1000000&length=0", 413)) }
        for (path, status) in cases {
            let source = harness.origin.url(path).absoluteString
            let image = try await harness.request(ProxyHarness.imagePath(url: source, "w=10"))
            #expect(image.status == status, "\(limit) \(path)")
            for dialect in ["/thumbor/unsafe/10x0/" + ProxyHarness.encoded(source), "/imgproxy/insecure/w:10/" + ImgproxyURLTests.base64(source)] {
                let reply = try await harness.request(dialect)
                #expect(reply.status == status, "\(limit) \(dialect)")
                if status != 200 { expectPlainError(reply, status) }
                #expect(status == 200 || reply.text == image.text, "\(limit) \(dialect): \(reply.text)")
            }
        }
    }

    @Test func notAnImageIs415() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let reply = try await harness.get("/html", "w=10")
        expectPlainError(reply, 415)
        #expect(reply.text == "unsupported source format\n")
    }

    @Test func originFailuresAre502() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        expectPlainError(try await harness.get("/status/500", "w=10"), 502)
        expectPlainError(try await harness.get("/status/403", "w=10"), 502)
        expectPlainError(try await harness.request(ProxyHarness.imagePath(url: harness.origin.url("/reset/x.jpg?bytes=50000").absoluteString)), 502)
    }

    @Test func refusedConnectionIs502() async throws {
        let closed = try await TestOrigin.closedPort()
        let harness = try await ProxyHarness.start { $0.trustedOrigins.insert("http://127.0.0.1:\(closed)") }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request(ProxyHarness.imagePath(url: "http://127.0.0.1:\(closed)/a.jpg"))
        expectPlainError(reply, 502)
        #expect(reply.text == "origin failed\n")
    }

    /// The origin holds the response forever (its gate never opens); the proxy's download
    /// timeout, not the test, decides when to stop.
    @Test(.timeLimit(.minutes(3 * Deadlines.stretch))) func slowOriginIs504() async throws {
        let harness = try await ProxyHarness.start { $0.originTimeout = .milliseconds(300) }
        defer { Task { await harness.stop() } }
        harness.origin.register("/slow.jpg", data: try Fixture.elephants)
        _ = harness.origin.gate("/slow.jpg")
        let reply = try await harness.get("/slow.jpg", "w=10")
        expectPlainError(reply, 504)
        #expect(reply.text == "origin timed out\n")
    }

    @Test func unknownRoutesAre404() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        #expect(try await harness.request("/nothing").status == 404)
    }
}
