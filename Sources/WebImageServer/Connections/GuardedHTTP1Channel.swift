import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 connection with the proxy's connection rules around it: the caps on
/// open connections (all, and each client's) and the reserve for operations
/// (``OperationsOnlyHandler``), the header and idle timeouts (``ConnectionTimeoutHandler``) and answers in
/// the client's HTTP version (``HTTPVersionHandler``), with the cached variants answered ahead
/// of the codec (`CachedVariantHandler`).
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
    /// The connections past it, which answer only operations (``ConnectionLimits/reservedConnections``).
    let reserve: ConcurrencyLimiter
    /// Each client's connections, against ``ConnectionLimits/maximumConnectionsPerClient``.
    let perClient: PerClientLimiter
    /// ``ConnectionLimits/trustedProxies``, parsed.
    let trustedProxies: Set<IPAddress>
    /// The server whose cached variants are answered ahead of the codec (`CachedVariantHandler`),
    /// or `nil` when every request takes the router.
    let answersCachedVariants: ProxyServer?

    init(http1: HTTP1Channel, limits: ConnectionLimits, open: ConcurrencyLimiter, answersCachedVariants: ProxyServer?) {
        self.http1 = http1
        self.answersCachedVariants = answersCachedVariants
        self.limits = limits
        self.open = open
        reserve = ConcurrencyLimiter(limit: limits.reservedConnections)
        perClient = PerClientLimiter(limit: limits.maximumConnectionsPerClient)
        trustedProxies = Set(limits.trustedProxies.compactMap(IPAddress.init))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // The client's slot first: a client at its cap takes none of the shared ones.
        let peer = channel.remoteAddress?.ipAddress.flatMap(IPAddress.init)
        let client = peer.flatMap { trustedProxies.contains($0) ? nil : ClientAddress($0) }
        if let client, !perClient.tryAcquire(client) {
            logger.debug("connection refused: the client holds \(perClient.limit) connections")
            return refuse(channel)
        }
        let giveBackClient = { if let client { perClient.release(client) } }
        var operationsOnly = false
        if !open.tryAcquire() {
            guard limits.reservedConnections > 0, reserve.tryAcquire() else {
                giveBackClient()
                logger.debug("connection refused: \(open.limit) connections are open")
                return refuse(channel)
            }
            operationsOnly = true
        }
        let shared = operationsOnly ? reserve : open
        let slot = ConnectionSlotHandler { shared.release(); giveBackClient() }
        do {
            try channel.pipeline.syncOperations.addHandler(slot, position: .first)
        } catch {
            shared.release()
            giveBackClient()
            return channel.eventLoop.makeFailedFuture(error)
        }
        return http1.setup(channel: channel, logger: logger).flatMapThrowing { [limits, operationsOnly, answersCachedVariants] http in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let timeouts = ConnectionTimeoutHandler(limits: limits)
            var handlers: [any ChannelHandler] = [HTTPVersionHandler(), timeouts]
            if operationsOnly { handlers.insert(OperationsOnlyHandler(), at: 0) }
            if let server = answersCachedVariants, !operationsOnly {
                // Ahead of the encoder too: its answers are bytes.
                let front = CachedVariantHandler(server: server, timeouts: timeouts)
                try pipeline.addHandler(front, position: .before(try pipeline.handler(type: HTTPResponseEncoder.self)))
                handlers.insert(CachedVariantHandler.StackAnswers(front: front), at: 0)
            }
            try pipeline.addHandlers(handlers, position: .after(decoder))
            return Value(channel: channel, http: http)
        }
    }

    /// Closes `channel` as soon as it is active (``RefusedConnectionHandler``).
    private func refuse(_ channel: any Channel) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler())
            return Value(channel: channel, http: nil)
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
