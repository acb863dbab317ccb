import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WebImageCore

/// The HTTP side of imgproxy's dialect: which paths are imgproxy URLs, the signature rule, and
/// the answer, through the same ``ImageProxy`` (pipeline, caches, SSRF guard, limits) as `/image`.
struct ImgproxyRoute: Sendable {
    /// The prefix without its trailing `/`; `""` is the root.
    let prefix: String
    /// Whether URLs must carry the key's signature: when the dialect has a key, or another
    /// dialect has one and this one was not opened (``SigningPolicy``).
    let requiresSignature: Bool
    /// `nil` with a key when the key or salt is not hex: then nothing validates.
    let signer: ImgproxySigner?
    let presets: [String: String]
    /// The configured watermark's digest and base opacity, for `wm`; `nil` when none is configured.
    let watermark: (digest: String, opacity: Double)?

    /// `nil` when the dialect is off.
    init?(_ configuration: ImgproxyConfiguration, policy: SigningPolicy) {
        guard let prefix = configuration.normalizedPrefix else { return nil }
        self.prefix = prefix
        requiresSignature = !policy.answersUnsignedImgproxyURLs
        signer = configuration.key.flatMap { ImgproxySigner(key: $0, salt: configuration.salt ?? "", signatureSize: configuration.signatureSize) }
        presets = configuration.presets
        watermark = configuration.watermarkDigest.map { ($0, configuration.watermarkOpacity) }
    }

    /// The path below the prefix (`/insecure/…`) when `path` is imgproxy's, else `nil`.
    func relativePath(_ path: Substring) -> Substring? {
        if prefix.isEmpty {
            return ThumborRoute.ownRoutes.contains(path) ? nil : path
        }
        guard path.hasPrefix(prefix), path.dropFirst(prefix.count).first == "/" else { return nil }
        return path.dropFirst(prefix.count)
    }

    /// The URL at `relative` once its signature passes: any signature when unsigned URLs are
    /// answered (imgproxy's `insecure`), else the key's MAC of the rest (none without a key). The signature is checked before the options
    /// are read, so that without the key nothing but `403` is learnt.
    func url(_ relative: Substring, limits: ImageProxy.Limits, allowsLocal: Bool, now: Date = Date()) throws(ProxyError) -> ImgproxyURL {
        try checkSignature(relative, form: "/SIGNATURE/OPTIONS/SOURCE")
        return try ImgproxyURL(path: relative, presets: presets, limits: limits, allowsLocal: allowsLocal, watermark: watermark, now: now)
    }

    /// The info URL at `relative`, the path after `/info`, once its signature passes: signed
    /// as imgproxy signs info URLs, the path after the signature (without `/info`), exactly as a
    /// processing URL is.
    func infoURL(_ relative: Substring, allowsLocal: Bool, now: Date = Date()) throws(ProxyError) -> ImgproxyInfoURL {
        try checkSignature(relative, form: "/info/SIGNATURE/OPTIONS/SOURCE")
        return try ImgproxyInfoURL(path: relative, allowsLocal: allowsLocal, now: now)
    }

    /// Refuses `relative` (`/SIGNATURE/…`) unless its signature is the key's MAC of the rest,
    /// when URLs must be signed; `form` names the URL's shape in the error.
    private func checkSignature(_ relative: Substring, form: String) throws(ProxyError) {
        let parts = relative.drop { $0 == "/" }.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw .badRequest("an imgproxy URL is \(form)") }
        if requiresSignature {
            guard let signer, signer.isValid(signature: String(parts[0]), path: "/" + parts[1]) else { throw .badSignature }
        }
    }

    /// imgproxy's info endpoint below the prefix.
    static let infoPrefix = "/info/"
}

/// Answers imgproxy's paths before the router (whose routes are exact paths), and passes every
/// other request on.
struct ImgproxyMiddleware: RouterMiddleware {
    typealias Context = ProxyRequestContext
    let server: ProxyServer
    let route: ImgproxyRoute

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path[...]
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        // imgproxy's health check, which its load balancers already ask (also at /health when
        // the dialect is at the root).
        if path == route.prefix + "/health" { return ProxyServer.text("imgproxy is running", status: .ok) }
        guard let relative = route.relativePath(path) else { return try await next(request, context) }
        let response: Response
        if relative.hasPrefix(ImgproxyRoute.infoPrefix) {
            // imgproxy's info endpoint: the path after `/info`, from its `/`.
            response = await server.imgproxyInfoResponse(request, relative: relative.dropFirst(ImgproxyRoute.infoPrefix.count - 1), context: context)
        } else {
            response = await server.imgproxyResponse(request, relative: relative, context: context)
        }
        // As the router's own HEAD endpoints: no body, and the length the GET's would have.
        return request.method == .head ? response.createHeadResponse() : response
    }
}

extension ProxyServer {
    /// The image (or the error) an imgproxy URL asks for.
    func imgproxyResponse(_ request: Request, relative: Substring, context: ProxyRequestContext) async -> Response {
        let configuration = proxy.configuration
        let url: ImgproxyURL
        do throws(ProxyError) {
            guard let route = imgproxy else { throw ProxyError(status: 404, message: "not found") }
            url = try route.url(relative, limits: configuration.limits, allowsLocal: configuration.originDirectory != nil)
        } catch {
            if let detail = error.detail { context.notes.set("error", detail) }
            return Self.error(error)
        }
        // As imgproxy, every image says how to save it; an expiring URL is not kept past its expiry.
        return await limitedImageResponse(request, context: context) { (url.recipe, url.headers) }
    }

    /// The JSON (or the error) an imgproxy info URL asks for: `/info`'s facts, cached as
    /// `/info` keeps them, reshaped as imgproxy answers them, with their own `ETag`.
    func imgproxyInfoResponse(_ request: Request, relative: Substring, context: ProxyRequestContext) async -> Response {
        await limited(context) {
            do throws(ProxyError) {
                guard let route = imgproxy else { throw ProxyError(status: 404, message: "not found") }
                let url = try route.infoURL(relative, allowsLocal: proxy.configuration.originDirectory != nil)
                context.notes.set("source", RenderRecipe.sourceKey(url.request.source))
                context.notes.set("dialect", "imgproxy-info")
                var output = try await proxy.info(for: url.request)
                context.notes.set("cache", output.cacheLabel)
                guard let facts = try? SourceInfo(json: output.image.data) else {
                    throw ProxyError(status: 500, message: "internal error", detail: "an /info answer that does not read back")
                }
                output.image = EncodedImage(data: url.json(facts), contentType: ImageProxy.jsonContentType)
                var head = responseHead(for: output, ifNoneMatch: request.headers[values: .ifNoneMatch])
                url.headers.apply(to: &head, isComplete: output.isComplete, now: Date(), ceiling: proxy.configuration.maxAge)
                return Response(status: head.status, headers: head.headerFields, body: head.status == .ok ? .init(byteBuffer: output.image.body) : .init())
            } catch {
                if let detail = error.detail { context.notes.set("error", detail) }
                return Self.error(error)
            }
        }
    }
}
