import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// The SSRF rule over parsed addresses: every refused range, its edges, and what stays
/// allowed. No test here opens a connection or sends a packet.
@Suite struct AddressPolicyTests {
    let policy = AddressPolicy()

    func verdict(_ text: String, _ policy: AddressPolicy = AddressPolicy()) throws -> AddressPolicy.Verdict {
        let address = try #require(IPAddress(text), "\(text) should parse")
        return policy.verdict(for: address)
    }

    @Test("refused IPv4 ranges, first and last address of each", arguments: [
        "0.0.0.0", "0.255.255.255",
        "10.0.0.0", "10.255.255.255",
        "100.64.0.0", "100.127.255.255",
        "127.0.0.1", "127.0.0.2", "127.255.255.255",
        "169.254.0.0", "169.254.169.254", "169.254.255.255",
        "172.16.0.0", "172.31.255.255",
        "192.0.0.0", "192.0.0.255",
        "192.0.2.1", "198.51.100.7", "203.0.113.9",
        "192.88.99.1",
        "192.168.0.0", "192.168.255.255",
        "198.18.0.0", "198.19.255.255",
        "224.0.0.0", "239.255.255.255",
        "240.0.0.0", "254.255.255.255",
        "255.255.255.255",
    ])
    func refusedIPv4(_ address: String) throws {
        #expect(try !verdict(address).isAllowed)
    }

    @Test("public IPv4 addresses, including the neighbours of refused ranges", arguments: [
        "1.1.1.1", "8.8.8.8", "93.184.215.14",
        "9.255.255.255", "11.0.0.0",
        "100.63.255.255", "100.128.0.0",
        "126.255.255.255", "128.0.0.0",
        "169.253.255.255", "169.255.0.0",
        "172.15.255.255", "172.32.0.0",
        "192.167.255.255", "192.169.0.0",
        "198.17.255.255", "198.20.0.0",
        "223.255.255.255",
    ])
    func allowedIPv4(_ address: String) throws {
        #expect(try verdict(address) == .allowed)
    }

    @Test("refused IPv6 ranges", arguments: [
        "::", "::1",
        "::127.0.0.1", "::8.8.8.8",                // IPv4-compatible, deprecated
        "fc00::1", "fdff:ffff::1",                  // unique local
        "fe80::1", "febf:ffff::1",                  // link-local
        "fec0::1",                                   // site-local
        "ff00::", "ff02::1", "ffff:ffff::1",        // multicast
        "2001:db8::1",                               // documentation
        "2001::1",                                   // Teredo
        "100::1",                                    // discard-only
        "64:ff9b:1::1",                              // local-use NAT64
    ])
    func refusedIPv6(_ address: String) throws {
        #expect(try !verdict(address).isAllowed)
    }

    @Test("IPv4-mapped, NAT64 and 6to4 addresses are judged by the IPv4 address inside", arguments: [
        ("::ffff:127.0.0.1", false), ("::ffff:7f00:1", false), ("::ffff:10.1.2.3", false),
        ("::ffff:169.254.169.254", false), ("::ffff:0.0.0.0", false), ("::ffff:8.8.8.8", true),
        ("64:ff9b::10.0.0.1", false), ("64:ff9b::127.0.0.1", false), ("64:ff9b::808:808", true),
        ("2002:c0a8:0101::1", false), ("2002:0a00:0001::", false), ("2002:0808:0808::1", true),
    ])
    func embeddedIPv4(_ address: String, allowed: Bool) throws {
        #expect(try verdict(address).isAllowed == allowed)
    }

    @Test("public IPv6 addresses", arguments: ["2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::1"])
    func allowedIPv6(_ address: String) throws {
        #expect(try verdict(address) == .allowed)
    }

