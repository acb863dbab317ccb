import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import Synchronization
import Tracing
import WebImage

/// The proxy's HTTP face: the routes over an ``ImageProxy``, as a Hummingbird router or a whole
/// application.
///
/// | route | answers |
/// |---|---|
/// | `GET`/`HEAD /image?url=…` | the processed image (see ``ProxyRequest``) |
/// | `GET`/`HEAD /info?url=…` | the source's dimensions, format, frames, colour space, dominant colour, ThumbHash and BlurHash, as JSON |
/// | `GET /healthz` | `ok`, and the result store's state when there is one (never a failure) |
/// | `GET /metrics` | Prometheus text format |
/// | `GET /` | the gallery of the origin folder |
///
/// ```swift
/// var configuration = ImageProxy.Configuration()
/// configuration.originDirectory = URL(fileURLWithPath: "Demo/images")
/// let proxy = try ImageProxy(configuration: configuration)
/// let app = ProxyServer(proxy: proxy).application(host: "127.0.0.1", port: 8080) { port in
///     print("listening on http://127.0.0.1:\(port)")
/// }
/// try await app.runService()   // until SIGTERM or SIGINT; requests in flight finish
/// await proxy.shutdown()
/// ```
public struct ProxyServer: Sendable {
    /// The proxy whose work the routes serve; the caller shuts it down after the server stops.
    public let proxy: ImageProxy
    /// Whether a variant held in memory is answered on the connection's event loop, from the
    /// request's bytes, before the HTTP codec and Hummingbird's router (`CachedVariantHandler`).
    /// On by default: it more than doubles the rate of cached responses. Off, every request
    /// takes the router.
    public var answersCachedVariantsOnEventLoop = true
    /// How long a graceful shutdown waits, from the signal, for the requests in flight and the
    /// proxy's own work (disk writes) to finish. A decode is bounded by the decoding limits but
    /// can still take seconds; past this the server stops without it. Default: 10 seconds.
    public var shutdownGracePeriod: Duration = .seconds(10)
    /// Services that run beside the server: started before it, and stopped after it and the
    /// requests it finishes, so that an exporter of telemetry (swift-otel's) sends the last
    /// requests' spans on a graceful shutdown. Empty by default.
    public var supportingServices: [any Service] = []
    /// The proxy's ``ImageProxy/Limits/connections``, unless the deprecated `connections` set
    /// others (Deprecations.swift).
    var connectionLimits: ConnectionLimits
    let gallery: Gallery
    /// `Cache-Control` of images: for unsigned URLs, or `immutable` too for signed ones.
    let cacheControl: String
    let accessLog: AccessLog
    /// Request targets that passed every check, with their plans: see ``recognizedRequest(target:accepted:)``.
    /// Bounded by their bytes (8 MiB; a target over 800 bytes is not kept) and their number.
    let recognizedTargets = MemoryCache<RecognizedTarget, RecognizedRequest>(configuration: .init(costLimit: 8 << 20, countLimit: 16_384, entryCostLimitFraction: 0.0001))
    /// thumbor's dialect, unless ``ImageProxy/Configuration/thumbor`` turns it off.
    let thumbor: ThumborRoute?
    /// imgproxy's dialect, unless ``ImageProxy/Configuration/imgproxy`` turns it off.
    let imgproxy: ImgproxyRoute?
    /// Whether `/image` answers requests without `sig` (``SigningPolicy``).
    let answersUnsignedImageURLs: Bool
    /// The `Server` header of every response.
    static let serverName = "swift-web-image"

    /// The routes over `proxy`, with its configuration's origin folder as the gallery at `/`.
    public init(proxy: ImageProxy) {
        self.proxy = proxy
        gallery = Gallery(directory: proxy.configuration.originDirectory, formats: proxy.decodableFormats)
        cacheControl = "public, max-age=\(proxy.configuration.maxAge)" + (proxy.signer != nil ? ", immutable" : "")
        thumbor = ThumborRoute(proxy.configuration.thumbor)
        let policy = SigningPolicy(proxy.configuration)
        imgproxy = ImgproxyRoute(proxy.configuration.imgproxy, policy: policy)
        answersUnsignedImageURLs = policy.answersUnsignedImageURLs
        accessLog = AccessLog(logger: proxy.configuration.accessLogger, metrics: proxy.metrics, thumbor: thumbor, imgproxy: imgproxy)
        connectionLimits = proxy.configuration.limits.connections
    }

