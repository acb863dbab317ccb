#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address as the resolver returned it: the proxy's SSRF check works on these, never on
/// host names.
///
/// ```swift
/// IPAddress("127.0.0.1")            // .v4(0x7F00_0001)
/// IPAddress("[::ffff:10.0.0.1]")    // .v6(…), an IPv4-mapped address
/// ```
package enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 address, most significant byte first (`127.0.0.1` is `0x7F00_0001`).
    case v4(UInt32)
    /// An IPv6 address, 16 bytes in network order.
    case v6([UInt8])

    /// Parses a numeric address in its standard text form (dotted quad, or RFC 4291 IPv6 with
    /// optional brackets and zone); `nil` for anything else, host names included.
    ///
    /// Only the strict forms parse: `127.1` or `2130706433` are not addresses here, they are
    /// names for the resolver (which does turn them into `127.0.0.1`, and the check then sees
    /// that).
    package init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, String(text), &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }

    /// The address of an IPv4 or IPv6 socket address (`getaddrinfo`'s and `getifaddrs`'s
    /// entries); `nil` for another family.
    package init?(socketAddress address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            self = .v4(UInt32(bigEndian: v4))
        case AF_INET6:
            var v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
        default:
            return nil
        }
    }

    package var description: String {
        switch self {
        case .v4(let value):
            return "\(value >> 24).\((value >> 16) & 0xFF).\((value >> 8) & 0xFF).\(value & 0xFF)"
        case .v6(let bytes):
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes.prefix(16)) }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}

/// Decides which addresses the proxy may fetch from: the SSRF rule. A pure function over
/// parsed addresses, so every range is tested without opening a connection.
///
/// Refused: every address that is not globally routable unicast, namely loopback, private
/// (RFC 1918, unique local), carrier-grade NAT, link-local, multicast, broadcast, unspecified,
/// reserved and documentation ranges. IPv6 addresses that embed an IPv4 address
/// (IPv4-mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4
/// address they lead to; Teredo (`2001::/32`), whose embedded address is obfuscated, is refused.
///
/// So `10.1.2.3` is refused (private, 10.0.0.0/8) and `93.184.215.14` allowed; `::1` is allowed
/// only with ``allowsLoopback``. The proxy host's own interface addresses count as loopback,
/// whatever their range: a URL naming them reaches the services bound to all interfaces.
///
/// ```swift
/// var configuration = ImageProxy.Configuration()
/// configuration.addressPolicy = AddressPolicy()                       // the default
/// configuration.addressPolicy = AddressPolicy(allowsLoopback: true)   // local development only
/// ```
public struct AddressPolicy: Sendable, Hashable {
    /// Lets loopback addresses (`127.0.0.0/8`, `::1`, and their mapped forms) through: for local
    /// development and tests only, never in production, where it exposes the proxy's own
    /// host (its `/metrics`, and every service bound to localhost).
    public var allowsLoopback: Bool

    /// Addresses refused besides the ranges, whatever ``allowsLoopback`` says: lets a test
    /// refuse one loopback address while another serves as the allowed origin.
    package var refusedAddresses: Set<IPAddress> = []

    /// The host's own addresses, treated as loopback (refused unless ``allowsLoopback``): `nil`
    /// reads the host's interfaces (``HostInterfaces``); tests give a set of their choosing.
    package var ownAddresses: Set<IPAddress>?

    public init(allowsLoopback: Bool = false) {
        self.allowsLoopback = allowsLoopback
    }

    /// What the policy says of one address.
    package enum Verdict: Sendable, Hashable {
        case allowed
        /// Refused, with the range it fell in (for logs, never for the client).
        case refused(String)

        package var isAllowed: Bool { self == .allowed }
    }

    package func verdict(for address: IPAddress) -> Verdict {
        if refusedAddresses.contains(address) { return .refused("refused by the test policy") }
        // IPv4 addresses are checked in verdict(v4:), which their embedded IPv6 forms reach too.
        if case .v6 = address, !allowsLoopback, (ownAddresses ?? HostInterfaces.addresses()).contains(address) {
            return .refused("this host's own address")
        }
        switch address {
        case .v4(let value):
            return verdict(v4: value)
        case .v6(let bytes):
            return verdict(v6: bytes)
        }
    }

    // MARK: IPv4

