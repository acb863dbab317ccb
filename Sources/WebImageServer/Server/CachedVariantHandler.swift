import Foundation
import Logging
import Metrics
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
    /// Set by the server's graceful shutdown: from then on the router answers everything.
    private var quiescing = false
    /// Answers were written here and the outbound buffer was full after their flush: the idle
    /// deadline starts once it drains (``channelWritabilityChanged(context:)``).
    private var awaitsDrain = false
    /// Set when an answer here closes the connection: nothing read after it is answered.
    private var isClosing = false
    /// The metrics of the last answer's route and status (``record(_:)``).
    private struct Instruments {
        var route: String
        var status: Int
        var requests: Metrics.Counter
        var duration: Metrics.Timer
        var variants: Metrics.Counter
    }

    private var instruments: Instruments?
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
            let arrived = bytes
            earlier.writeBuffer(&bytes)
            bytes = earlier
            // A head ends at a line's end, and none came: it is still incomplete. Scanning it
            // again from its start would make a head sent a byte at a time cost the square of
            // its length.
            if !arrived.readableBytesView.contains(UInt8(ascii: "\n")), bytes.readableBytes < RequestHeadScan.maximumLength {
                unread = bytes
                return
            }
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
            // Idle from when the answers have left (or fit in the outbound buffer), unless a
            // request is being read or answered by the codec's side.
            if withStack == 0, unread == nil, !isClosing {
                if context.channel.isWritable { timeouts.answeredAhead() } else { awaitsDrain = true }
            }
        }
        // The codec's side hears of reads it took part in, or that left a head unfinished (the
        // header timeout starts then); a read answered here in full is nothing to it.
        if handedOn || unread != nil || handsEverythingOn {
            handedOn = false
            context.fireChannelReadComplete()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if awaitsDrain, context.channel.isWritable {
            awaitsDrain = false
            if withStack == 0, unread == nil { timeouts.answeredAhead() }
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent, !quiescing else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        quiescing = true
        // The codec's side closes an idle connection at once, which would drop answers written
        // here and not yet sent: the notice goes on once they are. Writes complete in order, so
        // an empty one completes after them; a promise on this rare path, not on every answer.
        let sent = context.eventLoop.makePromise(of: Void.self)
        sent.futureResult.assumeIsolated().whenComplete { _ in context.fireUserInboundEventTriggered(event) }
        context.writeAndFlush(NIOAny(ByteBuffer()), promise: sent)
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
        /// `200` or `304`.
        var status: Int
        /// Its header fields but `Date` and `Connection` (``PreparedHead``).
        var fields: ByteBuffer
        var body: ByteBuffer?
        var isHEAD: Bool
        var recognized: ProxyServer.RecognizedRequest
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
        guard let recognized = server.recognizedRequest(target: target, accepted: accepted) else { return nil }
        let now = recognized.preparedHead == nil ? Date() : nil
        // An imgproxy URL past its `expires` was recognized before: the router refuses it.
        if let now, recognized.headers.hasExpired(at: now) { return nil }
        guard let output = server.proxy.cachedImage(for: recognized.plan) else { return nil }
        let image = output.image
        // A local function, not a closure value: a hit, which never calls it, allocates nothing for it.
        func makeFields() -> PreparedHead.Fields {
            // The router's heads of a 200 and of a 304 ("*" matches any tag).
            let heads = [[], ["*"]].map { ifNoneMatch in
                var head = server.responseHead(for: output, ifNoneMatch: ifNoneMatch)
                recognized.headers.apply(to: &head, isComplete: output.isComplete, now: now ?? Date(), ceiling: server.proxy.configuration.maxAge)
                // What Hummingbird adds to the router's responses, but the date.
                head.headerFields[.server] = ProxyServer.serverName
                return ByteBuffer(fieldsOf: head)
            }
            return PreparedHead.Fields(ok: heads[0], notModified: heads[1])
        }
        let fields = recognized.preparedHead?.fields(etag: image.etag, isComplete: output.isComplete, make: makeFields) ?? makeFields()
        let notModified = !request.ifNoneMatch.isEmpty && ProxyServer.matches(request.ifNoneMatch, etag: image.etag)
        let isHEAD = request.method == .head
        return Answer(
            status: notModified ? 304 : 200, fields: notModified ? fields.notModified : fields.ok,
            body: notModified || isHEAD ? nil : image.body, isHEAD: isHEAD, recognized: recognized, started: started)
    }

    private func send(_ answer: Answer, keepsAlive: Bool, isHTTP10: Bool, context: ChannelHandlerContext) {
        timeouts.answeringAhead()
        var head = context.channel.allocator.buffer(capacity: answer.fields.readableBytes + 96)
        head.writeResponseHead(
            status: answer.status, fields: answer.fields, isHTTP10: isHTTP10,
            connection: !keepsAlive ? "close" : isHTTP10 ? "keep-alive" : nil)
        // A promise only when the connection ends with this answer: closing drops what is unsent.
        let sent = keepsAlive ? nil : context.eventLoop.makePromise(of: Void.self)
        if let body = answer.body {
            context.write(NIOAny(head), promise: nil)
            context.write(NIOAny(body), promise: sent)
        } else {
            context.write(NIOAny(head), promise: sent)
        }
        answered = true
        if let sent {
            isClosing = true
            sent.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
        record(answer)
    }

    /// The answer's metrics and access-log line, as the router's middleware records them.
    private func record(_ answer: Answer) {
        let metrics = server.proxy.metrics
        let recognized = answer.recognized
        // Kept for the connection's next answers: finding them takes a lock every loop shares.
        if instruments?.route != recognized.route || instruments?.status != answer.status {
            let (requests, duration) = metrics.requestInstruments(route: recognized.route, status: answer.status)
            instruments = Instruments(
                route: recognized.route, status: answer.status, requests: requests, duration: duration,
                variants: instruments?.variants ?? metrics.variantCounter(VariantSource.memory.rawValue))
        }
        let kept = instruments!
        kept.variants.increment()
        metrics.recordEventLoopAnswer()
        let elapsed = ContinuousClock.now - answer.started
        metrics.recordRequest((kept.requests, kept.duration), duration: elapsed)
        server.accessLog.log(
            method: answer.isHEAD ? .head : .get, path: recognized.path, status: answer.status,
            bytes: answer.body?.readableBytes ?? 0, duration: elapsed, error: nil,
            notes: { ["source": .string(recognized.sourceKey), "cache": .string(VariantSource.memory.rawValue)] })
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
