import NIOCore

/// A request head read from a connection's bytes, ahead of NIO's HTTP/1 decoder, in the narrow
/// grammar of RFC 9112 that an image request uses: one request line, `name: value` fields,
/// every line ended by CRLF. `CachedVariantHandler` answers a hit from it, and finds where a
/// request it hands on ends.
///
/// Anything outside that grammar is ``Scan/unsupported``: the caller then hands the
/// connection's bytes, from there on, to NIO's decoder, which answers or refuses them. So
/// where this scan and the decoder could disagree on where a request ends (a folded line, a bare
/// LF, `Transfer-Encoding`, two `Content-Length`s, an `Upgrade`), this scan never decides.
@_spi(Testing) public struct RequestHeadScan: Sendable {
    public enum Method: Sendable {
        case get
        case head
        /// Any other token: a request this scan delimits and hands on.
        case other
    }

    /// What a connection's unread bytes begin with.
    public enum Scan: Sendable {
        /// Not yet a whole head.
        case incomplete
        /// Outside the grammar, or larger than ``maximumLength``.
        case unsupported
        /// A head of `length` bytes, followed by ``RequestHeadScan/bodyLength`` bytes of body.
        case head(RequestHeadScan, length: Int)
    }

    /// The longest head scanned. Longer ones are handed on: they are never an image hit.
    public static let maximumLength = 16_384
    /// The most fields scanned.
    static let maximumFields = 64

    public var method: Method
    public var target: String
    public var isHTTP10: Bool
    var accept: [String] = []
    var ifNoneMatch: [String] = []
    /// `Content-Length`, 0 without one.
    public var bodyLength = 0
    /// `Connection: close`.
    var asksToClose = false
    /// `Connection: keep-alive`.
    var asksToKeepAlive = false
    /// `Expect`: left to the decoder, which answers `100 Continue`.
    var hasExpectation = false

    /// Whether the connection stays open after the answer (RFC 9112 §9.3).
    public var keepsAlive: Bool {
        !asksToClose && (!isHTTP10 || asksToKeepAlive)
    }

    public static func scan(_ buffer: ByteBuffer) -> Scan {
        buffer.withUnsafeReadableBytes { bytes in
            var reader = LineReader(bytes: bytes)
            return scan(&reader)
        }
    }

    private static func scan(_ reader: inout LineReader) -> Scan {
        guard let requestLine = reader.nextLine() else { return reader.isOverLong ? .unsupported : .incomplete }
        guard let line = requestLine, var head = requestHead(line) else { return .unsupported }
        var fields = 0
        var hasLength = false
        while true {
            guard let next = reader.nextLine() else { return reader.isOverLong ? .unsupported : .incomplete }
            guard let line = next else { return .unsupported }
            if line.isEmpty { return .head(head, length: reader.offset) }
            fields += 1
            guard fields <= maximumFields, let (name, value) = field(line) else { return .unsupported }
            switch name {
            case .accept: head.accept.append(value)
            case .ifNoneMatch: head.ifNoneMatch.append(value)
            case .connection:
                for token in value.split(separator: ",") {
                    switch token.trimmingSpaces.lowercased() {
                    case "close": head.asksToClose = true
                    case "keep-alive": head.asksToKeepAlive = true
                    default: break
                    }
                }
            case .contentLength:
                guard !hasLength, (1...18).contains(value.utf8.count), value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                    return .unsupported
                }
                hasLength = true
                head.bodyLength = Int(value)!
            case .expect: head.hasExpectation = true
            case .unframed: return .unsupported
            case .other: break
            }
        }
    }

    /// `METHOD SP target SP HTTP/1.x`.
    private static func requestHead(_ line: UnsafeRawBufferPointer.SubSequence) -> RequestHeadScan? {
        let parts = line.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenByte),
              !parts[1].isEmpty, parts[1].allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        let version = parts[2]
        guard version.elementsEqual("HTTP/1.1".utf8) || version.elementsEqual("HTTP/1.0".utf8) else { return nil }
        let method: Method =
            if parts[0].elementsEqual("GET".utf8) { .get }
            else if parts[0].elementsEqual("HEAD".utf8) { .head }
            else { .other }
        return RequestHeadScan(
            method: method, target: String(decoding: parts[1], as: UTF8.self),
            isHTTP10: version.last == UInt8(ascii: "0"))
    }

    /// The fields this scan reads, and those that end it.
    private enum FieldName {
        case accept, ifNoneMatch, connection, contentLength, expect
        /// `Transfer-Encoding` or `Upgrade`: framing (or a protocol) this scan does not follow.
        case unframed
        case other

        init(_ name: UnsafeRawBufferPointer.SubSequence) {
            func isNamed(_ known: StaticString) -> Bool {
                guard name.count == known.utf8CodeUnitCount else { return false }
                return zip(name, UnsafeBufferPointer(start: known.utf8Start, count: known.utf8CodeUnitCount))
                    .allSatisfy { $0 | 0x20 == $1 }
            }
            self =
                if isNamed("accept") { .accept }
                else if isNamed("if-none-match") { .ifNoneMatch }
                else if isNamed("connection") { .connection }
                else if isNamed("content-length") { .contentLength }
                else if isNamed("expect") { .expect }
                else if isNamed("transfer-encoding") || isNamed("upgrade") { .unframed }
                else { .other }
        }
    }

    /// `name: value`, the value without the spaces around it; `nil` outside RFC 9110's grammar
    /// (a folded line, control characters, bytes over 0x7E).
    private static func field(_ line: UnsafeRawBufferPointer.SubSequence) -> (FieldName, String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { return nil }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value.removeFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
        guard value.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x09 }) else { return nil }
        let fieldName = FieldName(name)
        // Only the values read are made into strings.
        let text = fieldName == .other ? "" : String(decoding: value, as: UTF8.self)
        return (fieldName, text)
    }

    /// RFC 9110's `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// CRLF-ended lines of a head, up to ``RequestHeadScan/maximumLength`` bytes.
private struct LineReader {
    let bytes: UnsafeRawBufferPointer
    /// Where the next line starts.
    private(set) var offset = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Whether the bytes without a line's end already pass the longest head.
    var isOverLong: Bool { bytes.count >= RequestHeadScan.maximumLength }

    /// The next line without its CRLF; `nil` when its end has not been read, `.some(nil)` for a
    /// line ended by a bare LF or a line past the longest head.
    mutating func nextLine() -> UnsafeRawBufferPointer.SubSequence?? {
        let end = min(bytes.count, RequestHeadScan.maximumLength)
        guard let newline = bytes[offset..<end].firstIndex(of: 0x0A) else { return nil }
        guard newline > offset, bytes[newline - 1] == 0x0D else { return .some(nil) }
        let line = bytes[offset..<(newline - 1)]
        offset = newline + 1
        return .some(line)
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
