import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@_spi(Testing) @testable import WebImageServer

/// The scan of request heads ahead of the codec: what it reads, what it leaves to the codec, and
/// that where it finds a request it finds the one NIO's own decoder finds (method, target,
/// version, and where the request ends), so that the two never disagree on a connection's bytes.
@Suite struct RequestHeadScanTests {
    static let plain = "GET /image?url=a&w=10 HTTP/1.1\r\nHost: x\r\nAccept: image/webp\r\naccept: */*\r\nIf-None-Match:  \"a\" \r\nConnection: keep-alive, TE\r\n\r\n"

    static func scan(_ text: String) -> RequestHeadScan.Scan {
        RequestHeadScan.scan(ByteBuffer(string: text))
    }

    @Test func aHeadIsReadWithTheFieldsAnAnswerNeeds() throws {
        guard case .head(let head, let length) = Self.scan(Self.plain + "GET /next") else {
            Issue.record("not a head")
            return
        }
        #expect(length == Self.plain.utf8.count)
        #expect(head.method == .get && head.target == "/image?url=a&w=10" && !head.isHTTP10)
        #expect(head.accept == ["image/webp", "*/*"] && head.ifNoneMatch == ["\"a\""])
        #expect(head.asksToKeepAlive && !head.asksToClose && head.keepsAlive && head.bodyLength == 0)
        guard case .head(let old, _) = Self.scan("HEAD / HTTP/1.0\r\n\r\n") else {
            Issue.record("not a head")
            return
        }
        #expect(old.method == .head && old.isHTTP10 && !old.keepsAlive)
    }

    /// Every prefix of a head is incomplete: a head split across reads is never misread.
    @Test func everyPrefixIsIncomplete() {
        for end in 0..<Self.plain.utf8.count {
            let prefix = String(decoding: Array(Self.plain.utf8)[..<end], as: UTF8.self)
            guard case .incomplete = Self.scan(prefix) else {
                Issue.record("a prefix of \(end) bytes is not incomplete")
                continue
            }
        }
    }

    /// Bytes whose framing (or grammar) the scan does not follow go to the codec.
    @Test(arguments: [
        "GET / HTTP/1.1\nHost: x\n\n",                                  // bare LFs
        "GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",                 // an obsolete folded line
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n",
        "GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "\r\nGET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
        "GET / HTTP/1.1\r\nX: a\u{1}b\r\n\r\n",
        "GET / HTTP/1.1\r\nX: caf\u{E9}\r\n\r\n",
        "GET /\u{E9} HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: 65) + "\r\n",
        "GET /" + String(repeating: "a", count: RequestHeadScan.maximumLength) + " HTTP/1.1\r\n\r\n",
    ])
    func whatTheScanDoesNotFollowIsTheCodecs(_ text: String) {
        guard case .unsupported = Self.scan(text) else {
            Issue.record("scanned as a head or incomplete: \(text.debugDescription)")
            return
        }
    }

    /// Where the scan finds a request, NIO's decoder finds the same one, ending at the same
    /// byte: the request sent after it is the next one the decoder reads.
    @Test(arguments: [
        plain,
        "HEAD /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        "POST /healthz HTTP/1.1\r\ncontent-length: 0\r\n\r\n",
        "GET /a%20b?c=d HTTP/1.1\r\nX-Empty:\r\nX-Tab:\tv\t\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nab",
    ])
    func theScanAndNIOsDecoderFindTheSameRequest(_ text: String) throws {
        let next = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"
        guard case .head(let head, let length) = Self.scan(text + next) else {
            Issue.record("not a head")
            return
        }
        #expect(length + head.bodyLength == text.utf8.count)
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        try channel.writeInbound(ByteBuffer(string: text + next))
        var parts: [HTTPServerRequestPart] = []
        while let part = try channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
        let heads = parts.compactMap { if case .head(let head) = $0 { head } else { nil } }
        let bodyBytes = parts.reduce(0) { if case .body(let body) = $1 { $0 + body.readableBytes } else { $0 } }
        #expect(heads.map(\.uri) == [head.target, "/next"])
        #expect(heads.first?.version == (head.isHTTP10 ? .http1_0 : .http1_1))
        #expect(bodyBytes == head.bodyLength)
        let method = heads.first?.method
        #expect(head.method == (method == .GET ? .get : method == .HEAD ? .head : .other))
        _ = try channel.finish()
    }
}
