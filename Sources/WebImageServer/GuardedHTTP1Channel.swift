import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 connection with the proxy's connection rules around it: the cap on
/// open connections, the header and idle timeouts (``ConnectionTimeoutHandler``) and answers in
/// the client's HTTP version (``HTTPVersionHandler``).
///
/// Both handlers need NIO's HTTP/1 parts, which carry the version and come before Hummingbird's
/// conversion to swift-http-types, so they are placed right after NIO's decoder once
/// ``HTTP1Channel`` has built its pipeline; `additionalChannelHandlers` only reach the
/// converted parts.
struct GuardedHTTP1Channel: ServerChildChannel {
    /// A connection: served, or `http` is `nil` when it was refused (and closed) at the cap.
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let http: HTTP1Channel.Value?
    }

    let http1: HTTP1Channel
    let limits: ConnectionLimits
    /// The connections open now, against ``ConnectionLimits/maximumConnections``.
    let open: ConcurrencyLimiter

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard open.tryAcquire() else {
            logger.debug("connection refused: \(open.limit) connections are open")
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler())
                return Value(channel: channel, http: nil)
            }
        }
        let slot = ConnectionSlotHandler(open: open)
        do {
            try channel.pipeline.syncOperations.addHandler(slot, position: .first)
        } catch {
            open.release()
            return channel.eventLoop.makeFailedFuture(error)
        }
        return http1.setup(channel: channel, logger: logger).flatMapThrowing { [limits] http in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandlers([HTTPVersionHandler(), ConnectionTimeoutHandler(limits: limits)], position: .after(decoder))
            return Value(channel: channel, http: http)
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard let http = value.http else { return }
        await http1.handle(value: http, logger: logger)
    }
}

/// Closes a connection over the cap as soon as it is active, before anything is read: it costs
/// its descriptor for one event-loop tick. (Closing it during setup, before NIO has registered
/// it, would fail the registration, which NIO reports on the listening channel.)
private final class RefusedConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = Any

    func channelActive(context: ChannelHandlerContext) {
        context.close(promise: nil)
    }
}