    /// The router with every route and the access log, for an application that adds routes
    /// of its own or builds its own `Application`. Served this way, requests skip the
    /// connection limits and the event-loop answers of cached variants that
    /// ``application(host:port:logger:onListening:)`` adds.
    ///
    /// ```swift
    /// import Hummingbird
    ///
    /// let router = ProxyServer(proxy: proxy).router()
    /// router.get("/hello") { _, _ in "hello" }
    /// let app = Application(router: router, configuration: .init(address: .hostname("0.0.0.0", port: 8080)))
    /// try await app.runService()
    /// ```
    public func router() -> Router<ProxyRequestContext> {
        let router = Router(context: ProxyRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Outermost, so that the access log's line is written inside the request's span.
        if Self.tracesRequests { router.add(middleware: RequestSpanMiddleware { [self] in routeName(of: $0) }) }
        router.add(middleware: AccessLogMiddleware(log: accessLog))
        router.add(middleware: ForwardedClientLimitMiddleware(limits: connectionLimits))
        // A dialect at the root takes every path the other has not: it goes last.
        let thumborMiddleware = thumbor.map { ThumborMiddleware(server: self, route: $0) }
        let imgproxyMiddleware = imgproxy.map { ImgproxyMiddleware(server: self, route: $0) }
        if thumbor?.prefix.isEmpty == true {
            if let imgproxyMiddleware { router.add(middleware: imgproxyMiddleware) }
            if let thumborMiddleware { router.add(middleware: thumborMiddleware) }
        } else {
            if let thumborMiddleware { router.add(middleware: thumborMiddleware) }
            if let imgproxyMiddleware { router.add(middleware: imgproxyMiddleware) }
        }
        router.get("/image") { request, context in
            await imageResponse(request, context: context)
        }
        router.get("/info") { request, context in
            await infoResponse(request, context: context)
        }
        router.get("/healthz") { [resultStore = proxy.resultStore] _, _ in
            // The store is an optimisation: its state is reported, never a reason to fail.
            guard let resultStore else { return Self.text("ok\n", status: .ok) }
            let state = switch await resultStore.probe() {
            case .up: "up"
            case .unknown: "unknown"
            case .down(let reason): "down (\(reason))"
            }
            return Self.text("ok\nresult-store \(resultStore.location): \(state)\n", status: .ok)
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
        router.get("/") { [gallery, signer = proxy.signer, manager = proxy.manager] _, _ in
            // Each cell's placeholder, drawn until its thumbnail arrives: see Gallery+Placeholders.
            let placeholders = await gallery.placeholders(through: manager)
            return Response(
                status: .ok,
                headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
                body: .init(byteBuffer: ByteBuffer(string: gallery.html(signer: signer, placeholders: placeholders))))
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
        let limits = connectionLimits
        let open = ConcurrencyLimiter(limit: limits.maximumConnections)
        // A traced server answers every request through the router, where its span is made.
        let answersCachedVariants = answersCachedVariantsOnEventLoop && !Self.tracesRequests ? self : nil
        let server = HTTPServerBuilder { responder in
            GuardedHTTP1Channel(
                http1: HTTP1Channel(responder: responder), limits: limits, open: open, answersCachedVariants: answersCachedVariants)
        }
        return Application(
            router: router(),
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: Self.serverName),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: serverLogger)
    }

    /// Serves on `host`:`port` until SIGTERM or SIGINT, then stops accepting connections, lets
    /// the requests in flight finish, and shuts the proxy down (its cache writes included), all
    /// within ``shutdownGracePeriod``: past it, ``run(host:port:onListening:)`` returns with
    /// work still under way, which ends with the process.
    ///
    /// - Throws: when the address cannot be bound; the proxy is shut down all the same.
    public func run(host: String, port: Int, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        var serverLogger = proxy.configuration.logger
        serverLogger.logLevel = max(serverLogger.logLevel, .warning)
        let app = application(host: host, port: port, logger: serverLogger, onListening: onListening)
        try await run(app, signals: [.sigterm, .sigint], logger: serverLogger)
    }

    /// Runs `app` in a service group that shuts down gracefully on `signals` (or when told to,
    /// for tests), bounded by ``shutdownGracePeriod``.
    @_spi(Testing) public func run(
        _ app: some Service, signals: [UnixSignal], logger: Logger,
        onGroup: (ServiceGroup) -> Void = { _ in }
    ) async throws {
        let shutdown = ShutdownClock(gracePeriod: shutdownGracePeriod)
        let group = ServiceGroup(configuration: .init(
            // A group stops its services in reverse order: the supporting ones last.
            services: supportingServices.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) } + [
                .init(service: app),
                // Its run returns once shutdown begins: that must not cancel the application.
                .init(service: ShutdownNotice(logger: proxy.configuration.logger, clock: shutdown), successTerminationBehavior: .ignore),
                .init(service: MemoryReclaimer(proxy: proxy), successTerminationBehavior: .ignore),
            ],
            gracefulShutdownSignals: signals,
            logger: logger))
        onGroup(group)
        let finished: Bool
        do {
            finished = try await shutdown.bounding { try await group.run() }
        } catch {
            _ = try? await shutdown.bounding { await proxy.shutdown() }
            throw error
        }
        guard finished, try await shutdown.bounding({ await proxy.shutdown() }) else {
            proxy.configuration.logger.warning(
                "stopped with work still under way: the \(shutdownGracePeriod) grace period ran out")
            return
        }
        proxy.configuration.logger.info("stopped")
    }

