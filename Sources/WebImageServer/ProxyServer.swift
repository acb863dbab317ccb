import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import Synchronization
import WebImage

/// The request context of the proxy's routes: Hummingbird's basic context plus a place where
/// a handler leaves what the access log should say about the request.
///
/// ```swift
/// let router = Router(context: ProxyRequestContext.self)   // as ProxyServer.router() does
/// ```
public struct ProxyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let notes = RequestNotes()

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}

/// Fields a handler adds to its request's log line. A class, because contexts are copied
/// into handlers while the logging middleware keeps the original.
final class RequestNotes: Sendable {
    private let fields = Mutex<Logger.Metadata>([:])

    func set(_ key: String, _ value: String) {
        fields.withLock { $0[key] = .string(value) }
    }

    var metadata: Logger.Metadata { fields.withLock { $0 } }
}

/// The proxy's HTTP face: the routes over an ``ImageProxy``, as a Hummingbird router or a whole
/// application.
///
/// | route | answers |
/// |---|---|
/// | `GET`/`HEAD /image?url=…` | the processed image (see ``ProxyRequest``) |
/// | `GET /healthz` | `ok` |
/// | `GET /metrics` | Prometheus text format |
/// | `GET /` | the gallery of the origin folder |
///
/// ```swift
/// let proxy = try ImageProxy(configuration: configuration)
/// let app = ProxyServer(proxy: proxy).application(host: "127.0.0.1", port: 8080) { port in
///     print("listening on http://127.0.0.1:\(port)")
/// }
/// try await app.runService()   // until SIGTERM or SIGINT; requests in flight finish
/// await proxy.shutdown()
/// ```
public struct ProxyServer: Sendable {
    public let proxy: ImageProxy
    let gallery: Gallery
    /// `Cache-Control` of images, made once: for unsigned and for signed URLs.
    let cacheControl: (unsigned: String, signed: String)

    public init(proxy: ImageProxy) {
        self.proxy = proxy
        gallery = Gallery(directory: proxy.configuration.originDirectory)
        let maxAge = "public, max-age=\(proxy.configuration.maxAge)"
        cacheControl = (maxAge, maxAge + ", immutable")
    }

    /// The router with every route and the access log.
    public func router() -> Router<ProxyRequestContext> {
        let router = Router(context: ProxyRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: AccessLogMiddleware(logger: proxy.configuration.accessLogger, metrics: proxy.metrics))
        router.get("/image") { request, context in
            await imageResponse(request, context: context)
        }
        router.get("/healthz") { _, _ in
            Self.text("ok\n", status: .ok)
        }
        router.get("/metrics") { [metrics = proxy.metrics] _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        // Browsers ask for it with every page; an empty answer keeps 404s out of the log.
        router.get("/favicon.ico") { _, _ in
            Response(status: .noContent, headers: [.cacheControl: "public, max-age=86400"])
        }
        router.get("/") { [gallery, signer = proxy.signer] _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
                body: .init(byteBuffer: ByteBuffer(string: gallery.html(signer: signer))))
        }
        return router
    }

    /// A Hummingbird application serving ``router()`` on `host`:`port` (0 picks a free port);
    /// `onListening` gets the bound port once the server accepts connections.
    public func application(
        host: String, port: Int, logger: Logger? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        var serverLogger = logger ?? Logger(label: "webimage.serve.http")
        if logger == nil { serverLogger.logLevel = .warning }
        return Application(
            router: router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "swift-web-image"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: serverLogger)
    }