    /// The IPv4 ranges refused (RFC 6890's special-purpose registry, minus the globally
    /// reachable entries), as (network, prefix length, name).
    static let refusedV4: [(network: UInt32, prefix: Int, name: String)] = [
        (0x0000_0000, 8, "unspecified (0.0.0.0/8)"),
        (0x0A00_0000, 8, "private (10.0.0.0/8)"),
        (0x6440_0000, 10, "shared address space (100.64.0.0/10)"),
        (0xA9FE_0000, 16, "link-local (169.254.0.0/16)"),
        (0xAC10_0000, 12, "private (172.16.0.0/12)"),
        (0xC000_0000, 24, "IETF protocol assignments (192.0.0.0/24)"),
        (0xC000_0200, 24, "documentation (192.0.2.0/24)"),
        (0xC058_6300, 24, "6to4 relay anycast (192.88.99.0/24)"),
        (0xC0A8_0000, 16, "private (192.168.0.0/16)"),
        (0xC612_0000, 15, "benchmarking (198.18.0.0/15)"),
        (0xC633_6400, 24, "documentation (198.51.100.0/24)"),
        (0xCB00_7100, 24, "documentation (203.0.113.0/24)"),
        (0xE000_0000, 4, "multicast (224.0.0.0/4)"),
        (0xFFFF_FFFF, 32, "broadcast (255.255.255.255)"),
        (0xF000_0000, 4, "reserved (240.0.0.0/4)"),
    ]

    private func verdict(v4 value: UInt32) -> Verdict {
        if value >> 24 == 127 {
            return allowsLoopback ? .allowed : .refused("loopback (127.0.0.0/8)")
        }
        // Reached through an IPv6 form that embeds it (mapped, NAT64, 6to4): the host's own
        // IPv4 address is as much loopback as it is directly.
        if !allowsLoopback, (ownAddresses ?? HostInterfaces.addresses()).contains(.v4(value)) {
            return .refused("this host's own address")
        }
        for range in Self.refusedV4 where Self.matches(value, range.network, range.prefix) {
            return .refused(range.name)
        }
        return .allowed
    }

    private static func matches(_ value: UInt32, _ network: UInt32, _ prefix: Int) -> Bool {
        let mask: UInt32 = prefix == 0 ? 0 : ~UInt32(0) << (32 - prefix)
        return value & mask == network & mask
    }

    // MARK: IPv6

    /// The IPv6 ranges refused outright, as (network bytes, prefix length, name). Ranges that
    /// embed an IPv4 address are handled before these.
    static let refusedV6: [(network: [UInt8], prefix: Int, name: String)] = [
        ([0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, "discard-only (100::/64)"),
        ([0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01], 48, "local-use NAT64 (64:ff9b:1::/48)"),
        ([0x20, 0x01, 0x00, 0x00], 32, "Teredo (2001::/32)"),
        ([0x20, 0x01, 0x00, 0x10], 28, "ORCHID (2001:10::/28)"),
        ([0x20, 0x01, 0x00, 0x20], 28, "ORCHIDv2 (2001:20::/28)"),
        ([0x20, 0x01, 0x0D, 0xB8], 32, "documentation (2001:db8::/32)"),
        ([0x3F, 0xFF], 20, "documentation (3fff::/20)"),
        ([0xFC], 7, "unique local (fc00::/7)"),
        ([0xFE, 0x80], 10, "link-local (fe80::/10)"),
        ([0xFE, 0xC0], 10, "site-local (fec0::/10)"),
        ([0xFF], 8, "multicast (ff00::/8)"),
    ]

    private func verdict(v6 bytes: [UInt8]) -> Verdict {
        guard bytes.count == 16 else { return .refused("malformed IPv6 address") }
        let first10Zero = bytes[0..<10].allSatisfy { $0 == 0 }
        // ::ffff:a.b.c.d — the socket reaches the IPv4 host a.b.c.d.
        if first10Zero, bytes[10] == 0xFF, bytes[11] == 0xFF {
            return embedded(bytes, at: 12, via: "IPv4-mapped")
        }
        if first10Zero, bytes[10] == 0, bytes[11] == 0 {
            if bytes[12..<15].allSatisfy({ $0 == 0 }) {
                if bytes[15] == 0 { return .refused("unspecified (::)") }
                if bytes[15] == 1 { return allowsLoopback ? .allowed : .refused("loopback (::1)") }
            }
            // ::a.b.c.d, IPv4-compatible: deprecated, and nothing legitimate uses it.
            return .refused("IPv4-compatible (::/96)")
        }
        // 64:ff9b::a.b.c.d, the well-known NAT64 prefix: the translator reaches a.b.c.d.
        if bytes[0..<12].elementsEqual([0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) {
            return embedded(bytes, at: 12, via: "NAT64")
        }
        // 2002:a.b.c.d::/48, 6to4: tunnelled to a.b.c.d.
        if bytes[0] == 0x20, bytes[1] == 0x02 {
            return embedded(bytes, at: 2, via: "6to4")
        }
        for range in Self.refusedV6 where Self.matches(bytes, range.network, range.prefix) {
            return .refused(range.name)
        }
        return .allowed
    }

    private func embedded(_ bytes: [UInt8], at offset: Int, via name: String) -> Verdict {
        let value = bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        switch verdict(v4: value) {
        case .allowed: return .allowed
        case .refused(let range): return .refused("\(name) \(range)")
        }
    }

    private static func matches(_ bytes: [UInt8], _ network: [UInt8], _ prefix: Int) -> Bool {
        var remaining = prefix
        for (index, byte) in network.enumerated() where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[index] & mask != byte & mask { return false }
            remaining -= bits
        }
        return true
    }
}