    // MARK: /image

    func imageResponse(_ request: Request, context: ProxyRequestContext) async -> Response {
        await limitedImageResponse(request, context: context) { () throws(ProxyError) in
            (try imageRequest(uri: request.uri).recipe, DialectHeaders())
        }
    }

    /// The answer of an image request of any dialect, within the concurrency limit: `parse`
    /// gives its recipe and what its dialect adds to the headers.
    func limitedImageResponse(
        _ request: Request, context: ProxyRequestContext,
        parse: () throws(ProxyError) -> (RenderRecipe, DialectHeaders)
    ) async -> Response {
        await limited(context) {
            await imageResponse(request, context: context, parse: parse)
        }
    }

    /// `respond` within the concurrency limit (shared by every dialect), else `503`.
    func limited(_ context: ProxyRequestContext, _ respond: () async -> Response) async -> Response {
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
        return await respond()
    }

    private func imageResponse(
        _ request: Request, context: ProxyRequestContext,
        parse: () throws(ProxyError) -> (RenderRecipe, DialectHeaders)
    ) async -> Response {
        do throws(ProxyError) {
            let (recipe, dialectHeaders) = try parse()
            context.notes.set("source", RenderRecipe.sourceKey(recipe.source))
            context.notes.set("dialect", recipe.dialect)
            let result = try await proxy.image(for: recipe, accepted: proxy.negotiatedFormat(accept: request.headers[values: .accept]))
            context.notes.set("cache", result.cacheLabel)
            var head = responseHead(for: result, ifNoneMatch: request.headers[values: .ifNoneMatch])
            dialectHeaders.apply(to: &head, isComplete: result.isComplete, now: Date(), ceiling: proxy.configuration.maxAge)
            return Response(status: head.status, headers: head.headerFields, body: head.status == .ok ? .init(byteBuffer: result.image.body) : .init())
        } catch {
            if let detail = error.detail { context.notes.set("error", detail) }
            return Self.error(error)
        }
    }

    /// The checks and parsing every `/image` request goes through, whichever side answers it:
    /// the signature, then the parameters.
    func imageRequest(uri: URI) throws(ProxyError) -> ProxyRequest {
        try checkSignature(uri)
        return try ProxyRequest(
            query: uri.query, limits: proxy.configuration.limits,
            allowsLocal: proxy.configuration.originDirectory != nil)
    }

