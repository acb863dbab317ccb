import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import Testing
import WebImage
import WebImageServer

/// WebImageServer as an application uses it: plain imports, no `@testable`, no SPI, so this
/// target compiles only against the public surface. A symbol an embedding application needs
/// that is not public fails the build here.
@Suite struct EmbeddingTests {
    /// The repository's demo images, served as `local:///NAME` sources.
    static let images = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Demo/images")

    static let quiet = Logger(label: "embedding") { _ in SwiftLogNoOpLogHandler() }

    /// The proxy's read of a local file (15 s by default, its queue wait included) and its work
    /// budget (120 s in a debug build) as long as the client's deadline (see `get`): safety nets,
    /// which a debug build beside the whole suite on a loaded two-core machine must not reach.
    static func allowForLoad(_ configuration: inout ImageProxy.Configuration) {
        configuration.originTimeout = .seconds(300)
        configuration.workBudget = .seconds(300)
    }

    /// The proxy's routes in the application's own router, beside a route of its own, served by
    /// the application's own Hummingbird `Application`.
    @Test func proxyRoutesInTheApplicationsRouter() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-embedding-\(UUID())")
        defer { try? FileManager.default.removeItem(at: cache) }
        var configuration = ImageProxy.Configuration(cacheDirectory: cache)
        configuration.originDirectory = Self.images
        Self.allowForLoad(&configuration)
        configuration.logger = Self.quiet
        configuration.accessLogger = Self.quiet
        let proxy = try ImageProxy(configuration: configuration)

        let router = ProxyServer(proxy: proxy).router()
        router.get("/hello") { _, _ in "hello" }
        let (ports, listening) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                listening.yield(channel.localAddress?.port ?? 0)
                listening.finish()
            },
            logger: Self.quiet)
        try await Self.serving(app, ports: ports, finish: listening) { port in
            let image = try await Self.get("http://127.0.0.1:\(port)/image?url=local%3A%2F%2F%2FSpring.png&w=100&format=png")
            #expect(image.status == 200)
            let decoded = try CoderRegistry.system().decode(image.body)
            #expect(decoded.image.width == 100 && decoded.image.height == 75)   // Spring.png is 1600×1200
            #expect(try await Self.get("http://127.0.0.1:\(port)/hello").body == Data("hello".utf8))
        }
        await proxy.shutdown()
    }

    /// The whole server as ``ProxyServer/application(host:port:logger:onListening:)`` builds it
    /// (connection limits, cached variants answered on the event loop), with signed URLs.
    @Test func proxyServerApplicationWithSignedURLs() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-embedding-\(UUID())")
        defer { try? FileManager.default.removeItem(at: cache) }
        var configuration = ImageProxy.Configuration(cacheDirectory: cache)
        configuration.originDirectory = Self.images
        Self.allowForLoad(&configuration)
        configuration.signingKey = "embedding key"
        configuration.logger = Self.quiet
        configuration.accessLogger = Self.quiet
        configuration.limits.connections.maximumConnections = 64
        let proxy = try ImageProxy(configuration: configuration)

        let server = ProxyServer(proxy: proxy)
        let (ports, listening) = AsyncStream<Int>.makeStream()
        let app = server.application(host: "127.0.0.1", port: 0, logger: Self.quiet) { port in
            listening.yield(port)
            listening.finish()
        }
        try await Self.serving(app, ports: ports, finish: listening) { port in
            let signer = URLSigner(key: "embedding key")
            let target = signer.sign("/image?url=local%3A%2F%2F%2FSpring.png&w=100&format=png")
            let signed = try await Self.get("http://127.0.0.1:\(port)\(target)")
            #expect(signed.status == 200)
            #expect(ImageFormat(sniffing: signed.body) == .png)
            let unsigned = try await Self.get("http://127.0.0.1:\(port)/image?url=local%3A%2F%2F%2FSpring.png&w=100")
            #expect(unsigned.status == ProxyError.badSignature.status)
        }
        await proxy.shutdown()
    }

    /// `HTTPClient.shared`'s configuration without its 90 s read timeout (and with the connect
    /// timeout as long as the deadline), so that only `get`'s deadline ends a request: a render
    /// that sends nothing for 90 s on a loaded machine is slow, not hung.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.timeout = .init(connect: .seconds(300), read: nil)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// Runs `app` until `body` returns, handing it the bound port.
    static func serving(
        _ app: some ApplicationProtocol, ports: AsyncStream<Int>, finish: AsyncStream<Int>.Continuation,
        _ body: (Int) async throws -> Void
    ) async throws {
        let server = Task {
            // If the server cannot start, the wait for its port ends too.
            defer { finish.finish() }
            try await app.run()
        }
        var bound: Int?
        for await port in ports { bound = port }
        defer { server.cancel() }
        let port = try #require(bound)
        try await body(port)
        server.cancel()
        _ = try? await server.value
    }

    /// The deadline only ends a hang: this target imports no test support (so no
    /// `Sanitizers.slowdown`), and under ASan, with the whole suite rendering at once on two
    /// cores, these small renders took over 60 s in CI.
    static func get(_ url: String) async throws -> (status: Int, body: Data) {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(300))
        let body = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), Data(body.readableBytesView))
    }
}
