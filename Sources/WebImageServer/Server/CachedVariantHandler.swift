import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// Answers `GET` and `HEAD` requests of `/image`, `/info`, thumbor and imgproxy URLs whose
/// variant (or `/info` answer) is in memory from the connection's bytes, before NIO's HTTP/1
/// codec; hands every other request's bytes on to the codec and Hummingbird's router untouched.
///
/// A cached variant costs one lookup of the request target and one of the variant. Through the
/// codec it also cost the parse into typed request parts, their conversion to swift-http-types,
/// five handlers each way and a promise per part; through the router, the async layer too.
/// Here a hit is one scan of the head (``RequestHeadScan``), the two lookups, the response head
/// written as bytes and the body, in one `writev` per read. The answers are the router's: the
/// same checks (signature, parameters, origin, an imgproxy URL's expiry), the same headers
/// (the dialects' ``DialectHeaders``), `304`s, HTTP/1.0 and `Connection: close` honoured, one
/// access-log line and the same metrics, with `webimage_proxy_event_loop_answers_total`
/// counting what it answered. It is the first handler after the connection's slot
/// (``GuardedHTTP1Channel``); ``ProxyServer/answersCachedVariantsOnEventLoop`` turns it off.
///
/// HTTP/1.1 keeps responses in request order, so a request is answered here only when no
/// earlier request of the connection is with the codec; a request handed on is delimited here
/// (its head, then its `Content-Length` of body) so that the next one can be answered here
/// again once the router's answers are written (``StackAnswers`` counts them). Bytes this
/// handler cannot delimit (see ``RequestHeadScan``) hand the rest of the connection to the
/// codec. A connection whose outbound buffer is full, and a server shutting down, take the
/// router too. A hit takes no slot of the concurrency limit: it never waits, and the limit is
/// there for the work of a miss. The header and idle timeouts (``ConnectionTimeoutHandler``)
/// are told of the requests answered here.
///
/// ```swift
/// var server = ProxyServer(proxy: proxy)
/// server.answersCachedVariantsOnEventLoop = false   // every request through the router
/// ```
final class CachedVariantHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let server: ProxyServer
    private let timeouts: ConnectionTimeoutHandler
    /// Bytes read that are not yet a whole head.
    private var unread: ByteBuffer?
    /// Set once bytes could not be delimited: the codec reads the rest of the connection.
    private var handsEverythingOn = false
    /// Body bytes of a request handed on that have not been read yet.
    private var bodyToHandOn = 0
    /// Requests handed on whose answer has not been written.
    private var withStack = 0
    /// Answers written here whose bytes have not all reached the socket.
    private var unsent = 0
    /// Set by the server's graceful shutdown: from then on the router answers everything.
    private var quiescing = false
    /// A shutdown notice held back until the answers written here have been sent: the codec's
    /// side closes an idle connection at once, which would drop them.
    private var heldQuiesceEvent: Any?
    /// Set when an answer here closes the connection: nothing read after it is answered.
    private var isClosing = false
    /// What the current read did.
    private var handedOn = false
    private var answered = false

    init(server: ProxyServer, timeouts: ConnectionTimeoutHandler) {
        self.server = server
        self.timeouts = timeouts
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        if handsEverythingOn {
            handOn(unwrapInboundIn(data), context: context)
            return
        }
        var bytes = unwrapInboundIn(data)
        if var earlier = unread.take() {
            earlier.writeBuffer(&bytes)
            bytes = earlier
        }
        while bytes.readableBytes > 0, !isClosing {
            if bodyToHandOn > 0 {
                let slice = bytes.readSlice(length: min(bodyToHandOn, bytes.readableBytes))!
                bodyToHandOn -= slice.readableBytes
                handOn(slice, context: context)
                continue
            }
            switch RequestHeadScan.scan(bytes) {
            case .incomplete:
                unread = bytes
                return
            case .unsupported:
                handsEverythingOn = true
                handOn(bytes, context: context)
                return
            case .head(let head, let length):
                if withStack == 0, !quiescing, context.channel.isWritable, let answer = answer(to: head) {
                    bytes.moveReaderIndex(forwardBy: length)
                    send(answer, keepsAlive: head.keepsAlive, isHTTP10: head.isHTTP10, context: context)
                } else {
                    withStack += 1
                    bodyToHandOn = head.bodyLength
                    handOn(bytes.readSlice(length: length)!, context: context)
                }
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if answered {
            answered = false
            context.flush()
        }
        // The codec's side hears of reads it took part in, or that left a head unfinished (the
        // header timeout starts then); a read answered here in full is nothing to it.
        if handedOn || unread != nil || handsEverythingOn {
            handedOn = false
            context.fireChannelReadComplete()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        quiescing = true
        if unsent > 0 {
            heldQuiesceEvent = event
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// An answer of the codec's side has been written: the next request may be answered here.
    fileprivate func stackAnswered() {
        // A parse error's 400 has no request handed on behind it: never below zero.
        withStack = max(0, withStack - 1)
    }

    private func handOn(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        handedOn = true
        context.fireChannelRead(wrapInboundOut(bytes))
    }

    // MARK: Answering

    /// A response decided from a request's head.
    private struct Answer {
        var head: HTTPResponse
        var body: ByteBuffer?
        var method: HTTPRequest.Method
        var path: String
        var source: String
        var started: ContinuousClock.Instant
    }

    /// The response to `request` if its variant is in memory and every check passes; `nil` hands
    /// the request on (the router then answers refusals and errors too).
    private func answer(to request: RequestHeadScan) -> Answer? {
        guard request.method != .other, !request.hasExpectation, request.bodyLength == 0 else { return nil }
        let target = request.target
        guard target.utf8.starts(with: "/image?".utf8) || target.utf8.starts(with: "/info?".utf8) || server.mayBeDialectURL(target) else { return nil }
        let started = ContinuousClock.now
        let accepted = server.proxy.negotiatedFormat(accept: request.accept)
        let now = Date()
        // An imgproxy URL past its `expires` was recognized before: the router refuses it.
        guard let recognized = server.recognizedRequest(target: target, accepted: accepted), !recognized.headers.hasExpired(at: now),
              let output = server.proxy.cachedImage(for: recognized.plan) else { return nil }
        var head = server.responseHead(for: output, ifNoneMatch: request.ifNoneMatch)
        recognized.headers.apply(to: &head, isComplete: output.isComplete, now: now, ceiling: server.proxy.configuration.maxAge)
        // What Hummingbird adds to the router's responses.
        head.headerFields[.date] = HTTPDate.now
        head.headerFields[.server] = ProxyServer.serverName
        let method: HTTPRequest.Method = request.method == .head ? .head : .get
        let body = head.status == .ok && method == .get ? output.image.body : nil
        return Answer(head: head, body: body, method: method, path: recognized.path, source: recognized.sourceKey, started: started)
    }

    private func send(_ answer: Answer, keepsAlive: Bool, isHTTP10: Bool, context: ChannelHandlerContext) {
        timeouts.answeringAhead()
        var head = context.channel.allocator.buffer(capacity: 512)
        head.writeResponseHead(answer.head, isHTTP10: isHTTP10, connection: !keepsAlive ? "close" : isHTTP10 ? "keep-alive" : nil)
        let sent = context.eventLoop.makePromise(of: Void.self)
        if let body = answer.body {
            context.write(NIOAny(head), promise: nil)
            context.write(NIOAny(body), promise: sent)
        } else {
            context.write(NIOAny(head), promise: sent)
        }
        answered = true
        unsent += 1
        if !keepsAlive { isClosing = true }
        sent.futureResult.assumeIsolated().whenComplete { result in
            self.answerSent(result, keepsAlive: keepsAlive, context: context)
        }
        server.proxy.metrics.recordEventLoopAnswer()
        let bytes = answer.body?.readableBytes ?? 0
        server.accessLog.record(
            method: answer.method, path: answer.path, status: answer.head.status.code, bytes: bytes,
            duration: ContinuousClock.now - answer.started, error: nil,
            notes: { ["source": .string(answer.source), "cache": .string(VariantSource.memory.rawValue)] })
    }

    private func answerSent(_ result: Result<Void, any Error>, keepsAlive: Bool, context: ChannelHandlerContext) {
        unsent -= 1
        if !keepsAlive {
            context.close(promise: nil)
            return
        }
        if case .success = result, withStack == 0, unread == nil { timeouts.answeredAhead() }
        if unsent == 0, let event = heldQuiesceEvent {
            heldQuiesceEvent = nil
            context.fireUserInboundEventTriggered(event)
        }
    }
}

extension CachedVariantHandler {
    /// Sits after the HTTP/1 codec and tells the handler when an answer of the codec's side
    /// has been written, so that the next request can be answered ahead of the codec again.
    final class StackAnswers: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart

        private let front: CachedVariantHandler

        init(front: CachedVariantHandler) {
            self.front = front
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .end = unwrapOutboundIn(data) { front.stackAnswered() }
            context.write(data, promise: promise)
        }
    }
}
