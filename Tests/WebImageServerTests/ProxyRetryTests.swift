import Foundation
import Logging
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// The proxy's origin fetches ride out an origin that fails for a moment: retried inside the
/// pipeline's one download, logged on the request's access log line and counted by reason.
@Suite("Proxy origin retries")
struct ProxyRetryTests {
    /// A proxy whose access log lines are kept, with short waits between attempts.
    static func harness(lines: RecordedLines, policy: RetryPolicy = RetryPolicy(baseDelay: .milliseconds(10))) async throws -> ProxyHarness {
        try await ProxyHarness.start {
            var logger = Logger(label: "test.access") { _ in RecordingLogHandler(lines: lines) }
            logger.logLevel = .info
            $0.accessLogger = logger
            $0.originRetryPolicy = policy
        }
    }

    @Test("an origin that answered 503 twice: the proxy answers 200 (it answered 502), and its log line shows the retries")
    func recoversFromTwo503s() async throws {
        let lines = RecordedLines()
        let harness = try await Self.harness(lines: lines)
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let reply = try await harness.get("/flaky/e.jpg?fail=2", "w=60")
        #expect(reply.status == 200)
        #expect(reply.header("X-Cache") == "miss")
        #expect(try reply.decoded().image.width == 60)
        #expect(harness.origin.requestCount(path: "/flaky/e.jpg") == 3)

        let logged = lines.all.filter { $0["path"] == "/image" }
        #expect(logged.count == 1)
        #expect(logged.first?["origin_retries"] == "2")
        #expect(logged.first?["status"] == "200")
        let metrics = try await harness.request("/metrics").text
        #expect(metrics.contains(#"webimage_retries_total{reason="http_503"} 2"#))

        // The variant is cached now: its next request fetches nothing, and logs no retries.
        _ = try await harness.get("/flaky/e.jpg?fail=2", "w=60")
        #expect(harness.origin.requestCount(path: "/flaky/e.jpg") == 3)
        #expect(lines.all.filter { $0["path"] == "/image" }.last?["origin_retries"] == nil)
    }

    @Test("an origin that keeps failing is answered 502 after the last attempt; the log line shows the retries made")
    func givesUpAfterTheLastAttempt() async throws {
        let lines = RecordedLines()
        let harness = try await Self.harness(lines: lines)
        defer { Task { await harness.stop() } }
        let reply = try await harness.get("/flaky/f.jpg?fail=100&status=504", "w=60")
        #expect(reply.status == 502)
        #expect(harness.origin.requestCount(path: "/flaky/f.jpg") == 3)
        #expect(lines.all.first { $0["path"] == "/image" }?["origin_retries"] == "2")
    }

    @Test("with RetryPolicy.never the first failure is the answer, and the log line has no retries")
    func noRetries() async throws {
        let lines = RecordedLines()
        let harness = try await Self.harness(lines: lines, policy: .never)
        defer { Task { await harness.stop() } }
        harness.origin.register("/g.jpg", data: try Fixture.elephants)
        let reply = try await harness.get("/flaky/g.jpg?fail=1", "w=60")
        #expect(reply.status == 502)
        #expect(harness.origin.requestCount(path: "/flaky/g.jpg") == 1)
        let line = lines.all.first { $0["path"] == "/image" }
        #expect(line?["status"] == "502")
        #expect(line?["origin_retries"] == nil)
    }
}
