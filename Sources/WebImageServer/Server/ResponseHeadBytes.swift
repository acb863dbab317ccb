import HTTPTypes
import NIOCore

extension ByteBuffer {
    /// Writes `head` as HTTP/1 does on the wire: the status line, each field, the empty line.
    /// `CachedVariantHandler` answers ahead of NIO's encoder, and writes what it would have.
    ///
    /// - Parameters:
    ///   - isHTTP10: answer in HTTP/1.0, to a client that asked in it.
    ///   - connection: a `Connection` field to add (`close`, or `keep-alive` for HTTP/1.0).
    mutating func writeResponseHead(_ head: HTTPResponse, isHTTP10: Bool, connection: StaticString?) {
        writeStaticString(isHTTP10 ? "HTTP/1.0 " : "HTTP/1.1 ")
        switch head.status.code {
        case 200: writeStaticString("200 OK\r\n")
        case 304: writeStaticString("304 Not Modified\r\n")
        default:
            writeString(String(head.status.code))
            writeStaticString(" ")
            writeString(head.status.reasonPhrase)
            writeStaticString("\r\n")
        }
        // NIO's encoder drops a 304's Content-Length (a length with no body after it).
        let dropsLength = head.status.code == 304
        for field in head.headerFields where !(dropsLength && field.name == .contentLength) {
            writeString(field.name.rawName)
            writeStaticString(": ")
            writeString(field.value)
            writeStaticString("\r\n")
        }
        if let connection {
            writeStaticString("Connection: ")
            writeStaticString(connection)
            writeStaticString("\r\n")
        }
        writeStaticString("\r\n")
    }
}
