import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import Synchronization
import WebImage

/// The access log of the requests the router answers, with what their handlers noted, and
/// `origin_retries`: the retries of the origin fetches the request started (a request that
/// joined a fetch under way shows none; the fetch is logged once, with the request that made it).
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = ProxyRequestContext
    let log: AccessLog

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response: Response
        let notes = context.notes
        do {
            response = try await RetryObserver.$current.withValue(RetryObserver { _ in notes.increment("origin_retries") }) {
                try await next(request, context)
            }
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            log.record(method: request.method, path: request.uri.path, status: status, bytes: nil,
                       duration: ContinuousClock.now - started, error: "\(error)", notes: { context.notes.metadata })
            throw error
        }
        let bytes = request.method == .head || response.status == .notModified ? 0 : response.headers[.contentLength].flatMap { Int($0) }
        log.record(method: request.method, path: request.uri.path, status: response.status.code, bytes: bytes,
                   duration: ContinuousClock.now - started, error: nil, notes: { context.notes.metadata })
        return response
    }
}
