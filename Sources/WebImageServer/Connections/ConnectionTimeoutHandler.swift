import NIOCore
import NIOHTTP1

/// Closes a connection whose client is too slow to send a request, or keeps it open too long
/// between requests (``ConnectionLimits/headerTimeout``, ``ConnectionLimits/idleTimeout``).
///
/// Without it, a client holds a connection (and a file descriptor) for as long as it likes by
/// sending nothing, or a header one byte at a time. One deadline runs at a time:
///
/// - from the connection's start, and from the first bytes of each later request, until the
///   request has been read in full: the header timeout;
/// - from the moment the last answer has been written to the socket until the next request's
///   first bytes: the idle timeout;
/// - none while a request that has been read is being answered (the proxy's own limits bound
///   that work).
///
/// It sits after NIO's HTTP/1 decoder, which passes on every read's end even when the bytes
/// read are not yet a whole request head: that is how it sees a request starting. Requests
/// answered ahead of the codec (`CachedVariantHandler`) reach it as calls (``answeringAhead()``,
/// ``answeredAhead()``), and a read that leaves such a head unfinished as a read's end without
/// parts.
///
/// Deadlines move on every request of a keep-alive connection, so the timer is lazy: starting
/// or stopping a deadline only records it, and the one scheduled task, when it fires, closes the
/// connection if its deadline has passed or schedules itself again for the deadline now set. A
/// cached variant's request thus costs a clock read, not a cancelled and a new scheduled task
/// (perf put those at 8 % of a warm request's CPU).
final class ConnectionTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum Deadline {
        case none
        case request
        case idle
    }

    private let headerTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var deadline = Deadline.none
    /// When the current deadline passes (meaningless while it is `.none`).
    private var expiry = NIODeadline.distantFuture
    private var timer: Scheduled<Void>?
    /// When `timer` fires.
    private var timerFires = NIODeadline.distantFuture
    /// Requests read (or being read) whose answer has not been written in full.
    private var unanswered = 0
    /// Between a request's head and its end.
    private var isReadingRequest = false
    /// Whether the current read has produced any part of a request.
    private var readProducedParts = false
    /// For ``answeredAhead()``, called from outside the pipeline's events; set while the
    /// handler is in the pipeline.
    private var context: ChannelHandlerContext?

    init(limits: ConnectionLimits) {
        headerTimeout = TimeAmount(limits.headerTimeout)
        idleTimeout = TimeAmount(limits.idleTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(.request, context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if case .none = deadline { start(.request, context: context) }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        cancelTimer()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readProducedParts = true
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            isReadingRequest = true
            // Usually the request's end is in the same read: its deadline, if it needs one, is
            // started when the read ends (one timer less per request).
            if case .idle = deadline { stop() }
        case .body:
            break
        case .end:
            isReadingRequest = false
            stop()
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // A request incomplete when the read ends: a head without its end, or bytes that are not
        // yet a whole head.
        let isIncomplete = isReadingRequest || !readProducedParts
        if isIncomplete, !isRequestDeadline { start(.request, context: context) }
        readProducedParts = false
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        // A parse error's 400 answers no request: never below zero.
        unanswered = max(0, unanswered - 1)
        // Idle from when the answer has reached the socket, not when it was queued: a client
        // that reads a large image slowly is still busy.
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { result in
            promise?.completeWith(result)
            if case .success = result, self.unanswered == 0, !self.isRequestDeadline, context.channel.isActive {
                self.start(.idle, context: context)
            }
        }
        context.write(data, promise: written)
    }

    /// A request has been read in full by `CachedVariantHandler`, ahead of the codec, and is
    /// being answered there: no deadline while it is.
    func answeringAhead() {
        stop()
    }

    /// The answer to a request read ahead of the codec has reached the socket, and nothing else
    /// is being read or answered: the connection is idle from now.
    func answeredAhead() {
        guard let context, unanswered == 0, context.channel.isActive else { return }
        start(.idle, context: context)
    }

    private var isRequestDeadline: Bool {
        if case .request = deadline { return true }
        return false
    }

    private func start(_ kind: Deadline, context: ChannelHandlerContext) {
        deadline = kind
        let timeout = if case .idle = kind { idleTimeout } else { headerTimeout }
        // The loop's clock (the real one, or a test's virtual one), as its timers read.
        expiry = context.eventLoop.now + timeout
        // A timer that fires by then checks again when it does; one that would fire later
        // (an idle deadline's, when a shorter header deadline starts) is replaced.
        if timer == nil || timerFires > expiry { schedule(at: expiry, context: context) }
    }

    private func schedule(at when: NIODeadline, context: ChannelHandlerContext) {
        timer?.cancel()
        timerFires = when
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: when) {
            self.timer = nil
            self.timerFired(context: context)
        }
    }

    private func timerFired(context: ChannelHandlerContext) {
        if case .none = deadline { return }
        guard context.eventLoop.now >= expiry else {
            schedule(at: expiry, context: context)
            return
        }
        deadline = .none
        context.close(promise: nil)
    }

    /// Ends the current deadline; the timer, if any, finds none when it fires.
    private func stop() {
        deadline = .none
    }

    /// The connection is gone: nothing must fire on it.
    private func cancelTimer() {
        deadline = .none
        timer?.cancel()
        timer = nil
    }
}
