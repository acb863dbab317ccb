import Foundation
import NIOCore
import NIOPosix

/// One TCP connection to a loopback server, written to as raw bytes: for what an HTTP client
/// library hides (several requests in one write, the order of the answers, who closes).
///
/// ```swift
/// try await RawHTTPConnection.with(port: port) { connection in
///     try await connection.send(["GET /healthz HTTP/1.1"])
///     #expect(try await connection.response().status == 200)
/// }
/// ```
public struct RawHTTPConnection {
    public struct Response {
        /// The status line's protocol: `HTTP/1.1` or `HTTP/1.0`.
        public var version: String
        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]

        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var buffered: [UInt8] = []

    /// Connects to `127.0.0.1:port` from the loopback address `source` (any of 127.0.0.0/8: a
    /// client of its own to the server), runs `body`, and closes the connection.
    public static func with<Result>(port: Int, from source: String = "127.0.0.1", _ body: (inout RawHTTPConnection) async throws -> Result) async throws -> Result {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(to: try SocketAddress(ipAddress: source, port: 0))
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var connection = RawHTTPConnection(inbound: inbound.makeAsyncIterator(), outbound: outbound)
            return try await body(&connection)
        }
    }

    /// Sends `requests` (each a request line and its headers, without the blank line) in one write.
    public func send(_ requests: [String]) async throws {
        let text = requests.map { $0 + "\r\nHost: 127.0.0.1\r\n\r\n" }.joined()
        try await outbound.write(ByteBuffer(string: text))
    }

    /// Sends `text` exactly as given: a partial request, or one with headers of its own.
    public func sendRaw(_ text: String) async throws {
        try await outbound.write(ByteBuffer(string: text))
    }

    /// Reads the next response; `bodyless` for the answer to a `HEAD`, whose `Content-Length`
    /// announces a body that is not sent.
    public mutating func response(bodyless: Bool = false) async throws -> Response {
        var headEnd: Int?
        while true {
            headEnd = Self.endOfHead(in: buffered)
            if headEnd != nil { break }
            guard try await fill() else { throw ConnectionClosed() }
        }
        let head = String(decoding: buffered[..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        let version = String(statusLine[0]), status = Int(statusLine[1])!
        let headers = lines.filter { !$0.isEmpty }.map { line -> (String, String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        buffered.removeFirst(headEnd! + 4)
        var response = Response(version: version, status: status, headers: headers, body: [])
        let length = bodyless ? 0 : Int(response.header("Content-Length") ?? "0")!
        while buffered.count < length {
            guard try await fill() else { throw ConnectionClosed() }
        }
        response.body = Array(buffered[..<length])
        buffered.removeFirst(length)
        return response
    }

    /// Whether the server closed the connection, once everything it sent has been read.
    public mutating func isClosedByServer() async throws -> Bool {
        while try await fill() {}
        return buffered.isEmpty
    }

    /// Reads until the server closes the connection, whatever it sends first; the bytes read.
    public mutating func readUntilClosedByServer() async throws -> Int {
        while try await fill() {}
        defer { buffered.removeAll() }
        return buffered.count
    }

    public struct ConnectionClosed: Error {}

    private mutating func fill() async throws -> Bool {
        guard let chunk = try await inbound.next() else { return false }
        buffered.append(contentsOf: chunk.readableBytesView)
        return true
    }

    private static func endOfHead(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}

extension RawHTTPConnection {
    /// Whether a new connection's request goes unanswered: the server closes the connection
    /// (the client reads the end, or a reset if its request arrived after the close).
    public static func isRefused(port: Int, from source: String = "127.0.0.1") async throws -> Bool {
        do {
            return try await with(port: port, from: source) { connection in
                try await connection.send(["GET /healthz HTTP/1.1"])
                _ = try await connection.response()
                return false
            }
        } catch is ConnectionClosed {
            return true
        } catch let error as IOError where [ECONNRESET, EPIPE].contains(error.errnoCode) {
            return true
        } catch is ChannelError {
            // Writing the request after the close.
            return true
        }
    }
}
