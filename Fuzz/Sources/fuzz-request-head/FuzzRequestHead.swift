import FuzzSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
@_spi(Testing) import WebImageServer

/// A connection's bytes as `CachedVariantHandler` reads them ahead of NIO's HTTP/1 decoder
/// (`RequestHeadScan`). The input is the bytes. Invariants: a head found is within the bytes
/// and the longest head scanned, and no shorter prefix of it is a head (a head split across
/// reads is read the same); and where the scan finds a request that NIO's decoder accepts, the
/// decoder finds the same method, target and version, the same body, and the request after it
/// where the scan says it starts: the two never disagree on where a request ends.
func fuzzRequestHead(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = ByteBuffer(bytes: FuzzInput.data(bytes, count))
    guard case .head(let head, let length) = RequestHeadScan.scan(input) else { return 0 }
    if length > count || length > RequestHeadScan.maximumLength { FuzzInput.finding("a head of \(length) bytes in \(count)") }
    for end in Set([length - 1, length / 2, 1]) where end > 0 && end < length {
        if case .head = RequestHeadScan.scan(input.getSlice(at: 0, length: end)!) {
            FuzzInput.finding("a prefix of \(end) bytes of a \(length)-byte head is a head")
        }
    }
    // NIO's decoder refuses bytes after a request that closes the connection.
    guard head.keepsAlive, length + head.bodyLength <= count else { return 0 }
    var request = input.getSlice(at: 0, length: length + head.bodyLength)!
    request.writeString("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
    compareWithNIO(head, request)
    return 0
}

private func compareWithNIO(_ head: RequestHeadScan, _ request: ByteBuffer) {
    let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
    defer { _ = try? channel.finish() }
    var parts: [HTTPServerRequestPart] = []
    do {
        try channel.writeInbound(request)
        while let part = try channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
    } catch {
        // The decoder refuses what the scan read: the codec would answer 400 where the handler
        // answers or hands on, but neither reads past the request the scan delimited.
        return
    }
    let heads = parts.compactMap { if case .head(let head) = $0 { head } else { nil } }
    let body = parts.reduce(0) { if case .body(let body) = $1 { $0 + body.readableBytes } else { $0 } }
    guard heads.count == 2, heads[0].uri == head.target, heads[1].uri == "/next", body == head.bodyLength else {
        FuzzInput.finding("NIO read \(heads.map(\.uri)) and \(body) body bytes where the scan read \(head.target) and \(head.bodyLength)")
    }
    if heads[0].version != (head.isHTTP10 ? .http1_0 : .http1_1) { FuzzInput.finding("NIO read version \(heads[0].version)") }
    let method: RequestHeadScan.Method = heads[0].method == .GET ? .get : heads[0].method == .HEAD ? .head : .other
    if method != head.method { FuzzInput.finding("NIO read method \(heads[0].method)") }
}
