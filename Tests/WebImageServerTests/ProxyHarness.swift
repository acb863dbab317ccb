import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// Files the proxy tests serve.
enum Fixture {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let demoImages = repository.appendingPathComponent("Demo/images")
    static let fixtures = repository.appendingPathComponent("Tests/Fixtures")

    /// A 1920×1080 progressive JPEG.
    static var elephants: Data { get throws { try Data(contentsOf: demoImages.appendingPathComponent("elephants-1920x1080-progressive.jpg")) } }
    /// A 320×240 animated GIF.
    static var animatedGIF: Data { get throws { try Data(contentsOf: demoImages.appendingPathComponent("chi-animated.gif")) } }
    /// A 1600×1200 PNG with alpha.
    static var png: Data { get throws { try Data(contentsOf: demoImages.appendingPathComponent("Spring.png")) } }
}

/// The system decoders, each wrapped to count its decodes: how the tests see that a repeated
/// variant never reaches the decoder. Decoding itself is untouched.
final class CountingDecoder: ImageDecoder {
    let base: any ImageDecoder
    private let decodes = Mutex(0)

    init(_ base: any ImageDecoder) { self.base = base }

    var formats: Set<ImageFormat> { base.formats }
    var count: Int { decodes.withLock { $0 } }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        decodes.withLock { $0 += 1 }
        return try base.decode(data, options: options)
    }
}

/// What the proxy answered.
struct Reply: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: Data

    func header(_ name: String) -> String? { headers.first(name: name) }
    var text: String { String(decoding: body, as: UTF8.self) }
    var format: ImageFormat? { ImageFormat(sniffing: body) }
    func decoded() throws -> ImageContainer { try CoderRegistry.system().decode(body) }
}

/// A proxy on an ephemeral loopback port, in this process, in front of a ``TestOrigin``, and
/// a client to talk to it over real HTTP.
///
/// The origin is the proxy's one trusted origin (`http://127.0.0.1:ORIGIN_PORT`): reachable
/// although it is on loopback, while every other loopback target stays refused.
final class ProxyHarness: Sendable {
    let origin: TestOrigin
    let proxy: ImageProxy
    let port: Int
    let cacheDirectory: TemporaryDirectory
    let decoders: [CountingDecoder]
    private let server: Task<Void, any Error>

    private init(origin: TestOrigin, proxy: ImageProxy, port: Int, cacheDirectory: TemporaryDirectory, decoders: [CountingDecoder], server: Task<Void, any Error>) {
        self.origin = origin
        self.proxy = proxy
        self.port = port
        self.cacheDirectory = cacheDirectory
        self.decoders = decoders
        self.server = server
    }

    /// Starts an origin (unless given one) and a proxy over a fresh cache folder (unless
    /// given one); `configure` adjusts the proxy's configuration.
    static func start(
        origin existing: TestOrigin? = nil,
        cacheDirectory: TemporaryDirectory? = nil,
        answersCachedVariantsOnEventLoop: Bool = true,
        connections: ConnectionLimits = ConnectionLimits(),
        configure: (inout ImageProxy.Configuration) -> Void = { _ in }
    ) async throws -> ProxyHarness {
        let origin: TestOrigin
        if let existing { origin = existing } else { origin = try await TestOrigin.start() }
        let directory = cacheDirectory ?? TemporaryDirectory("proxy")
        let system = CoderRegistry.system()
        let registry = CoderRegistry.system()
        var decoders: [CountingDecoder] = []
        for format in [ImageFormat.jpeg, .png, .gif, .webp] {
            guard let decoder = system.decoder(for: format), !decoders.contains(where: { $0.base.formats == decoder.formats }) else { continue }
            let counting = CountingDecoder(decoder)
            decoders.append(counting)
            registry.register(counting)
        }
        var configuration = ImageProxy.Configuration(cacheDirectory: directory.url)
        configuration.registry = registry
        configuration.trustedOrigins = ["http://127.0.0.1:\(origin.port)"]
        // The proxy's own wait for an origin is a safety net as long as the client's deadline
        // (15 s by default). At 15 s × stretch (45 s), a gated or starved download on a loaded
        // two-core machine ran out and the tests saw 504s where they expected a 503 or a 200;
        // the tests of the origin timeout set their own.
        configuration.originTimeout = .seconds(60 * Deadlines.stretch)
        configuration.accessLogger = Logger(label: "test.access") { _ in SwiftLogNoOpLogHandler() }
        configuration.logger = Logger(label: "test.proxy") { _ in SwiftLogNoOpLogHandler() }
        // A debug build under load decodes many times slower than the release build the default
        // budget is for; the tests of the budget set their own.
        configuration.workBudget = .seconds(120 * Deadlines.stretch)
        // Decoded images stay until evicted: a loaded CI machine took more than the default ten
        // seconds between two requests of one test that counts decodes; the test of the
        // lifetime sets its own.
        configuration.imageMemoryLifetime = nil
        configuration.limits.connections = connections
        configure(&configuration)
        let proxy = try ImageProxy(configuration: configuration)

        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var proxyServer = ProxyServer(proxy: proxy)
        proxyServer.answersCachedVariantsOnEventLoop = answersCachedVariantsOnEventLoop
        let app = proxyServer.application(host: "127.0.0.1", port: 0, logger: Logger(label: "test.http") { _ in SwiftLogNoOpLogHandler() }) { port in
            continuation.yield(port)
            continuation.finish()
        }
        let server = Task {
            // If the server cannot start, the wait for its port ends too.
            defer { continuation.finish() }
            try await app.run()
        }
        var bound: Int?
        for await port in ports { bound = port }
        guard let bound else {
            server.cancel()
            throw CancellationError()
        }
        return ProxyHarness(origin: origin, proxy: proxy, port: bound, cacheDirectory: directory, decoders: decoders, server: server)
    }

    /// Stops the proxy (and the origin unless `keepOrigin`), and removes the cache folder unless
    /// `keepCache`.
    func stop(keepOrigin: Bool = false, keepCache: Bool = false) async {
        server.cancel()
        _ = try? await server.value
        await proxy.shutdown()
        if !keepOrigin { try? await origin.shutdown() }
        if !keepCache { cacheDirectory.remove() }
    }

    /// Cached variants answered on the event loop so far (``CachedVariantHandler``), from `/metrics`.
    func eventLoopAnswers() async throws -> Int {
        let text = try await request("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix("webimage_proxy_event_loop_answers_total ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// Decodes so far, over every format.
    var decodeCount: Int { decoders.reduce(0) { $0 + $1.count } }

    /// `/image?url=<origin path, percent-encoded>&<parameters>`.
    func imagePath(_ originPath: String, _ parameters: String = "") -> String {
        Self.imagePath(url: origin.url(originPath).absoluteString, parameters)
    }

    static func imagePath(url: String, _ parameters: String = "") -> String {
        "/image?url=" + encoded(url) + (parameters.isEmpty ? "" : "&" + parameters)
    }

    static func encoded(_ text: String) -> String {
        percentEncoded(text)
    }

    /// Sends `method` to `pathAndQuery` on the proxy and reads the whole answer.
    func request(_ pathAndQuery: String, method: HTTPMethod = .GET, headers: [(String, String)] = [], timeout: TimeAmount = .seconds(60 * Int64(Deadlines.stretch))) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(pathAndQuery)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.tests.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: 64 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
    }

    /// `GET` of an origin path through the proxy.
    func get(_ originPath: String, _ parameters: String = "", headers: [(String, String)] = []) async throws -> Reply {
        try await request(imagePath(originPath, parameters), headers: headers)
    }
}
