import HTTPTypes
import NIOCore

extension ByteBuffer {
    /// The header fields of `head` as HTTP/1 writes them, each line ended by CRLF, without the
    /// status line and the empty line (`CachedVariantHandler` writes those, and `Date`).
    init(fieldsOf head: HTTPResponse) {
        self.init()
        // NIO's encoder drops a 304's Content-Length (a length with no body after it).
        let dropsLength = head.status.code == 304
        for field in head.headerFields where !(dropsLength && field.name == .contentLength) {
            writeString(field.name.rawName)
            writeStaticString(": ")
            writeString(field.value)
            writeStaticString("\r\n")
        }
    }

    /// Writes a response head as HTTP/1 does on the wire: the status line, `fields` (see
    /// ``init(fieldsOf:)``), `Date`, and the empty line.
    ///
    /// - Parameters:
    ///   - status: `200` or `304`.
    ///   - isHTTP10: answer in HTTP/1.0, to a client that asked in it.
    ///   - connection: a `Connection` field to add (`close`, or `keep-alive` for HTTP/1.0).
    mutating func writeResponseHead(status: Int, fields: ByteBuffer, isHTTP10: Bool, connection: StaticString?) {
        writeStaticString(isHTTP10 ? "HTTP/1.0 " : "HTTP/1.1 ")
        writeStaticString(status == 304 ? "304 Not Modified\r\n" : "200 OK\r\n")
        writeImmutableBuffer(fields)
        writeStaticString("Date: ")
        writeString(HTTPDate.now)
        writeStaticString("\r\n")
        if let connection {
            writeStaticString("Connection: ")
            writeStaticString(connection)
            writeStaticString("\r\n")
        }
        writeStaticString("\r\n")
    }
}
