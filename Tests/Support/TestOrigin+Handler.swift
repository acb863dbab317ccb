import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// What the server will send for one request: the head, the body, and how the body goes out.
struct ResponsePlan {
    enum Delivery {
        /// The whole body, in `chunk`-byte pieces `delayMs` apart, then the end.
        case normal
        /// The first `prefix` bytes, then nothing, never closing.
        case stall(prefix: Int)
        /// Half of the body, then a TCP RST.
        case reset
        /// The whole body (which is shorter than the announced length), then a normal close.
        case closeAfterBody
        /// No response at all: a TCP RST as soon as the request has arrived.
        case resetBeforeHead
        /// No response at all, and no close, ever.
        case stallBeforeHead
    }

    enum Body {
        case data(Data)
        /// `count` bytes of the generated pattern, produced as they are written (for huge bodies).
        case pattern(count: Int)

        var count: Int {
            switch self {
            case .data(let data): data.count
            case .pattern(let count): count
            }
        }
    }

    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: Body
    var delivery: Delivery = .normal
    var chunk = 64 * 1024
    var delayMs = 0
}

/// Answers the requests of one connection. Lives on the connection's event loop; everything
/// asynchronous (gates, pauses, back-pressure) hops back onto that loop before touching it.
final class OriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let pattern = TestOrigin.generatedBody(size: 64 * 1024)

    private let origin: TestOrigin
    private let connection: Int
    private var requestHead: HTTPRequestHead?
    /// The log index of the request being answered; `nil` between requests.
    private var current: Int?
    private var keepAlive = true
    private var context: ChannelHandlerContext?

    init(origin: TestOrigin, connection: Int) {
        self.origin = origin
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestHead = head
        case .body:
            break
        case .end:
            guard let head = requestHead else { return }
            let index = origin.recordArrival(head, connection: connection)
            current = index
            keepAlive = head.isKeepAlive
            start(plan(for: head), path: TestOrigin.path(of: head.uri), index: index)
            origin.notifyWaiters()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let current {
            origin.settle(current, .aborted)
            self.current = nil
        }
        origin.connectionClosed(connection)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    // MARK: Sending

    private func start(_ plan: ResponsePlan, path: String, index: Int) {
        guard let context else { return }
        switch plan.delivery {
        case .stallBeforeHead: return  // not a byte, not a close: only the client ends it
        case .resetBeforeHead: return resetConnection()
        case .normal, .stall, .reset, .closeAfterBody: break
        }
        let loop = context.eventLoop
        let bound = NIOLoopBound(self, eventLoop: loop)
        guard let gate = origin.gate(matching: path) else {
            writeHead(plan)
            writeBody(plan, index: index, from: 0)
            return
        }
        switch gate.mode {
        case .holdHeaders:
            gate.pass {
                loop.execute {
                    guard bound.value.current == index else { return }
                    bound.value.writeHead(plan)
                    bound.value.writeBody(plan, index: index, from: 0)
                }
            }
        case .sendHeadersThenHold(let bytes):
            writeHead(plan)
            let held = min(bytes, plan.body.count)
            writeBody(plan, index: index, from: 0, until: held) {
                gate.pass {
                    loop.execute {
                        guard bound.value.current == index else { return }
                        bound.value.writeBody(plan, index: index, from: held)
                    }
                }
            }
        }
    }

    private func writeHead(_ plan: ResponsePlan) {
        guard let context else { return }
        let head = HTTPResponseHead(version: .http1_1, status: plan.status, headers: plan.headers)
        context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
    }

    /// Writes the body from `offset` up to `until` (default: where the delivery stops), one
    /// chunk at a time, each after the previous one reached the socket (back-pressure) and
    /// after the plan's pause; then runs `paused` if given, or ends the response as the
    /// delivery says.
    private func writeBody(_ plan: ResponsePlan, index: Int, from offset: Int, until: Int? = nil, paused: (() -> Void)? = nil) {
        guard let context, current == index, context.channel.isActive else { return }
        let stop: Int
        switch plan.delivery {
        case .normal, .closeAfterBody, .resetBeforeHead, .stallBeforeHead: stop = until ?? plan.body.count
        case .stall(let prefix): stop = min(until ?? prefix, prefix, plan.body.count)
        case .reset: stop = min(until ?? plan.body.count / 2, plan.body.count / 2)
        }
        if offset >= stop {
            if let paused { paused() } else { finish(plan, index: index) }
            return
        }
        let end = min(stop, offset + max(1, plan.chunk))
        let buffer = bytes(of: plan.body, in: offset..<end, allocator: context.channel.allocator)
        let loop = context.eventLoop.assumeIsolated()
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).assumeIsolated().whenSuccess { [self] in
            origin.addBodyBytes(index, end - offset)
            let next = { [self] in writeBody(plan, index: index, from: end, until: until, paused: paused) }
            if plan.delayMs > 0, end < stop {
                loop.scheduleTask(in: .milliseconds(Int64(plan.delayMs))) { next() }
            } else {
                // A hop rather than a direct call: a write to loopback often completes at
                // once, and a huge body would otherwise recurse once per chunk.
                loop.execute { next() }
            }
        }
    }

    private func finish(_ plan: ResponsePlan, index: Int) {
        guard let context else { return }
        switch plan.delivery {
        case .normal:
            let keepAlive = self.keepAlive
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { [self] _ in
                origin.settle(index, .completed)
                if current == index { current = nil }
                if !keepAlive { self.context?.close(promise: nil) }
            }
        case .stall, .stallBeforeHead:
            break  // never another byte, never a close
        case .reset, .resetBeforeHead:
            resetConnection()
        case .closeAfterBody:
            context.close(promise: nil)
        }
    }

    /// Closes the connection with a TCP RST (`SO_LINGER` 0), not a FIN.
    private func resetConnection() {
        guard let context else { return }
        let channel = context.channel
        let zeroLinger = linger(l_onoff: 1, l_linger: 0)
        if let provider = channel as? SocketOptionProvider {
            provider.setSoLinger(zeroLinger).whenComplete { _ in channel.close(promise: nil) }
        } else {
            channel.close(promise: nil)
        }
    }

    private func bytes(of body: ResponsePlan.Body, in range: Range<Int>, allocator: ByteBufferAllocator) -> ByteBuffer {
        switch body {
        case .data(let data):
            return allocator.buffer(bytes: data[data.startIndex + range.lowerBound..<data.startIndex + range.upperBound])
        case .pattern:
            var buffer = allocator.buffer(capacity: range.count)
            let pattern = Self.pattern
            var position = range.lowerBound
            while position < range.upperBound {
                let start = position % pattern.count
                let length = min(pattern.count - start, range.upperBound - position)
                buffer.writeBytes(pattern[start..<start + length])
                position += length
            }
            return buffer
        }
    }

    // MARK: Routing

    private func plan(for head: HTTPRequestHead) -> ResponsePlan {
        let components = URLComponents(string: head.uri)
        let path = TestOrigin.path(of: head.uri)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        func int(_ name: String, _ fallback: Int) -> Int { query[name].flatMap(Int.init) ?? fallback }

        if let content = origin.content(at: path) {
            return serve(content, head: head)
        }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard let first = segments.first else { return text(.notFound, "not found") }
        let rest = "/" + segments.dropFirst().joined(separator: "/")

        /// The body a behaviour endpoint wraps: the content registered at `rest`, else
        /// `bytes=` (default 1000) generated bytes.
        func wrapped() -> (Data, String) {
            if let content = origin.content(at: rest) { return (content.data, content.contentType) }
            return (TestOrigin.generatedBody(size: int("bytes", 1000)), query["type"] ?? "application/octet-stream")
        }
        func plain(_ data: Data, _ type: String, length: Int? = nil) -> ResponsePlan {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: type)
            headers.add(name: "Content-Length", value: String(length ?? data.count))
            return ResponsePlan(status: .ok, headers: headers, body: .data(data))
        }

        switch first {
        case "slow":
            let (data, type) = wrapped()
            var plan = plain(data, type)
            plan.chunk = int("chunk", 1024)
            plan.delayMs = int("delayMs", 10)
            return plan
        case "stall":
            let (data, type) = wrapped()
            var plan = plain(data, type)
            plan.delivery = .stall(prefix: int("prefix", 100))
            return plan
        case "reset":
            let (data, type) = wrapped()
            var plan = plain(data, type)
            plan.delivery = .reset
            return plan
        case "wrong-length":
            let (data, type) = wrapped()
            var plan = plain(data, type, length: data.count + 100)
            plan.delivery = .closeAfterBody
            return plan
        case "flaky":
            guard origin.countFlakyRequest(key: query["key"] ?? head.uri) > int("fail", 1) else { return flakyFailure(query) }
            let (data, type) = wrapped()
            return plain(data, type)
        case "redirect":
            guard segments.count >= 3, let hops = Int(segments[1]), hops > 0 else { return text(.badRequest, "bad redirect") }
            let tail = "/" + segments.dropFirst(2).joined(separator: "/")
            let target = hops == 1 ? tail : "/redirect/\(hops - 1)\(tail)"
            let queryString = components?.percentEncodedQuery.map { "?" + $0 } ?? ""
            let location = query["absolute"] == "1" ? origin.url(target + queryString).absoluteString : target + queryString
            return redirect(to: location)
        case "redirect-to":
            // Anywhere, for the proxy's SSRF tests: an allowed origin sending the client on to
            // a target that must be refused.
            guard let location = query["location"] else { return text(.badRequest, "location required") }
            return redirect(to: location)
        case "redirect-loop":
            return redirect(to: rest == "/a" ? "/redirect-loop/b" : "/redirect-loop/a")
        case "status":
            let code = segments.count > 1 ? Int(segments[1]) ?? 500 : 500
            var plan = text(HTTPResponseStatus(statusCode: code), "status \(code)")
            if code == 429 { plan.headers.add(name: "Retry-After", value: "1") }
            return plan
        case "huge":
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "image/jpeg")
            let count = int("bytes", 64 << 20)
            if query["length"] == "0" {
                headers.add(name: "Transfer-Encoding", value: "chunked")
            } else {
                headers.add(name: "Content-Length", value: String(count))
            }
            return ResponsePlan(status: .ok, headers: headers, body: .pattern(count: count))
        case "auth":
            let credentials = origin.credentials
            let expected = "Basic " + Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
            guard head.headers["Authorization"].first == expected else {
                var plan = text(.unauthorized, "credentials required")
                plan.headers.add(name: "WWW-Authenticate", value: "Basic realm=\"test-origin\"")
                return plan
            }
            let (data, type) = wrapped()
            return plain(data, type)
        case "cookie" where rest == "/set":
            var plan = text(.ok, "cookies set")
            let maxAge = query["maxAge"]
            let cookiePath = query["path"] ?? "/"
            for item in components?.queryItems ?? [] where !["maxAge", "path"].contains(item.name) {
                var cookie = "\(item.name)=\(item.value ?? ""); Path=\(cookiePath)"
                if let maxAge { cookie += "; Max-Age=\(maxAge)" }
                plan.headers.add(name: "Set-Cookie", value: cookie)
            }
            return plan
        case "cookie" where rest == "/echo":
            return text(.ok, head.headers["Cookie"].joined(separator: "; "))
        case "html":
            var plan = text(.ok, "<!doctype html><title>not an image</title>")
            plan.headers.replaceOrAdd(name: "Content-Type", value: "text/html; charset=utf-8")
            return plan
        default:
            return text(.notFound, "not found")
        }
    }

    private func serve(_ content: TestOrigin.Content, head: HTTPRequestHead) -> ResponsePlan {
        var headers = HTTPHeaders()
        if let etag = content.etag { headers.add(name: "ETag", value: etag) }
        if let lastModified = content.lastModified { headers.add(name: "Last-Modified", value: lastModified) }
        if let cacheControl = content.cacheControl { headers.add(name: "Cache-Control", value: cacheControl) }
        for (name, value) in content.extraHeaders.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }
        if Self.isNotModified(content, head.headers) {
            return ResponsePlan(status: .notModified, headers: headers, body: .data(Data()))
        }
        headers.add(name: "Content-Type", value: content.contentType)
        headers.add(name: "Content-Length", value: String(content.data.count))
        return ResponsePlan(status: .ok, headers: headers, body: .data(content.data))
    }

    /// RFC 9110 §13.1: `If-None-Match` wins when present; `If-Modified-Since` is compared as a
    /// date (or, when either does not parse, as the exact string).
    private static func isNotModified(_ content: TestOrigin.Content, _ headers: HTTPHeaders) -> Bool {
        if let ifNoneMatch = headers["If-None-Match"].first {
            guard let etag = content.etag else { return false }
            func opaque(_ tag: some StringProtocol) -> String {
                let trimmed = tag.trimmingCharacters(in: .whitespaces)
                return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
            }
            return ifNoneMatch.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "*" || opaque($0) == opaque(etag) }
        }
        if let ifModifiedSince = headers["If-Modified-Since"].first, let lastModified = content.lastModified {
            if let since = httpDate(ifModifiedSince), let modified = httpDate(lastModified) { return modified <= since }
            return ifModifiedSince == lastModified
        }
        return false
    }

    /// What `/flaky/…` answers while it fails: with `mode=reset` a TCP RST before any response,
    /// with `mode=stall` nothing ever; else `status` (default 503), with `code` as an S3 error
    /// document naming that code (`SlowDown`), and `Retry-After: retryAfter` when given.
    private func flakyFailure(_ query: [String: String]) -> ResponsePlan {
        let status = HTTPResponseStatus(statusCode: query["status"].flatMap(Int.init) ?? 503)
        var plan = text(status, "status \(status.code)")
        if let code = query["code"] {
            plan = text(status, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code><Message>Please reduce your request rate.</Message><RequestId>flaky</RequestId></Error>")
            plan.headers.replaceOrAdd(name: "Content-Type", value: "application/xml")
        }
        if let retryAfter = query["retryAfter"] { plan.headers.add(name: "Retry-After", value: retryAfter) }
        switch query["mode"] {
        case "reset": plan.delivery = .resetBeforeHead
        case "stall": plan.delivery = .stallBeforeHead
        default: break
        }
        return plan
    }

    private func text(_ status: HTTPResponseStatus, _ body: String) -> ResponsePlan {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        return ResponsePlan(status: status, headers: headers, body: .data(Data(body.utf8)))
    }

    private func redirect(to location: String) -> ResponsePlan {
        var plan = text(.found, "see \(location)")
        plan.headers.add(name: "Location", value: location)
        return plan
    }
}
