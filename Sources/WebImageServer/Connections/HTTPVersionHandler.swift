import NIOCore
import NIOHTTP1

/// Answers each request in the HTTP version it came in and keeps the connection open only as
/// long as the client asked to.
///
/// Hummingbird converts requests to swift-http-types, which have no version, and answers
/// everything as HTTP/1.1 on a connection kept open: an HTTP/1.0 client (ApacheBench, old
/// proxies and health checkers) that did not ask for keep-alive then waits for a close that
/// never comes, and one that did ask is never told it was granted. This handler sits between
/// NIO's HTTP/1 codec and Hummingbird's conversion, where versions are still visible, and sees
/// the router's answers (`CachedVariantHandler`, ahead of the codec, applies the same rules to
/// its own):
///
/// - an HTTP/1.0 request gets an HTTP/1.0 answer (anything else stays HTTP/1.1);
/// - a request that did not ask for keep-alive (HTTP/1.0 without `Connection: keep-alive`, or
///   `Connection: close`) gets `Connection: close`, and the connection is closed once the
///   answer is sent;
/// - an HTTP/1.0 request that asked for keep-alive gets `Connection: keep-alive`, as long as the
///   answer's length is known (HTTP/1.0 has no chunked bodies: an answer without a length ends
///   with the connection).
final class HTTPVersionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What a request asked for, kept until its answer's head is written.
    private struct Asked {
        var version: HTTPVersion
        var keepAlive: Bool
        var method: HTTPMethod
    }

    /// Requests not yet answered, in order (HTTP/1 answers in request order).
    private var unanswered = CircularBuffer<Asked>()
    /// Whether the connection ends with the answer being written.
    private var closesAfterAnswer = false
    /// Set once that answer is written: what the client sends after it is not read.
    private var isClosing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        if case .head(let head) = unwrapInboundIn(data) {
            unanswered.append(Asked(version: head.version, keepAlive: head.isKeepAlive, method: head.method))
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code < 200:
            // An interim answer (100 Continue): the final one follows.
            if let asked = unanswered.first, asked.version == .http1_0 { head.version = .http1_0 }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .head(var head):
            // A parse error's 400 answers no request: it is HTTP/1.1 and closes already.
            let asked = unanswered.popFirst() ?? Asked(version: .http1_1, keepAlive: false, method: .GET)
            closesAfterAnswer = !Self.keepsAlive(head, asked: asked)
            if asked.version == .http1_0 { head.version = .http1_0 }
            if closesAfterAnswer {
                head.headers.replaceOrAdd(name: "connection", value: "close")
            } else if asked.version == .http1_0 {
                head.headers.replaceOrAdd(name: "connection", value: "keep-alive")
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closesAfterAnswer:
            isClosing = true
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenComplete { result in
                promise?.completeWith(result)
                context.close(promise: nil)
            }
            context.write(data, promise: written)
        case .body, .end:
            context.write(data, promise: promise)
        }
    }

    /// Whether the connection stays open after `head`, the answer to `asked`.
    private static func keepsAlive(_ head: HTTPResponseHead, asked: Asked) -> Bool {
        guard asked.keepAlive, !head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "close" }) else {
            return false
        }
        guard asked.version == .http1_0 else { return true }
        let hasNoBody = asked.method == .HEAD || head.status == .notModified || head.status == .noContent
        return hasNoBody || head.headers.contains(name: "content-length")
    }
}
