import HTTPTypes
import Hummingbird
import NIOCore

/// Requests that come through a trusted proxy (``ConnectionLimits/trustedProxies``) are counted
/// per client that `X-Forwarded-For` names, against
/// ``ConnectionLimits/maximumConnectionsPerClient`` requests in progress: behind a load balancer
/// every connection comes from it, so the per-client connection cap cannot tell clients apart,
/// and this does. The client is the rightmost address of `X-Forwarded-For` that is not itself a
/// trusted proxy (each proxy appends the address it saw; what comes before was said by the
/// client). Requests from anyone else, and `/healthz` and `/metrics`, pass untouched.
struct ForwardedClientLimitMiddleware: RouterMiddleware {
    typealias Context = ProxyRequestContext
    let trustedProxies: Set<IPAddress>
    let inProgress: PerClientLimiter

    init(limits: ConnectionLimits) {
        trustedProxies = Set(limits.trustedProxies.compactMap(IPAddress.init))
        inProgress = PerClientLimiter(limit: limits.maximumConnectionsPerClient)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !trustedProxies.isEmpty, let peer = context.peerAddress.flatMap(IPAddress.init), trustedProxies.contains(peer),
              !OperationsOnlyHandler.routes.contains(request.uri.path[...]),
              let client = forwardedClient(request.headers[values: .xForwardedFor]) else {
            return try await next(request, context)
        }
        guard inProgress.tryAcquire(client) else {
            context.notes.set("error", "the forwarded client has \(inProgress.limit) requests in progress")
            var response = ProxyServer.text("too many requests from this client in progress\n", status: .serviceUnavailable)
            response.headers[.retryAfter] = "1"
            return response
        }
        defer { inProgress.release(client) }
        return try await next(request, context)
    }

    /// The rightmost address of the `X-Forwarded-For` values that is not a trusted proxy.
    func forwardedClient(_ values: [String]) -> ClientAddress? {
        let addresses = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for text in addresses.reversed() {
            guard let address = IPAddress(text) else { return nil }
            if !trustedProxies.contains(address) { return ClientAddress(text) }
        }
        return nil
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