    @Test func loopbackOptInAllowsLoopbackOnly() throws {
        let development = AddressPolicy(allowsLoopback: true)
        for address in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
            #expect(try verdict(address, development) == .allowed, "\(address)")
        }
        for address in ["10.0.0.1", "169.254.169.254", "0.0.0.0", "::", "fe80::1", "fc00::1", "::ffff:192.168.1.1", "224.0.0.1"] {
            #expect(try !verdict(address, development).isAllowed, "\(address)")
        }
    }

    @Test func refusalsNameTheirRange() throws {
        #expect(try verdict("169.254.169.254") == .refused("link-local (169.254.0.0/16)"))
        #expect(try verdict("::ffff:10.0.0.1") == .refused("IPv4-mapped private (10.0.0.0/8)"))
    }

    @Test func parsing() {
        #expect(IPAddress("127.0.0.1") == .v4(0x7F00_0001))
        #expect(IPAddress("[::1]") == IPAddress("::1"))
        #expect(IPAddress("fe80::1%eth0") == IPAddress("fe80::1"))
        #expect(IPAddress("localhost") == nil)
        #expect(IPAddress("127.1") == nil)        // a name for the resolver, not an address
        #expect(IPAddress("2130706433") == nil)
        #expect(IPAddress("::ffff:127.0.0.1")?.description == "::ffff:127.0.0.1")
        #expect(IPAddress("10.0.0.1")?.description == "10.0.0.1")
    }

    /// The resolver is the system's: odd spellings of loopback resolve to loopback, and the
    /// policy refuses them. (Resolving names a host; it connects to nothing.)
    @Test func resolverTurnsOddSpellingsIntoAddresses() async throws {
        let resolver = HostResolver()
        #expect(try await resolver.addresses(of: "127.1") == [.v4(0x7F00_0001)])
        #expect(try await resolver.addresses(of: "2130706433") == [.v4(0x7F00_0001)])
        #expect(try await resolver.addresses(of: "0x7f.0.0.1") == [.v4(0x7F00_0001)])
        let localhost = try await resolver.addresses(of: "localhost")
        #expect(!localhost.isEmpty)
        #expect(localhost.allSatisfy { !AddressPolicy().verdict(for: $0).isAllowed })
    }

    @Test func allowlist() {
        let guardian = OriginGuard(allowedHosts: ["images.example.com", "*.cdn.example.net"])
        #expect(guardian.isAllowed(host: "images.example.com"))
        #expect(guardian.isAllowed(host: "images.example.com."))
        #expect(guardian.isAllowed(host: "a.cdn.example.net"))
        #expect(!guardian.isAllowed(host: "cdn.example.net"))
        #expect(!guardian.isAllowed(host: "evilcdn.example.net"))
        #expect(!guardian.isAllowed(host: "example.com"))
        #expect(!guardian.isAllowed(host: "images.example.com.evil.org"))
        #expect(OriginGuard().isAllowed(host: "anything.example"))
    }

    /// Hostile-input finding 7: a URL naming the proxy host's own interface address (not
    /// loopback) reached services bound to all interfaces. The host's own addresses count as
    /// loopback: refused, whatever their range, unless loopback is allowed, directly and in the
    /// IPv6 forms that embed an IPv4 address. (The addresses are given here: a public one the
    /// ranges alone would allow.)
    @Test func theHostsOwnAddressesAreLoopback() throws {
        var policy = AddressPolicy()
        let own = try #require(IPAddress("93.184.215.14")), ownV6 = try #require(IPAddress("2606:2800:21f:cb07:6820:80da:af6b:8b2c"))
        #expect(policy.verdict(for: own).isAllowed && policy.verdict(for: ownV6).isAllowed)
        policy.ownAddresses = [own, ownV6]
        #expect(policy.verdict(for: own) == .refused("this host's own address"))
        #expect(policy.verdict(for: ownV6) == .refused("this host's own address"))
        #expect(try verdict("::ffff:93.184.215.14", policy) == .refused("IPv4-mapped this host's own address"))
        #expect(try verdict("64:ff9b::5db8:d70e", policy) == .refused("NAT64 this host's own address"))
        #expect(try verdict("93.184.215.15", policy).isAllowed)
        policy.allowsLoopback = true
        #expect(policy.verdict(for: own).isAllowed && policy.verdict(for: ownV6).isAllowed)
    }

    /// What the policy reads by default: every address `ip -o addr` lists for this host's
    /// interfaces (iproute2, not the code under test, says which they are).
    @Test func theHostsAddressesAreItsInterfaces() throws {
        let listing = try CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["ip", "-o", "addr", "show"]).stdout
        let listed = Set(listing.split(separator: "\n").compactMap { line -> IPAddress? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let family = fields.firstIndex(where: { $0 == "inet" || $0 == "inet6" }), family + 1 < fields.count else { return nil }
            return IPAddress(String(fields[family + 1].split(separator: "/")[0]))
        })
        #expect(!listed.isEmpty)
        #expect(HostInterfaces.read() == listed)
        for address in listed {
            #expect(!AddressPolicy().verdict(for: address).isAllowed, "\(address)")
        }
    }
}
