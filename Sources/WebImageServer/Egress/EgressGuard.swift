import Logging
import NIOCore
import NIOPosix
import NIOSOCKS
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The proxy's only way out to origins: a SOCKS5 proxy inside the process, on a loopback port
/// of its own, through which the HTTP loader opens every connection
/// (`HTTPImageLoader/Configuration/socksProxy`).
///
/// The loader hands it host names unresolved. For each connection the guard resolves the name
/// once, checks every address with the ``OriginGuard`` (``OriginGuard/addressesToConnect(host:port:)``)
/// and connects to those checked addresses, first to last until one answers: the address
/// judged is the address reached, which closes the DNS-rebinding window of a check followed by
/// a second resolution. TLS runs end to end through the tunnel, verified against the host name.
///
/// It accepts only SOCKS5 `CONNECT` without authentication, on 127.0.0.1. Another program on the
/// machine could use it too, but it would only reach what the proxy itself may fetch.
///
/// ```swift
/// let egress = try EgressGuard(originGuard: originGuard, logger: logger)
/// http.socksProxy = .init(host: "127.0.0.1", port: egress.port)
/// ```
final class EgressGuard: Sendable {
    /// The loopback port it listens on.
    let port: Int
    private let channel: EventLoopFuture<any Channel>

    /// Binds a loopback port at once (so ``port`` is known before any connection is made) and
    /// starts serving it on NIO's shared event loops.
    init(originGuard: OriginGuard, logger: Logger, connectTimeout: Duration = .seconds(10)) throws {
        let (socket, port) = try Self.listeningSocket()
        self.port = port
        let timeout = TimeAmount(connectTimeout)
        channel = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        SOCKSServerHandshakeHandler(),
                        EgressHandshakeHandler(originGuard: originGuard, logger: logger, connectTimeout: timeout),
                    ])
                }
            }
            .withBoundSocket(socket)
    }

    /// Stops accepting connections; the ones open end with their peers.
    func shutdown() async {
        try? await channel.get().close()
    }

    /// A TCP socket bound to 127.0.0.1 on a port the kernel picks, listening.
    private static func listeningSocket() throws -> (CInt, Int) {
        let descriptor = socket(AF_INET, SocketPlatform.streamType, 0)
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && listen(descriptor, 256) == 0
                    && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw IOError(errnoCode: code, reason: "binding the egress guard to 127.0.0.1")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
