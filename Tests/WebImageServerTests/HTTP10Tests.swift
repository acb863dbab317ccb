import Foundation
import Testing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// HTTP/1.0 clients get HTTP/1.0 answers, a close when they did not ask for keep-alive, and
/// `Connection: keep-alive` when they did: from the router and from the event-loop answers.
@Suite(.timeLimit(.minutes(1 * Deadlines.stretch))) struct HTTP10Tests {
    /// `/healthz` (the router) and a cached `/image` variant (``CachedVariantHandler``).
    func targets(_ harness: ProxyHarness) async throws -> [String] {
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let image = harness.imagePath("/e.jpg", "w=60")
        #expect(try await harness.request(image).status == 200)
        return ["/healthz", image]
    }

    @Test func aPlainHTTP10RequestIsAnsweredInHTTP10AndClosed() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        for target in try await targets(harness) {
            try await RawHTTPConnection.with(port: harness.port) { connection in
                try await connection.send(["GET \(target) HTTP/1.0"])
                let answer = try await connection.response()
                #expect(answer.version == "HTTP/1.0" && answer.status == 200, "\(target)")
                #expect(answer.header("Connection")?.lowercased() == "close", "\(target)")
                #expect(try await connection.isClosedByServer(), "\(target)")
            }
        }
        #expect(try await harness.eventLoopAnswers() == 1)
    }

    @Test func anHTTP10KeepAliveRequestIsAcknowledgedAndKeptOpen() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let targets = try await targets(harness)
        try await RawHTTPConnection.with(port: harness.port) { connection in
            // Twice over the same connection: it stays open between the answers.
            for target in targets + targets {
                try await connection.send(["GET \(target) HTTP/1.0\r\nConnection: keep-alive"])
                let answer = try await connection.response()
                #expect(answer.version == "HTTP/1.0" && answer.status == 200, "\(target)")
                #expect(answer.header("Connection")?.lowercased() == "keep-alive", "\(target)")
            }
            // The last request did not ask for keep-alive: the connection ends with its answer.
            try await connection.send(["GET /healthz HTTP/1.0"])
            #expect(try await connection.response().status == 200)
            #expect(try await connection.isClosedByServer())
        }
        #expect(try await harness.eventLoopAnswers() == 2)
    }

    @Test func http11IsStillAnsweredInHTTP11AndKeptOpen() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let targets = try await targets(harness)
        try await RawHTTPConnection.with(port: harness.port) { connection in
            for target in targets + targets {
                try await connection.send(["GET \(target) HTTP/1.1"])
                let answer = try await connection.response()
                #expect(answer.version == "HTTP/1.1" && answer.status == 200, "\(target)")
                #expect(answer.header("Connection") == nil, "\(target)")
            }
        }
    }

    /// ApacheBench speaks HTTP/1.0 and, without `-k`, reads each answer until the server closes;
    /// with `-k` it reuses a connection only when the answer says `Connection: keep-alive`.
    @Test(.enabled(if: Requirement.met(ApacheBench.executable != nil), "ab is not installed (make test installs apache2-utils)"))
    func apacheBenchCompletesWithAndWithoutKeepAlive() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let image = harness.imagePath("/e.jpg", "w=60")
        // ab sends Accept: */*; warm the variant it will ask for.
        #expect(try await harness.request(image, headers: [("Accept", "*/*")]).status == 200)
        let ab = try #require(ApacheBench.executable)
        for target in ["/healthz", image] {
            for keepAlive in [false, true] {
                let run = try await ApacheBench.run(ab, url: "http://127.0.0.1:\(harness.port)\(target)", keepAlive: keepAlive)
                #expect(run.status == 0, "\(target) -k \(keepAlive): \(run.output)")
                #expect(run.field("Complete requests") == 200, "\(target) -k \(keepAlive): \(run.output)")
                #expect(run.field("Failed requests") == 0, "\(target) -k \(keepAlive): \(run.output)")
                #expect(run.field("Non-2xx responses") == nil, "\(target) -k \(keepAlive): \(run.output)")
                // Without -k ab says nothing of keep-alive; with it, every request reused a
                // connection or opened one that was kept.
                #expect(run.field("Keep-Alive requests") == (keepAlive ? 200 : nil), "\(target) -k \(keepAlive): \(run.output)")
            }
        }
        // The cached variant was answered on the event loop, in HTTP/1.0 too.
        #expect(try await harness.eventLoopAnswers() > 0)
    }
}

/// ApacheBench (`ab`, Debian's apache2-utils), run as a process without blocking a thread.
enum ApacheBench {
    static let executable: URL? = ["/usr/bin/ab", "/usr/sbin/ab", "/usr/local/bin/ab"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
        .map(URL.init(fileURLWithPath:))

    struct Run {
        var status: Int32
        var output: String

        /// The number on ab's report line `name: N`, or `nil` when ab did not print the line.
        func field(_ name: String) -> Int? {
            let line = output.split(separator: "\n").first { $0.hasPrefix(name + ":") }
            return line.flatMap { Int($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).prefix { $0.isNumber }) }
        }
    }

    /// 200 requests, 4 at a time, each allowed 10 seconds.
    static func run(_ executable: URL, url: String, keepAlive: Bool) async throws -> Run {
        let process = SpawnedProcess()
        process.executableURL = executable
        process.arguments = ["-q", "-n", "200", "-c", "4", "-s", "10"] + (keepAlive ? ["-k"] : []) + [url]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        var launchError: (any Error)?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                launchError = error
                continuation.resume()
            }
        }
        if let launchError { throw launchError }
        // ab's report is a few kilobytes: the pipe held it all while it ran.
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Run(status: process.terminationStatus, output: output)
    }
}
