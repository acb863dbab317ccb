import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Answers `GET` and `HEAD` requests of `/image`, `/info`, thumbor and imgproxy URLs whose
/// variant (or `/info` answer) is in memory on the connection's event loop, before
/// Hummingbird's router; hands every other request on untouched.
///
/// A cached variant costs one memory-cache lookup; through the router it also costs the async
/// layer (a hop from the event loop to the cooperative pool and back, the request and response
/// objects, the body writer), which on two cores more than halved the rate of cached responses.
/// Hummingbird places this handler in every HTTP/1 connection's pipeline after the HTTP codec
/// (``ProxyServer/answersCachedVariantsOnEventLoop``), so it sees requests as swift-http-types
/// parts and writes responses as the router would: the same checks (signature, parameters,
/// origin, an imgproxy URL's expiry), the same headers (the dialects' ``DialectHeaders``),
/// `304`s, one access-log line and the same metrics, with
/// `webimage_proxy_event_loop_answers_total` counting what it answered.
///
/// HTTP/1.1 keeps responses in request order, so a request is answered here only when no
/// earlier request of the connection is still with the router; a request that asks to close the
/// connection, a connection whose outbound buffer is full (the router's writer waits for the
/// client; this handler does not) and a server shutting down take the router too (an HTTP/1.0
/// request without keep-alive is answered here: ``HTTPVersionHandler``, nearer the socket, sets
/// the version and closes the connection after the answer). Anything that
/// is not a memory hit, errors included, is answered by the router alone, so there is one place
/// that decides a failure. A hit takes no slot of the concurrency limit: it never waits, and
/// the limit is there for the work of a miss.
///
/// ```swift
/// var server = ProxyServer(proxy: proxy)
/// server.answersCachedVariantsOnEventLoop = false   // every request through the router
/// ```
final class CachedVariantHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A response decided at a request's head, sent at its end.
    private struct Answer {
        var head: HTTPResponse
        var body: ByteBuffer?
        var method: HTTPRequest.Method
        var path: String
        var source: String
        var started: ContinuousClock.Instant
    }

    private enum State {
        /// Between requests.
        case idle
        /// Reading a request that the router answers.
        case forwarding
        /// Reading a request answered here, once its end has been read.
        case answering(Answer)
    }

    private let server: ProxyServer
    private var state = State.idle
    /// Requests handed to the router whose response has not been written in full.
    private var withRouter = 0
    /// Answers written here whose bytes have not all reached the socket.
    private var unsent = 0
    /// Set by the server's graceful shutdown: from then on the router answers everything.
    private var quiescing = false
    /// A shutdown notice held back until the answers written here have been sent: the handler
    /// after this one closes an idle connection at once, which would drop them.
    private var heldQuiesceEvent: Any?
    private var needsFlush = false

    init(server: ProxyServer) {
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (unwrapInboundIn(data), state) {
        case (.head(let request), _):
            if !quiescing, withRouter == 0, context.channel.isWritable, let answer = answer(to: request) {
                state = .answering(answer)
            } else {
                withRouter += 1
                state = .forwarding
                context.fireChannelRead(data)
            }
        case (.body, .answering):
            // No image request has a body; the router would ignore it too.
            break
        case (.end, .answering(let answer)):
            state = .idle
            send(answer, context: context)
        case (.end, _):
            state = .idle
            context.fireChannelRead(data)
        case (.body, _):
            context.fireChannelRead(data)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // A parse error's 400 has no forwarded request behind it: never below zero.
        if case .end = unwrapOutboundIn(data) { withRouter = max(0, withRouter - 1) }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        quiescing = true
        if isAnswering || unsent > 0 {
            heldQuiesceEvent = event
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    private var isAnswering: Bool {
        if case .answering = state { return true }
        return false
    }

    // MARK: Answering

    /// The response to `request` if its variant is in memory and every check passes; `nil` hands
    /// the request to the router (which then answers refusals and errors too).
    private func answer(to request: HTTPRequest) -> Answer? {
        guard request.method == .get || request.method == .head, let target = request.path,
              target.utf8.starts(with: "/image?".utf8) || target.utf8.starts(with: "/info?".utf8) || server.mayBeDialectURL(target) else { return nil }
        let fields = request.headerFields
        if let connection = fields[.connection], connection.lowercased().contains("close") { return nil }
        let started = ContinuousClock.now
        let accepted = server.proxy.negotiatedFormat(accept: fields[values: .accept])
        let now = Date()
        // An imgproxy URL past its `expires` was recognized before: the router refuses it.
        guard let recognized = server.recognizedRequest(target: target, accepted: accepted), !recognized.headers.hasExpired(at: now),
              let output = server.proxy.cachedImage(for: recognized.plan) else { return nil }
        var head = server.responseHead(for: output, ifNoneMatch: fields[values: .ifNoneMatch])
        recognized.headers.apply(to: &head, isComplete: output.isComplete, now: now, ceiling: server.proxy.configuration.maxAge)
        // What Hummingbird adds to the router's responses.
        head.headerFields[.date] = HTTPDate.now
        head.headerFields[.server] = ProxyServer.serverName
        let body = head.status == .ok && request.method == .get ? output.image.body : nil
        return Answer(head: head, body: body, method: request.method, path: recognized.path, source: recognized.sourceKey, started: started)
    }

    private func send(_ answer: Answer, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
        if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        let sent = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(.end(nil)), promise: sent)
        needsFlush = true
        unsent += 1
        sent.futureResult.assumeIsolated().whenComplete { _ in
            self.unsent -= 1
            if self.unsent == 0, let event = self.heldQuiesceEvent {
                self.heldQuiesceEvent = nil
                context.fireUserInboundEventTriggered(event)
            }
        }
        server.proxy.metrics.recordEventLoopAnswer()
        let bytes = answer.body?.readableBytes ?? 0
        server.accessLog.record(
            method: answer.method, path: answer.path, status: answer.head.status.code, bytes: bytes,
            duration: ContinuousClock.now - answer.started, error: nil,
            notes: { ["source": .string(answer.source), "cache": .string(VariantSource.memory.rawValue)] })
    }
}
