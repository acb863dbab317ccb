import NIOCore

/// Joins two channels on one event loop, in both directions: what one reads the other writes,
/// a half-close or a close on one side reaches the other, and each side reads only while its
/// partner can write (so a slow peer holds the other back instead of filling memory).
///
/// Both channels must be on the same event loop: partners call each other directly.
///
/// ```swift
/// let (client, origin) = RelayHandler.pair()
/// try inbound.pipeline.syncOperations.addHandler(client)
/// try outbound.pipeline.syncOperations.addHandler(origin)
/// ```
final class RelayHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: RelayHandler?
    private var context: ChannelHandlerContext?
    /// A read the channel asked for while the partner could not take more.
    private var readHeldBack = false

    private init() {}

    /// Two handlers that relay to each other.
    static func pair() -> (RelayHandler, RelayHandler) {
        let first = RelayHandler(), second = RelayHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    // MARK: What this side's channel does

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.context?.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.context?.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.context?.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            // The peer is done sending: tell the other peer so, and keep reading its answer.
            partner?.context?.close(mode: .output, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if let partnerChannel = partner?.context?.channel, !partnerChannel.isWritable {
            readHeldBack = true
            return
        }
        context.read()
    }

    // MARK: What the partner asks

    private func partnerBecameWritable() {
        guard readHeldBack, let context else { return }
        readHeldBack = false
        context.read()
    }
}