    /// The signature rule of the proxy's own routes (`/image`, `/info`): the key's MAC of the
    /// whole target when a key is configured, else nothing unless unsigned URLs are answered
    /// (``SigningPolicy``).
    func checkSignature(_ uri: URI) throws(ProxyError) {
        if let signer = proxy.signer {
            guard signer.isValid(path: uri.path, query: uri.query) else { throw ProxyError.badSignature }
        } else if !answersUnsignedImageURLs {
            throw ProxyError.badSignature
        }
    }

    /// A request target (`/image?…`, `/info?…`) whose checks have passed, as `CachedVariantHandler` keeps it.
    struct RecognizedTarget: Hashable, Sendable {
        var target: String
        /// What `format=auto` gives the client (``ImageProxy/negotiatedFormat(accept:)``).
        var accepted: ImageFormat?
    }

    /// What a recognized target asks for.
    struct RecognizedRequest: Sendable {
        var plan: ImageProxy.Plan
        var sourceKey: String
        /// What the URL's dialect adds to the headers (thumbor's `max_age()`, imgproxy's
        /// `expires` and `Content-Disposition`).
        var headers: DialectHeaders
        /// The path, for the access log.
        var path: String
        /// The metrics' route of the path (``AccessLog/route(for:)``).
        var route: String
        /// The answer's fields, made once per variant; `nil` when they change with the clock
        /// (an imgproxy URL with `expires`).
        var preparedHead: PreparedHead?

        init(plan: ImageProxy.Plan, sourceKey: String, headers: DialectHeaders, path: String, route: String) {
            self.plan = plan
            self.sourceKey = sourceKey
            self.headers = headers
            self.path = path
            self.route = route
            preparedHead = headers.expires == nil ? PreparedHead() : nil
        }
    }

    /// The plan of an `/image` (or `/info`) request target once every check has passed, or `nil` if one fails
    /// (the router then answers it). Targets that passed are remembered (``recognizedTargets``):
    /// the signature, the parameters and the origin's checks give the same answer for the same
    /// target as long as the process runs, and re-parsing them was most of a cached response's cost.
    func recognizedRequest(target: String, accepted: ImageFormat?) -> RecognizedRequest? {
        let key = RecognizedTarget(target: target, accepted: accepted)
        if let known = recognizedTargets.value(forKey: key) { return known }
        let uri = URI(target)
        let recognized: RecognizedRequest
        if uri.path == "/info" {
            // An /info answer is kept as a variant is, under its own key.
            guard let info = try? infoRequest(uri: uri), let infoKey = try? proxy.infoKey(for: info) else { return nil }
            let plan = ImageProxy.Plan(target: nil, key: infoKey, variesOnAccept: false)
            recognized = RecognizedRequest(
                plan: plan, sourceKey: RenderRecipe.sourceKey(info.source), headers: DialectHeaders(), path: uri.path, route: accessLog.route(for: uri.path))
        } else {
            guard let (recipe, headers) = recognizedRecipe(uri),
                  let plan = try? proxy.plan(for: recipe, accepted: accepted) else { return nil }
            recognized = RecognizedRequest(
                plan: plan, sourceKey: RenderRecipe.sourceKey(recipe.source), headers: headers, path: uri.path, route: accessLog.route(for: uri.path))
        }
        let cost = target.utf8.count + recognized.plan.key.utf8.count + recognized.sourceKey.utf8.count
            + (recognized.headers.disposition?.name.utf8.count ?? 0)
        recognizedTargets.set(recognized, forKey: key, cost: cost)
        return recognized
    }

