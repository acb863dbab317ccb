#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import WebImage

/// Turns a host name into the addresses a connection to it could reach, with the system's
/// `getaddrinfo` (so `/etc/hosts`, `127.1`, `2130706433` and every other spelling resolve
/// exactly as they would for a connection).
///
/// `getaddrinfo` blocks, for as long as the DNS server takes, so it runs on a
/// `BlockingExecutor` of its own and never on the cooperative pool.
///
/// ```swift
/// let resolver = HostResolver()
/// let addresses = try await resolver.addresses(of: "localhost")   // [127.0.0.1, ::1]
/// ```
package struct HostResolver: Sendable {
    package var executor: BlockingExecutor

    /// Four threads: a slow DNS answer holds one for its whole wait, and a proxy resolves
    /// often, but the answers are small.
    package static let sharedExecutor = BlockingExecutor(name: "webimage.dns", width: 4)

    /// Replaces `getaddrinfo`: a resolver whose answers a test chooses (a DNS server that answers
    /// differently each time, for the rebinding tests, where a real one cannot be pointed at).
    package var lookup: (@Sendable (String) throws -> [IPAddress])?

    package init(executor: BlockingExecutor = HostResolver.sharedExecutor) {
        self.executor = executor
    }

    /// The addresses of `host` (a name, or a numeric address in any form the resolver accepts).
    ///
    /// - Throws: `ImageError/network(_:)` with `ImageError/NetworkFailure/Kind/dnsFailure`
    ///   when the name does not resolve.
    package func addresses(of host: String) async throws -> [IPAddress] {
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if let lookup { return try lookup(name) }
        return try await executor.run { try Self.resolve(name) }
    }

    static func resolve(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = SocketPlatform.streamType
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else {
            throw ImageError.network(.init(.dnsFailure, "\(host) did not resolve (\(String(cString: gai_strerror(status))))"))
        }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let entry = next {
            if let address = entry.pointee.ai_addr.flatMap({ IPAddress(socketAddress: UnsafePointer($0)) }) { addresses.append(address) }
            next = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw ImageError.network(.init(.dnsFailure, "\(host) has no IPv4 or IPv6 address"))
        }
        var unique: [IPAddress] = []
        for address in addresses where !unique.contains(address) { unique.append(address) }
        return unique
    }
}
