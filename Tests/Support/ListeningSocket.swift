import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket listening on a loopback address and never accepting: whether anyone connected
/// shows as a connection waiting in its backlog. The stand-in for an internal service that a
/// test must prove is never reached.
public final class ListeningSocket: Sendable {
    private let descriptor: Int32

    /// Listens on `address`:`port` (a 127.0.0.0/8 address), or `nil` when that cannot be bound.
    public init?(address: String, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = UInt16(port).bigEndian
        guard inet_pton(AF_INET, address, &socketAddress.sin_addr) == 1 else {
            Glibc.close(fd)
            return nil
        }
        let listening = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        } && listen(fd, 16) == 0
        guard listening else {
            Glibc.close(fd)
            return nil
        }
        descriptor = fd
    }

    /// Whether a connection is waiting to be accepted (checked without blocking).
    public var hasPendingConnection: Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0 && poller.revents & Int16(POLLIN) != 0
    }

    public func close() {
        Glibc.close(descriptor)
    }
}
