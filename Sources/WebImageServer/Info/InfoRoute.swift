import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

extension ProxyServer {
    /// `GET`/`HEAD /info?url=…`: the source's ``SourceInfo`` as JSON, within the concurrency
    /// limit, answered as an image is: signed the same way (the signature covers `/info` and its
    /// query, so a signed `/image` URL is no `/info` URL), `ETag`, `304` for a matching
    /// `If-None-Match`, `Cache-Control`, `X-Cache`; the errors of `/image`, as plain text.
    func infoResponse(_ request: Request, context: ProxyRequestContext) async -> Response {
        await limited(context) {
            do throws(ProxyError) {
                let info = try infoRequest(uri: request.uri)
                context.notes.set("source", RenderRecipe.sourceKey(info.source))
                context.notes.set("dialect", "info")
                let output = try await proxy.info(for: info)
                context.notes.set("cache", output.cacheLabel)
                let head = responseHead(for: output, ifNoneMatch: request.headers[values: .ifNoneMatch])
                return Response(status: head.status, headers: head.headerFields, body: head.status == .ok ? .init(byteBuffer: output.image.body) : .init())
            } catch {
                if let detail = error.detail { context.notes.set("error", detail) }
                return Self.error(error)
            }
        }
    }

    /// The checks and parsing every `/info` request goes through, whichever side answers it:
    /// the signature (as `/image`'s: ``checkSignature(_:)``), then the parameters.
    func infoRequest(uri: URI) throws(ProxyError) -> InfoRequest {
        try checkSignature(uri)
        return try InfoRequest(query: uri.query, allowsLocal: proxy.configuration.originDirectory != nil)
    }
}
