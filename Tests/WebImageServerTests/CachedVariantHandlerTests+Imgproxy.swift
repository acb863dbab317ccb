import Foundation
import Testing
import WebImage
@_spi(Testing) @testable import WebImageServer
import WebImageTestSupport

/// imgproxy URLs whose variant is in memory, answered on the event loop with the router's
/// headers: `Content-Disposition` (file name, attachment, the output's extension), the
/// `max-age` an `expires` allows, and the `404` of an expired URL.
extension CachedVariantHandlerTests {
    /// The same imgproxy URLs asked of a proxy that answers hits on the event loop and of one
    /// that answers everything through the router: the same statuses, bodies and headers, for
    /// `GET`, `HEAD` and a revalidation.
    @Test func imgproxyHitsAreAnsweredOnTheEventLoopAsTheRouterWould() async throws {
        let fast = try await ProxyHarness.start()
        let origin = fast.origin
        let routed = try await ProxyHarness.start(origin: origin, answersCachedVariantsOnEventLoop: false)
        defer { Task { await routed.stop(keepOrigin: true); await fast.stop() } }
        origin.register("/e.jpg", data: try Fixture.elephants)
        let source = origin.url("/e.jpg").absoluteString
        let expires = Int(Date().timeIntervalSince1970) + 3600
        let cases: [(options: String, disposition: String)] = [
            ("rs:fit:100:100", #"inline; filename="e.jpg""#),
            ("rs:fill:80:80/fn:holiday/att:1/f:webp", #"attachment; filename="holiday.webp""#),
            ("w:60/exp:\(expires)/f:png", #"inline; filename="e.png""#),
        ]
        for (options, disposition) in cases {
            let path = "/imgproxy/insecure/\(options)/plain/" + source
            for harness in [fast, routed] { #expect(try await harness.request(path).header("X-Cache") == "miss", "\(options)") }
            let answers = try await fast.eventLoopAnswers()
            let viaHandler = try await fast.request(path)
            let viaRouter = try await routed.request(path)
            #expect(try await fast.eventLoopAnswers() == answers + 1, "\(options)")
            #expect(viaHandler.status == 200 && viaHandler.body == viaRouter.body, "\(options)")
            #expect(viaHandler.header("Content-Disposition") == disposition, "\(options)")
            Self.expectSameHeaders(viaHandler, viaRouter, options)

            let headViaHandler = try await fast.request(path, method: .HEAD)
            let headViaRouter = try await routed.request(path, method: .HEAD)
            #expect(headViaHandler.status == 200 && headViaHandler.body.isEmpty)
            #expect(headViaRouter.header("Content-Length") == String(viaRouter.body.count))
            Self.expectSameHeaders(headViaHandler, headViaRouter, "HEAD \(options)")

            let etag = try #require(viaRouter.header("ETag"))
            let revalidatedViaHandler = try await fast.request(path, headers: [("If-None-Match", etag)])
            let revalidatedViaRouter = try await routed.request(path, headers: [("If-None-Match", etag)])
            #expect(revalidatedViaHandler.status == 304 && revalidatedViaRouter.status == 304)
            Self.expectSameHeaders(revalidatedViaHandler, revalidatedViaRouter, "304 \(options)")
            #expect(try await fast.eventLoopAnswers() == answers + 3, "\(options)")
        }
        #expect(try await routed.eventLoopAnswers() == 0)
    }

    /// Headers that differ between two answers for reasons other than who answered: the date,
    /// `X-Cache`, and the `max-age` of an expiring URL, counted down by the second. That is
    /// compared as the moment it ends (`Date` plus `max-age`), within a second: on a loaded
    /// machine the two requests can be seconds apart.
    static func expectSameHeaders(_ one: Reply, _ other: Reply, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let names = { (reply: Reply) in Set(reply.headers.map { $0.name.lowercased() }).subtracting(Self.varying) }
        #expect(names(one) == names(other), "\(label)", sourceLocation: sourceLocation)
        for name in names(other) where name != "cache-control" {
            #expect(one.headers[name] == other.headers[name], "\(label): \(name)", sourceLocation: sourceLocation)
        }
        let maxAge = { (reply: Reply) in reply.header("Cache-Control")?.split(separator: "=").last.flatMap { Int($0) } }
        if let mine = maxAge(one), let theirs = maxAge(other) {
            let end = { (reply: Reply, maxAge: Int) in reply.header("Date").flatMap(httpDate).map { Int($0.timeIntervalSince1970) + maxAge } }
            let (myEnd, theirEnd) = (end(one, mine), end(other, theirs))
            #expect(myEnd != nil && theirEnd != nil, "\(label): a Date header", sourceLocation: sourceLocation)
            if let myEnd, let theirEnd {
                #expect(abs(myEnd - theirEnd) <= 1, "\(label): max-age \(mine) against \(theirs)", sourceLocation: sourceLocation)
            }
        } else {
            #expect(one.header("Cache-Control") == other.header("Cache-Control"), "\(label)", sourceLocation: sourceLocation)
        }
    }

    /// An imgproxy URL is refused (`404`) from its `expires` on, however warm its variant:
    /// already expired when first asked, or answered from memory until it expired. The test
    /// waits for the expiry itself: that is the moment under test.
    @Test func expiredImgproxyURLsAre404WhenWarm() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let source = harness.origin.url("/e.jpg").absoluteString
        let path = { (options: String) in "/imgproxy/insecure/w:50/\(options)plain/" + source }
        #expect(try await harness.request(path("")).header("X-Cache") == "miss")
        #expect(try await harness.request(path("")).header("X-Cache") == "memory")
        #expect(try await harness.eventLoopAnswers() == 1)

        let past = Int(Date().timeIntervalSince1970) - 1
        let expired = try await harness.request(path("exp:\(past)/"))
        #expect(expired.status == 404 && expired.text == "the URL has expired\n")
        #expect(try await harness.eventLoopAnswers() == 1)

        let expires = Int(Date().timeIntervalSince1970) + 2 * Deadlines.stretch
        let expiring = try await harness.request(path("exp:\(expires)/"))
        #expect(expiring.status == 200 && expiring.header("X-Cache") == "memory")
        #expect(try await harness.eventLoopAnswers() == 2)
        // Past the second the URL names, by the wall clock the proxy reads.
        try await Task.sleep(until: ContinuousClock.now + .seconds(Double(expires) + 0.05 - Date().timeIntervalSince1970), clock: .continuous)
        let later = try await harness.request(path("exp:\(expires)/"))
        #expect(later.status == 404 && later.text == "the URL has expired\n")
        #expect(try await harness.eventLoopAnswers() == 2)
    }

    /// With either dialect at the root, each URL is read by the dialect whose middleware takes
    /// it, and its hits are answered on the event loop; the health checks never are.
    @Test func dialectHitsAtTheRootPrefix() async throws {
        for imgproxyAtRoot in [true, false] {
            let harness = try await ProxyHarness.start { configuration in
                configuration.thumbor.allowsUnsafe = true
                if imgproxyAtRoot { configuration.imgproxy.prefix = "/" } else { configuration.thumbor.prefix = "/" }
            }
            defer { Task { await harness.stop() } }
            harness.origin.register("/e.jpg", data: try Fixture.elephants)
            let source = harness.origin.url("/e.jpg").absoluteString
            let imgproxy = (imgproxyAtRoot ? "" : "/imgproxy") + "/insecure/w:30/plain/" + source
            let thumbor = (imgproxyAtRoot ? "/thumbor" : "") + "/unsafe/40x0/" + ProxyHarness.encoded(source)
            for path in [imgproxy, thumbor] {
                #expect(try await harness.request(path).header("X-Cache") == "miss", "\(path)")
                let hit = try await harness.request(path)
                #expect(hit.header("X-Cache") == "memory", "\(path)")
                #expect((hit.header("Content-Disposition") != nil) == (path == imgproxy), "\(path)")
            }
            #expect(try await harness.request((imgproxyAtRoot ? "" : "/imgproxy") + "/health").text == "imgproxy is running")
            #expect(try await harness.request((imgproxyAtRoot ? "/thumbor" : "") + "/healthcheck").text == "WORKING")
            #expect(try await harness.eventLoopAnswers() == 2, "imgproxy at the root: \(imgproxyAtRoot)")
        }
    }
}
