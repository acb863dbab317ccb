import NIOCore
import NIOHTTP1

/// On a connection from the reserve (``ConnectionLimits/reservedConnections``, accepted while
/// every other connection is taken), lets through only the operations routes, `/healthz` and
/// `/metrics`: anything else is answered `503` with `Connection: close` here, before Hummingbird
/// sees it, and the connection closes. So a health checker and a scraper get through when clients
/// hold every connection, and the reserve is no way around the cap for anything else.
///
/// It sits right after NIO's request decoder, where the request head is still NIO's.
final class OperationsOnlyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The routes a reserve connection may ask for.
    static let routes: Set<Substring> = ["/healthz", "/metrics"]
    /// Set once a request was refused: nothing more is read.
    private var isRefusing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isRefusing else { return }
        if case .head(let head) = unwrapInboundIn(data) {
            let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            if !Self.routes.contains(path) {
                isRefusing = true
                refuse(head, context: context)
                return
            }
        }
        context.fireChannelRead(data)
    }

    private func refuse(_ request: HTTPRequestHead, context: ChannelHandlerContext) {
        let body = "server busy: every connection is taken\n"
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Retry-After", value: "1")
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: .serviceUnavailable, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        // The channel, not the context, in the callback: a Sendable handle to close it with.
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