    /// Serves on `host`:`port` until SIGTERM or SIGINT, then stops accepting connections, lets
    /// the requests in flight finish, and shuts the proxy down (its cache writes included).
    ///
    /// - Throws: when the address cannot be bound; the proxy is shut down all the same.
    public func run(host: String, port: Int, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        var serverLogger = proxy.configuration.logger
        serverLogger.logLevel = max(serverLogger.logLevel, .warning)
        let app = application(host: host, port: port, logger: serverLogger, onListening: onListening)
        let group = ServiceGroup(configuration: .init(
            services: [
                .init(service: app),
                // Its run returns once shutdown begins: that must not cancel the application.
                .init(service: ShutdownNotice(logger: proxy.configuration.logger), successTerminationBehavior: .ignore),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: serverLogger))
        do {
            try await group.run()
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
        proxy.configuration.logger.info("stopped")
    }

    // MARK: /image

    func imageResponse(_ request: Request, context: ProxyRequestContext) async -> Response {
        let limiter = proxy.limiter
        guard limiter.tryAcquire() else {
            context.notes.set("error", "concurrency limit")
            var response = Self.error(.busy)
            response.headers[.retryAfter] = String(proxy.configuration.retryAfter)
            return response
        }
        proxy.metrics.recordInFlight(limiter.current)
        defer {
            limiter.release()
            proxy.metrics.recordInFlight(limiter.current)
        }
        do throws(ProxyError) {
            if let signer = proxy.signer, !signer.isValid(path: request.uri.path, query: request.uri.query) {
                throw ProxyError.badSignature
            }
            let parsed = try ProxyRequest(
                query: request.uri.query, limits: proxy.configuration.limits,
                allowsLocal: proxy.configuration.originDirectory != nil)
            context.notes.set("source", parsed.sourceKey)
            let acceptsWebP = FormatNegotiation.acceptsWebP(request.headers[values: .accept])
            let result = try await proxy.image(for: parsed, acceptsWebP: acceptsWebP)
            context.notes.set("cache", result.source.rawValue)
            return response(for: result, signed: proxy.signer != nil, ifNoneMatch: request.headers[values: .ifNoneMatch])
        } catch {
            if let detail = error.detail { context.notes.set("error", detail) }
            return Self.error(error)
        }
    }

    func response(for result: ImageProxy.Output, signed: Bool, ifNoneMatch: [String]) -> Response {
        let image = result.image
        var headers: HTTPFields = [
            .eTag: image.etag,
            .cacheControl: signed ? cacheControl.signed : cacheControl.unsigned,
        ]
        if result.variesOnAccept { headers[.vary] = "Accept" }
        headers[Self.xCache] = result.source.rawValue
        // The bytes are always an image the proxy encoded itself; browsers need not guess.
        headers[Self.xContentTypeOptions] = "nosniff"
        // Content-Length on a 304 too: RFC 9110 lets it carry the length the 200 would have,
        // and Hummingbird would otherwise write 0.
        headers[.contentLength] = String(image.body.readableBytes)
        if Self.matches(ifNoneMatch, etag: image.etag) {
            return Response(status: .notModified, headers: headers, body: .init())
        }
        headers[.contentType] = image.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: image.body))
    }

    static let xCache = HTTPField.Name("X-Cache")!
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!

    /// RFC 9110 §13.1.2: `*`, or any listed tag equal to ours under weak comparison.
    static func matches(_ ifNoneMatch: [String], etag: String) -> Bool {
        let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for field in ifNoneMatch {
            for item in field.split(separator: ",") {
                var tag = item.trimmingCharacters(in: .whitespaces)
                if tag == "*" { return true }
                if tag.hasPrefix("W/") { tag.removeFirst(2) }
                if tag == opaque { return true }
            }
        }
        return false
    }

    static func error(_ error: ProxyError) -> Response {
        text(error.message + "\n", status: HTTPResponse.Status(code: error.status))
    }

    static func text(_ body: String, status: HTTPResponse.Status) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

/// One log line per request, with what the handler noted, and the request metrics.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = ProxyRequestContext
    let logger: Logger
    let metrics: ProxyMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            log(request, status: status, bytes: nil, started: started, context: context, error: "\(error)")
            throw error
        }
        let bytes = response.headers[.contentLength].flatMap { Int($0) }
        log(request, status: response.status.code, bytes: request.method == .head || response.status == .notModified ? 0 : bytes, started: started, context: context, error: nil)
        return response
    }

    private func log(_ request: Request, status: Int, bytes: Int?, started: ContinuousClock.Instant, context: Context, error: String?) {
        let elapsed = ContinuousClock.now - started
        let route = Self.route(request.uri.path)
        metrics.recordRequest(route: route, status: status, duration: elapsed)
        // Load tests run at warning: then nothing below is built for nothing.
        guard logger.logLevel <= .info else { return }
        var metadata = context.notes.metadata
        metadata["method"] = .string(request.method.rawValue)
        metadata["path"] = .string(request.uri.path)
        metadata["status"] = .stringConvertible(status)
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        metadata["duration_ms"] = .stringConvertible((milliseconds * 100).rounded() / 100)
        if let bytes { metadata["bytes"] = .stringConvertible(bytes) }
        if let error { metadata["error"] = .string(error) }
        logger.info("request", metadata: metadata)
    }

    /// A fixed set of route names, so a scan of random paths cannot grow the metrics.
    static func route(_ path: String) -> String {
        switch path {
        case "/image", "/healthz", "/metrics", "/", "/favicon.ico": path
        default: "other"
        }
    }
}

/// Logs the start of a graceful shutdown: from then on no connection is accepted, and the
/// requests in flight finish.
private struct ShutdownNotice: Service {
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        logger.info("shutting down: finishing the requests in flight")
    }
}
