import NIOCore

/// Holds a connection's slots (of ``ConnectionLimits/maximumConnections`` or the reserve, and of
/// its client's ``ConnectionLimits/maximumConnectionsPerClient``) and gives them back once, when
/// the connection closes.
///
/// First in the pipeline, it sees every close the server asks for before the socket is closed,
/// so a client that sees the server close its connection can count on the slot being free; a
/// connection that ends otherwise (the client resets it) gives it back when the pipeline is
/// torn down.
final class ConnectionSlotHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = Any

    private let giveBack: () -> Void
    private var isHeld = true

    /// `giveBack` returns the slots that already count this connection (open connections, the
    /// client's, the reserve's).
    init(giveBack: @escaping () -> Void) {
        self.giveBack = giveBack
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all { release() }
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    private func release() {
        guard isHeld else { return }
        isHeld = false
        giveBack()
    }
}
