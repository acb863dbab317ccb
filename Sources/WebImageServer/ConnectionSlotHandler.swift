import NIOCore

/// Holds a connection's slot of ``ConnectionLimits/maximumConnections`` and gives it back once,
/// when the connection closes.
///
/// First in the pipeline, it sees every close the server asks for before the socket is closed,
/// so a client that sees the server close its connection can count on the slot being free; a
/// connection that ends otherwise (the client resets it) gives it back when the pipeline is
/// torn down.
final class ConnectionSlotHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = Any

    private let open: ConcurrencyLimiter
    private var isHeld = true

    /// `open` must already count this connection.
    init(open: ConcurrencyLimiter) {
        self.open = open
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
        open.release()
    }
}
