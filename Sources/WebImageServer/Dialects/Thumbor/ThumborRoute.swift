import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WebImageCore

/// The HTTP side of thumbor's dialect: which paths are thumbor URLs, the signature rule, and the
/// answer, through the same ``ImageProxy`` (pipeline, caches, SSRF guard, limits) as `/image`.
struct ThumborRoute: Sendable {
    /// The prefix without its trailing `/`; `""` is the root.
    let prefix: String
    let signer: ThumborSigner?
    let allowsUnsafe: Bool

    /// `nil` when the dialect is off.
    init?(_ configuration: ThumborConfiguration) {
        guard let prefix = configuration.normalizedPrefix else { return nil }
        self.prefix = prefix
        signer = configuration.key.map(ThumborSigner.init(key:))
        allowsUnsafe = configuration.allowsUnsafe
    }

    /// The proxy's own routes, which keep their meaning under the prefix `/`.
    static let ownRoutes: Set<Substring> = ["/image", "/info", "/healthz", "/metrics", "/", "/favicon.ico"]

    /// The path below the prefix (`/unsafe/…`) when `path` is thumbor's, else `nil`.
    func relativePath(_ path: Substring) -> Substring? {
        if prefix.isEmpty {
            return Self.ownRoutes.contains(path) ? nil : path
        }
        guard path.hasPrefix(prefix), path.dropFirst(prefix.count).first == "/" else { return nil }
        return path.dropFirst(prefix.count)
    }

    /// The URL at `relative` once its signature passes: `unsafe` only when allowed, a hash only
    /// when it is the key's MAC of the rest. The signature is checked before the options are
    /// read, so that without the key nothing but `403` is learnt.
    func url(_ relative: Substring, limits: ImageProxy.Limits, allowsLocal: Bool) throws(ProxyError) -> ThumborURL {
        let parts = relative.drop { $0 == "/" }.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw .badRequest("a thumbor URL is /unsafe/… or /SIGNATURE/…") }
        if parts[0] == "unsafe" {
            guard allowsUnsafe else { throw ProxyError(status: 403, message: "unsafe URLs are not allowed") }
        } else {
            // As sent: a percent-encoded signature is another spelling of the URL (see
            // ``ThumborSigner/isValid(signature:signed:)``).
            guard let signer, signer.isValid(signature: String(parts[0]), signed: String(parts[1])) else { throw .badSignature }
        }
        return try ThumborURL(path: relative, limits: limits, allowsLocal: allowsLocal)
    }
}

/// Answers thumbor's paths before the router (whose routes are exact paths), and passes every
/// other request on.
struct ThumborMiddleware: RouterMiddleware {
    typealias Context = ProxyRequestContext
    let server: ProxyServer
    let route: ThumborRoute

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head, let relative = route.relativePath(request.uri.path[...]) else {
            return try await next(request, context)
        }
        // thumbor's own health check, which its load balancers already ask.
        if relative == "/healthcheck" { return ProxyServer.text("WORKING", status: .ok) }
        let response = await server.thumborResponse(request, relative: relative, context: context)
        // As the router's own HEAD endpoints: no body, and the length the GET's would have.
        return request.method == .head ? response.createHeadResponse() : response
    }
}

extension ProxyServer {
    /// The image (or the error, or `meta/`'s JSON) a thumbor URL asks for.
    func thumborResponse(_ request: Request, relative: Substring, context: ProxyRequestContext) async -> Response {
        let configuration = proxy.configuration
        let url: ThumborURL
        do throws(ProxyError) {
            guard let route = thumbor else { throw ProxyError(status: 404, message: "not found") }
            url = try route.url(relative, limits: configuration.limits, allowsLocal: configuration.originDirectory != nil)
        } catch {
            if let detail = error.detail { context.notes.set("error", detail) }
            return Self.error(error)
        }
        guard url.isMeta else {
            return await limitedImageResponse(request, context: context) { (url.recipe, DialectHeaders(maxAge: url.maxAge)) }
        }
        return await limited(context) {
            do throws(ProxyError) {
                let source = try await proxy.sourceSize(of: url.recipe)
                let json = ThumborMeta.json(
                    url, image: url.image, width: source.width, height: source.height,
                    frames: source.frames, placeholders: source.placeholders,
                    maximumDimension: configuration.limits.maximumDimension)
                return Response(
                    status: .ok, headers: [.contentType: "application/json", .cacheControl: cacheControl],
                    body: .init(byteBuffer: ByteBuffer(bytes: json)))
            } catch {
                if let detail = error.detail { context.notes.set("error", detail) }
                return Self.error(error)
            }
        }
    }
}
