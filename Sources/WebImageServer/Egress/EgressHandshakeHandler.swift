import Logging
import NIOCore
import NIOPosix
import NIOSOCKS
import WebImage

/// One SOCKS5 client of the ``EgressGuard``: accepts the greeting without authentication, takes
/// the `CONNECT` request, asks the ``OriginGuard`` where it may go, connects there, and joins
/// the two connections with a ``RelayHandler`` pair before answering "succeeded". Anything else
/// is answered with the SOCKS reply that says why, and closed.
final class EgressHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ClientMessage
    typealias OutboundOut = ServerMessage

    private let originGuard: OriginGuard
    private let logger: Logger
    private let connectTimeout: TimeAmount

    init(originGuard: OriginGuard, logger: Logger, connectTimeout: TimeAmount) {
        self.originGuard = originGuard
        self.logger = logger
        self.connectTimeout = connectTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .greeting(let greeting):
            let accepted = greeting.methods.contains(.noneRequired)
            let method = SelectedAuthenticationMethod(method: accepted ? .noneRequired : .noneAcceptable)
            context.writeAndFlush(wrapOutboundOut(.selectedAuthenticationMethod(method)), promise: nil)
            if !accepted { context.close(promise: nil) }
        case .authenticationData:
            context.close(promise: nil)
        case .request(let request):
            connect(request, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Leaves before the channel's handlers are removed: the SOCKS codec, removed first, passes
    /// its leftover bytes on to whatever follows it, and they are no `ClientMessage`.
    func channelInactive(context: ChannelHandlerContext) {
        context.fireChannelInactive()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func connect(_ request: SOCKSRequest, context: ChannelHandlerContext) {
        guard request.command == .connect else {
            refuse(.commandUnsupported, context: context)
            return
        }
        let host: String, port: Int
        switch request.addressType {
        case .domain(let name, let number):
            (host, port) = (name, number)
        case .address(let address):
            guard let text = address.ipAddress, let number = address.port else {
                refuse(.addressUnsupported, context: context)
                return
            }
            (host, port) = (text, number)
        }
        let eventLoop = context.eventLoop
        let checked = eventLoop.makePromise(of: [IPAddress].self)
        checked.completeWithTask { [originGuard] in
            try await originGuard.addressesToConnect(host: host, port: port)
        }
        let timeout = connectTimeout
        checked.futureResult
            .flatMap { addresses in Self.connect(to: addresses[...], port: port, on: eventLoop, timeout: timeout) }
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    self.join(context: context, to: channel)
                case .failure(let error as OriginGuard.Refusal):
                    self.logger.warning("egress refused", metadata: ["host": "\(host)", "port": "\(port)", "reason": "\(error.description)"])
                    self.refuse(.notAllowed, context: context)
                case .failure(let error):
                    self.logger.debug("egress failed", metadata: ["host": "\(host)", "port": "\(port)", "error": "\(error)"])
                    self.refuse(.hostUnreachable, context: context)
                }
            }
    }

    /// Connects to the first of `addresses` that answers, on `eventLoop` (the client's), so the
    /// two channels can be joined directly.
    private static func connect(
        to addresses: ArraySlice<IPAddress>, port: Int, on eventLoop: any EventLoop, timeout: TimeAmount
    ) -> EventLoopFuture<any Channel> {
        guard let first = addresses.first else {
            return eventLoop.makeFailedFuture(ImageError.network(.init(.connectionRefused, "no address to connect to")))
        }
        let target: SocketAddress
        do {
            target = try SocketAddress(ipAddress: first.description, port: port)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(to: target)
            .flatMapError { error in
                guard addresses.count > 1 else { return eventLoop.makeFailedFuture(error) }
                return connect(to: addresses.dropFirst(), port: port, on: eventLoop, timeout: timeout)
            }
    }

    /// Joins the two connections with a relay pair and answers "succeeded": this handler and
    /// the SOCKS codec leave the pipeline (the codec passes on any bytes the client sent early).
    /// Called as the connection completes, in the same event-loop turn, so nothing the origin
    /// sends can arrive before its relay is in place.
    private func join(context: ChannelHandlerContext, to outbound: any Channel) {
        // The client may have gone while the connection was made.
        guard context.channel.isActive else {
            outbound.close(promise: nil)
            return
        }
        let (inbound, relay) = RelayHandler.pair()
        let bound = outbound.localAddress.map(SOCKSAddress.address) ?? .domain("0.0.0.0", port: 0)
        do {
            try outbound.pipeline.syncOperations.addHandler(relay)
            context.writeAndFlush(wrapOutboundOut(.response(SOCKSResponse(reply: .succeeded, boundAddress: bound))), promise: nil)
            let pipeline = context.pipeline.syncOperations
            try pipeline.addHandler(inbound)
            let codec = try pipeline.handler(type: SOCKSServerHandshakeHandler.self)
            pipeline.removeHandler(context: context, promise: nil)
            pipeline.removeHandler(codec, promise: nil)
        } catch {
            context.close(promise: nil)
            outbound.close(promise: nil)
        }
    }

    private func refuse(_ reply: SOCKSServerReply, context: ChannelHandlerContext) {
        let response = SOCKSResponse(reply: reply, boundAddress: .domain("0.0.0.0", port: 0))
        context.writeAndFlush(wrapOutboundOut(.response(response))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}
