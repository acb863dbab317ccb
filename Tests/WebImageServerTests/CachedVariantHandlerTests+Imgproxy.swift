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
            // An expiring URL's max-age counts down from `expires` by the proxy's clock, read at
            // some moment between the test's reading here and its reading after each pair.
            let start = Int(Date().timeIntervalSince1970)
            let maxAges = { () -> ClosedRange<Int>? in
                guard options.contains("exp:") else { return nil }
                return (expires - max(start, Int(Date().timeIntervalSince1970)))...(expires - start)
            }
            for harness in [fast, routed] { #expect(try await harness.request(path).header("X-Cache") == "miss", "\(options)") }
            let answers = try await fast.eventLoopAnswers()
            let viaHandler = try await fast.request(path)
            let viaRouter = try await routed.request(path)
            #expect(try await fast.eventLoopAnswers() == answers + 1, "\(options)")
            #expect(viaHandler.status == 200 && viaHandler.body == viaRouter.body, "\(options)")
            #expect(viaHandler.header("Content-Disposition") == disposition, "\(options)")
            Self.expectSameHeaders(viaHandler, viaRouter, options, maxAges: maxAges())

            let headViaHandler = try await fast.request(path, method: .HEAD)
            let headViaRouter = try await routed.request(path, method: .HEAD)
            #expect(headViaHandler.status == 200 && headViaHandler.body.isEmpty)
            #expect(headViaRouter.header("Content-Length") == String(viaRouter.body.count))
            Self.expectSameHeaders(headViaHandler, headViaRouter, "HEAD \(options)", maxAges: maxAges())

            let etag = try #require(viaRouter.header("ETag"))
            let revalidatedViaHandler = try await fast.request(path, headers: [("If-None-Match", etag)])
            let revalidatedViaRouter = try await routed.request(path, headers: [("If-None-Match", etag)])
            #expect(revalidatedViaHandler.status == 304 && revalidatedViaRouter.status == 304)
            Self.expectSameHeaders(revalidatedViaHandler, revalidatedViaRouter, "304 \(options)", maxAges: maxAges())
            #expect(try await fast.eventLoopAnswers() == answers + 3, "\(options)")
        }
        #expect(try await routed.eventLoopAnswers() == 0)
    }

    /// Headers that differ between two answers for reasons other than who answered: the date,
    /// `X-Cache`, and, with `maxAges`, the `max-age` of an expiring URL, counted down by the
    /// second from the moment each answer was made. Each of those must be in `maxAges`, what
    /// `expires` allows between the test's clock readings before and after the requests: not
    /// compared with the other answer's, nor with its own `Date` (read at another moment than
    /// the `max-age`), since on a loaded machine the moments can be seconds apart (two ends,
    /// each `Date` plus `max-age`, once differed by 2 s in a test that ran 187 s).
    static func expectSameHeaders(_ one: Reply, _ other: Reply, _ label: String, maxAges: ClosedRange<Int>? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        let names = { (reply: Reply) in Set(reply.headers.map { $0.name.lowercased() }).subtracting(Self.varying) }
        #expect(names(one) == names(other), "\(label)", sourceLocation: sourceLocation)
        for name in names(other) where name != "cache-control" || maxAges == nil {
            #expect(one.headers[name] == other.headers[name], "\(label): \(name)", sourceLocation: sourceLocation)
        }
        guard let maxAges else { return }
        for reply in [one, other] {
            let maxAge = reply.header("Cache-Control")?.split(separator: "=").last.flatMap { Int($0) }
            #expect(maxAge.map { maxAges.contains($0) } == true, "\(label): max-age \(String(describing: maxAge)) outside \(maxAges)", sourceLocation: sourceLocation)
            #expect(reply.header("Cache-Control") == maxAge.map { "public, max-age=\($0)" }, "\(label)", sourceLocation: sourceLocation)
        }
    }

    /// An imgproxy URL is refused (`404`) from its `expires` on, however warm its variant:
    /// already expired when first asked, or answered from memory until it expired. The test
    /// waits for the expiry itself: that is the moment under test. What it expects of an answer
    /// follows from its own clock readings around the request, never from how long it took.
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

        // A URL that expires seconds from now is answered from memory until then. The proxy read
        // its clock before the test's reading after the answer: when that reading is still before
        // the expiry, the answer must be the variant. On a loaded machine the request itself
        // can outlast the seconds; the test then asks again, with an expiry further off.
        var expires = 0, answers = 0
        var expiring: Reply?
        for lead in [1, 4, 16, 64].map({ $0 * Deadlines.stretch }) {
            answers = try await harness.eventLoopAnswers()
            expires = Int(Date().timeIntervalSince1970) + lead
            let reply = try await harness.request(path("exp:\(expires)/"))
            if Int(Date().timeIntervalSince1970) < expires {
                expiring = reply
                break
            }
            // The expiry came before the answer: the proxy may have read its clock before it
            // (the variant) or after it (refused).
            #expect(reply.status == 200 || reply.status == 404, "\(reply.status) \(reply.text)")
        }
        let answered = try #require(expiring, "every request took longer than its URL's lead")
        #expect(answered.status == 200 && answered.header("X-Cache") == "memory")
        #expect(try await harness.eventLoopAnswers() == answers + 1)
        // Past the second the URL names, by the wall clock the proxy reads.
        try await Task.sleep(until: ContinuousClock.now + .seconds(Double(expires) + 0.05 - Date().timeIntervalSince1970), clock: .continuous)
        let later = try await harness.request(path("exp:\(expires)/"))
        #expect(later.status == 404 && later.text == "the URL has expired\n")
        #expect(try await harness.eventLoopAnswers() == answers + 1)
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