    /// The recipe of an `/image` URL, or of a thumbor or imgproxy image URL (not `meta/` or
    /// `/info/`, not a health check), with what its dialect adds to the headers, once its
    /// checks pass; `nil` for anything else. A dialect at the root is asked last, as its
    /// middleware is.
    private func recognizedRecipe(_ uri: URI) -> (RenderRecipe, DialectHeaders)? {
        if uri.path == "/image" {
            guard let parsed = try? imageRequest(uri: uri) else { return nil }
            return (parsed.recipe, DialectHeaders())
        }
        guard uri.query == nil else { return nil }
        let path = uri.path[...], thumborFirst = thumbor?.prefix.isEmpty != true
        if thumborFirst, let relative = thumbor?.relativePath(path) { return recognizedThumbor(relative) }
        if let imgproxy, let relative = imgproxy.relativePath(path) {
            // imgproxy's /info/… is JSON reshaped for each request: the router's.
            guard relative != "/health", !relative.hasPrefix("/info/"),
                  let url = try? imgproxy.url(relative, limits: proxy.configuration.limits, allowsLocal: proxy.configuration.originDirectory != nil)
            else { return nil }
            return (url.recipe, url.headers)
        }
        if !thumborFirst, let relative = thumbor?.relativePath(path) { return recognizedThumbor(relative) }
        return nil
    }

    private func recognizedThumbor(_ relative: Substring) -> (RenderRecipe, DialectHeaders)? {
        guard let thumbor, relative != "/healthcheck",
              let url = try? thumbor.url(relative, limits: proxy.configuration.limits, allowsLocal: proxy.configuration.originDirectory != nil),
              !url.isMeta else { return nil }
        return (url.recipe, DialectHeaders(maxAge: url.maxAge))
    }

    /// Whether the request target can be a thumbor or imgproxy URL (checked fully by
    /// ``recognizedRequest(target:accepted:)``).
    func mayBeDialectURL(_ target: String) -> Bool {
        dialect(of: target) != nil
    }

    /// The dialect whose prefix `target` is under, `thumbor` or `imgproxy`; a dialect at the
    /// root takes what the other does not, as the router's order has it.
    private func dialect(of target: String) -> String? {
        // On UTF-8 bytes: String's own prefix test compares characters, which a cached
        // variant's answer (`CachedVariantHandler`) paid for on every dialect URL.
        func isUnder(_ prefix: String?) -> Bool {
            guard let prefix, !prefix.isEmpty else { return false }
            let bytes = target.utf8
            return bytes.starts(with: prefix.utf8) && bytes.dropFirst(prefix.utf8.count).first == UInt8(ascii: "/")
        }
        if isUnder(thumbor?.prefix) { return "thumbor" }
        if isUnder(imgproxy?.prefix) { return "imgproxy" }
        if thumbor?.prefix.isEmpty == true { return "thumbor" }
        if imgproxy?.prefix.isEmpty == true { return "imgproxy" }
        return nil
    }

    /// The name of the route a request target takes, for its span: a route's own path
    /// (`/image`, `/info`), a dialect's name, or `other`. Few names, whatever the targets.
    func routeName(of path: String) -> String {
        switch path {
        case "/", "/image", "/info", "/healthz", "/metrics": path
        default: dialect(of: path) ?? "other"
        }
    }

    /// Whether a tracer is bootstrapped (`InstrumentationSystem.bootstrap`), when the router is
    /// made: only then does each request get a span.
    static var tracesRequests: Bool { !(InstrumentationSystem.tracer is NoOpTracer) }

    /// The status and headers of an image: `200`, or `304` when `ifNoneMatch` matches (the body
    /// is the image's on a `200` only). Without `Date` and `Server`, which the sender adds.
    func responseHead(for result: ImageProxy.Output, ifNoneMatch: [String]) -> HTTPResponse {
        let image = result.image
        var headers: HTTPFields = [
            .eTag: image.etag,
            .cacheControl: result.isComplete ? cacheControl : "no-store",
        ]
        if result.variesOnAccept { headers[.vary] = "Accept" }
        headers[Self.xCache] = result.cacheLabel
        // The bytes are always an image the proxy encoded itself; browsers need not guess.
        headers[Self.xContentTypeOptions] = "nosniff"
        // Content-Length on a 304 too: RFC 9110 lets it carry the length the 200 would have,
        // and Hummingbird would otherwise write 0.
        headers[.contentLength] = String(image.body.readableBytes)
        if Self.matches(ifNoneMatch, etag: image.etag) {
            return HTTPResponse(status: .notModified, headerFields: headers)
        }
        headers[.contentType] = image.contentType
        return HTTPResponse(status: .ok, headerFields: headers)
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
