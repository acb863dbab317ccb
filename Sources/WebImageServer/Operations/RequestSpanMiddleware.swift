import HTTPTypes
import Hummingbird
import Tracing

/// A server span for each request the router answers, continuing the trace of an incoming W3C
/// `traceparent`/`tracestate` (as the bootstrapped instrument reads them): the pipeline's stage
/// spans and the origin's `traceparent` are its descendants. Added by ``ProxyServer/router()``
/// only when a tracer is bootstrapped; without one the router has no such middleware at all.
///
/// The span is named by the route the request took (`GET /image`, `GET thumbor`,
/// `GET imgproxy`), never by its path, so that the names stay few; it ends when the response's
/// body has been written.
struct RequestSpanMiddleware: RouterMiddleware {
    typealias Context = ProxyRequestContext
    /// The route's name for a request target: ``ProxyServer/routeName(of:)``.
    let routeName: @Sendable (String) -> String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var parent = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: FieldsExtractor())
        let span = startSpan("\(request.method.rawValue) \(routeName(request.uri.path))", context: parent, ofKind: .server)
        span.attributes["http.request.method"] = request.method.rawValue
        span.attributes["url.path"] = request.uri.path
        if let query = request.uri.query { span.attributes["url.query"] = query }
        if let address = context.peerAddress { span.attributes["client.address"] = address }
        do {
            var response = try await ServiceContext.$current.withValue(span.context) {
                try await next(request, context)
            }
            span.attributes["http.response.status_code"] = Int(response.status.code)
            if response.status.code >= 500 { span.setStatus(.init(code: .error)) }
            let body = response.body
            response.body = ResponseBody(contentLength: body.contentLength) { writer in
                defer { span.end() }
                try await body.write(writer)
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            span.attributes["http.response.status_code"] = status
            if status >= 500 { span.setStatus(.init(code: .error)) }
            span.recordError(error)
            span.end()
            throw error
        }
    }

    /// Reads trace fields from a request's header fields.
    private struct FieldsExtractor: Extractor {
        func extract(key: String, from carrier: HTTPFields) -> String? {
            HTTPField.Name(key).flatMap { carrier[$0] }
        }
    }
}
