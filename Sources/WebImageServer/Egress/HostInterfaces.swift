#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The addresses of this host's own network interfaces, which the SSRF rule treats as loopback:
/// a URL naming the proxy host's own public or private address reaches every service bound to
/// all interfaces (`0.0.0.0`, `[::]`) as surely as `127.0.0.1` does.
///
/// Read with `getifaddrs` and kept for a few seconds, so that a check costs a set lookup and an
/// address the host gains (DHCP, a new interface) is refused soon after it appears.
package enum HostInterfaces {
    private static let snapshot = Mutex<(addresses: Set<IPAddress>, read: ContinuousClock.Instant)?>(nil)
    /// How long one reading of the interfaces is used.
    static let refreshInterval: Duration = .seconds(5)

    /// The host's interface addresses (every family `getifaddrs` lists as IPv4 or IPv6, up or
    /// not), from a reading at most ``refreshInterval`` old.
    package static func addresses() -> Set<IPAddress> {
        let now = ContinuousClock.now
        if let cached = snapshot.withLock({ $0 }), now - cached.read < refreshInterval { return cached.addresses }
        let addresses = read()
        snapshot.withLock { $0 = (addresses, now) }
        return addresses
    }

    /// The addresses `getifaddrs` lists now; empty if it fails.
    package static func read() -> Set<IPAddress> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: Set<IPAddress> = []
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            if let address = current.pointee.ifa_addr.flatMap({ IPAddress(socketAddress: UnsafePointer($0)) }) { addresses.insert(address) }
            entry = current.pointee.ifa_next
        }
        return addresses
    }
}
