import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import WebImage

/// A small HTTP/1.1 origin on loopback that serves the image files of one folder: what
/// `make run` downloads from, so the demonstration needs no internet. The image proxy
/// (`webimage serve`) takes its place later.
///
/// The files are read once at start and served from memory, so the event loop never waits on
/// the disk. Only `GET` and `HEAD` of a file directly in the folder are answered; every other
/// path is a `404`.
///
/// ```swift
/// let origin = try await StaticOrigin.start(serving: URL(fileURLWithPath: "Demo/images"))
/// print(origin.url(for: "flower.webp"))   // http://127.0.0.1:PORT/flower.webp
/// try await origin.shutdown()
/// ```
package final class StaticOrigin: Sendable {
    /// One file ready to serve.
    struct File: Sendable {
        var data: Data
        var contentType: String
        var etag: String
    }

    /// The port the origin listens on, on 127.0.0.1.
    package let port: Int
    /// The names of the files served, sorted.
    package let names: [String]
    private let channel: any Channel

    private init(channel: any Channel, port: Int, names: [String]) {
        self.channel = channel
        self.port = port
        self.names = names
    }

    /// Reads every image in `folder` (formats sniffed from the bytes; other files, and anything
    /// that is not a regular file, are left out) and starts serving them on `127.0.0.1:port`
    /// (0: any free port).
    package static func start(serving folder: URL, port: Int = 0) async throws -> StaticOrigin {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        var files: [String: File] = [:]
        for name in names {
            guard let data = try? POSIXFile.readRegularFile(folder.appendingPathComponent(name).path),
                  let format = ImageFormat(sniffing: data) else { continue }
            files["/" + name] = File(data: data, contentType: format.mimeType, etag: "\"\(data.count)-\(data.hashValue & 0xFFFF_FFFF)\"")
        }
        let served = files
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(FileHandler(files: served))
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .get()
        guard let boundPort = channel.localAddress?.port else {
            try? await channel.close()
            throw ChannelError.unknownLocalAddress
        }
        return StaticOrigin(channel: channel, port: boundPort, names: files.keys.map { String($0.dropFirst()) }.sorted())
    }

    /// The URL of a served file.
    package func url(for name: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)/\(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)")!
    }

    /// Stops listening.
    package func shutdown() async throws {
        try await channel.close()
    }
}

/// Answers each request from the files in memory.
private final class FileHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let files: [String: StaticOrigin.File]
    private var head: HTTPRequestHead?

    init(files: [String: StaticOrigin.File]) {
        self.files = files
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = String(request.uri.prefix { $0 != "?" }).removingPercentEncoding ?? request.uri
        var headers = HTTPHeaders()
        let status: HTTPResponseStatus
        var body: Data?
        if request.method != .GET && request.method != .HEAD {
            status = .methodNotAllowed
            headers.add(name: "Allow", value: "GET, HEAD")
        } else if let file = files[path] {
            headers.add(name: "ETag", value: file.etag)
            headers.add(name: "Cache-Control", value: "max-age=3600")
            if request.headers["If-None-Match"].contains(file.etag) {
                status = .notModified
            } else {
                status = .ok
                headers.add(name: "Content-Type", value: file.contentType)
                body = file.data
            }
        } else {
            status = .notFound
            body = Data("not found\n".utf8)
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        headers.add(name: "Content-Length", value: String(body?.count ?? 0))
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if let body, request.method == .GET {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        }
    }
}
