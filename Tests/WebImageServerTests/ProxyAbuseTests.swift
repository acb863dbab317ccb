import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// What an anonymous client could do to the proxy with one small request, each bounded now.
/// Each test has a time limit, so that a bound that stopped working fails the test instead of
/// hanging the suite (a limit of minutes: it bounds, it does not time).
@Suite(.timeLimit(.minutes(3 * Deadlines.stretch))) struct ProxyAbuseTests {
    /// A 147 KB animated WebP, a 4096×4096 canvas with 3,000 one-pixel frames, asked for as a
    /// 64 px thumbnail: 50 billion canvas pixels to compose. Refused before the first frame
    /// (413), while requests sent beside it are answered.
    @Test func anAnimationBombIsRefusedByItsWorkWhileOtherRequestsAreAnswered() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/bomb.webp", data: AnimatedWebPBuilder.file(width: 4096, height: 4096, frameCount: 3000))
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        async let bomb = harness.get("/bomb.webp", "w=64&h=64")
        async let others = withThrowingTaskGroup(of: Int.self) { group in
            for width in [10, 20, 30, 40] {
                group.addTask { try await harness.get("/e.jpg", "w=\(width)").status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let reply = try await bomb
        #expect(reply.status == 413)
        #expect(reply.text == "source image too large\n")
        #expect(try await others == [200, 200, 200, 200])
        // Asked again, refused again, never cached as anything else.
        #expect(try await harness.get("/bomb.webp", "w=64&h=64").status == 413)
    }

    /// A JPEG cut short is answered (as browsers show it, the missing rows grey) but never kept
    /// as if whole: each request makes it again, and caches are told not to keep it.
    @Test func aPartialImageIsAnsweredButNeverCached() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let elephants = try Fixture.elephants
        harness.origin.register("/cut.jpg", data: elephants.prefix(elephants.count / 2))
        harness.origin.register("/e.jpg", data: elephants)
        for _ in 0..<2 {
            let reply = try await harness.get("/cut.jpg", "w=100")
            #expect(reply.status == 200)
            #expect(reply.header("Cache-Control") == "no-store")
            #expect(reply.header("X-Cache") == "miss")
        }
        // The whole file is kept: its second answer comes from memory.
        #expect(try await harness.get("/e.jpg", "w=100").header("X-Cache") == "miss")
        let again = try await harness.get("/e.jpg", "w=100")
        #expect(again.header("X-Cache") == "memory")
        #expect(again.header("Cache-Control")?.hasPrefix("public") == true)
    }

    /// Hundreds of thousands of 1×1 frames (9.6 MB, under the source limit): refused by count
    /// before libwebp is asked for any frame.
    @Test func hundredsOfThousandsOfFramesAreRefused() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/frames.webp", data: AnimatedWebPBuilder.file(width: 1, height: 1, frameCount: 200_000))
        let reply = try await harness.get("/frames.webp", "w=64")
        #expect(reply.status == 413)
    }
}

/// A decoder held at a gate: a decode that runs as long as a test needs. A stand-in, because
/// no real decode within the limits can be made to outlast a grace period on demand (that the
/// limits prevent exactly this is the point); decoding itself is the system decoder's.
final class GatedDecoder: ImageDecoder {
    let base: any ImageDecoder
    private let gate = DispatchSemaphore(value: 0)
    private let state = Mutex((entered: false, finished: false))

    init(_ base: any ImageDecoder) { self.base = base }

    var formats: Set<ImageFormat> { base.formats }
    var entered: Bool { state.withLock { $0.entered } }
    var finished: Bool { state.withLock { $0.finished } }

    func open() { gate.signal() }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        state.withLock { $0.entered = true }
        gate.wait()
        gate.signal()  // open for good
        defer { state.withLock { $0.finished = true } }
        return try base.decode(data, options: options)
    }
}

@Suite(.timeLimit(.minutes(3 * Deadlines.stretch))) struct ProxyShutdownTests {
    /// SIGTERM's graceful shutdown with a decode that does not finish: the server stops once
    /// its grace period has passed, without the decode.
    @Test func gracefulShutdownWaitsNoLongerThanItsGracePeriod() async throws {
        let origin = try await TestOrigin.start()
        origin.register("/e.jpg", data: try Fixture.elephants)
        let directory = TemporaryDirectory("shutdown")
        defer { directory.remove() }
        let registry = CoderRegistry.system()
        let gated = GatedDecoder(try #require(registry.decoder(for: .jpeg)))
        registry.register(gated)
        var configuration = ImageProxy.Configuration(cacheDirectory: directory.url)
        configuration.registry = registry
        configuration.trustedOrigins = ["http://127.0.0.1:\(origin.port)"]
        let quiet = Logger(label: "test.shutdown") { _ in SwiftLogNoOpLogHandler() }
        configuration.logger = quiet
        configuration.accessLogger = quiet
        var server = ProxyServer(proxy: try ImageProxy(configuration: configuration))
        server.shutdownGracePeriod = .milliseconds(300)

        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = server.application(host: "127.0.0.1", port: 0, logger: quiet) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        let groups = Mutex<ServiceGroup?>(nil)
        let running = Task { [server] in
            try await server.run(app, signals: [], logger: quiet) { group in groups.withLock { $0 = group } }
        }
        var port = 0
        for await bound in ports { port = bound }
        let url = "http://127.0.0.1:\(port)" + ProxyHarness.imagePath(url: origin.url("/e.jpg").absoluteString, "w=10")
        let request = Task { try await HTTPClient.tests.execute(HTTPClientRequest(url: url), timeout: .seconds(120)) }
        #expect(await yieldUntil { gated.entered })

        // A bound on a broken shutdown, so that it fails instead of hanging: the gate opens by
        // itself after a minute (stretched: a shutdown that a loaded machine delays past it would
        // let the decode finish, and fail the test for nothing).
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60 * Deadlines.stretch))
            gated.open()
        }
        await groups.withLock { $0 }?.triggerGracefulShutdown()
        try await running.value
        #expect(!gated.finished, "the server waited for the decode")
        gated.open()
        watchdog.cancel()
        _ = try? await request.value
        try await origin.shutdown()
    }
}
