import Crypto
import Foundation
import WebImage

/// Decides whether the proxy may fetch a URL: the host allowlist, then the address policy on
/// every address the host resolves to. The proxy asks it before loading, and the HTTP loader
/// asks it again for each redirect hop (`HTTPImageLoader/Configuration/redirectPolicy`).
///
/// ```swift
/// let origins = OriginGuard(allowedHosts: ["images.example.com", "*.cdn.example.net"],
///                           policy: AddressPolicy())
/// try await origins.check(URL(string: "http://169.254.169.254/latest/meta-data")!)  // throws
/// ```
///
/// ## DNS rebinding
///
/// A check that resolves a name, followed by a connection that resolves it again, leaves a
/// window: a hostile DNS server answering with a zero TTL can give the check a public address
/// and the connection a private one. The proxy closes it by making every connection through
/// its ``EgressGuard``, a SOCKS5 proxy inside the process to which AsyncHTTPClient sends the
/// host name unresolved: the guard resolves it once, checks every address
/// (``addressesToConnect(host:port:)``) and connects to those very addresses. TLS still
/// verifies the certificate against the host name, end to end through the tunnel.
package struct OriginGuard: Sendable {
    /// Hosts that may be fetched; empty allows every host. An entry `*.example.com` allows the
    /// subdomains of `example.com` (not `example.com` itself). Compared without case.
    package var allowedHosts: [String]
    package var policy: AddressPolicy
    package var resolver: HostResolver
    /// Origins (`http://127.0.0.1:8080`, compared as written in the URL) whose addresses are not
    /// checked. Exists only so that end-to-end tests can have one allowed origin on loopback
    /// while every other loopback target stays refused.
    package var trustedOrigins: Set<String> = []

    package init(allowedHosts: [String] = [], policy: AddressPolicy = AddressPolicy(), resolver: HostResolver = HostResolver()) {
        self.allowedHosts = allowedHosts.map { $0.lowercased() }
        self.policy = policy
        self.resolver = resolver
    }

    /// The reason a URL is refused. Its description names the rule, for the log; the client
    /// only ever sees "forbidden origin".
    package struct Refusal: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// Returns when `url` may be fetched.
    ///
    /// - Throws: ``Refusal`` when the scheme, the host or one of its addresses is not allowed;
    ///   `ImageError/network(_:)` when the host does not resolve.
    package func check(_ url: URL) async throws {
        guard let host = try checkWithoutResolving(url) else { return }
        _ = try await checkedAddresses(of: host)
    }

    /// The addresses of `host` (a name the allowlist already let through), each of which passes
    /// the policy: what the egress guard connects to.
    ///
    /// - Throws: ``Refusal`` when one of them is refused (the connection may use any of them);
    ///   `ImageError/network(_:)` when the host does not resolve.
    func checkedAddresses(of host: String) async throws -> [IPAddress] {
        let addresses = try await resolver.addresses(of: host)
        for address in addresses {
            if case .refused(let range) = policy.verdict(for: address) {
                throw Refusal(description: "\(host) resolves to \(address), \(range)")
            }
        }
        return addresses
    }

    /// Where a connection to `host`:`port` may go, judged as ``check(_:)`` judges a URL with that
    /// host and port (whatever its scheme): the addresses to connect to, each checked.
    ///
    /// - Throws: ``Refusal``, or `ImageError/network(_:)` when the host does not resolve.
    func addressesToConnect(host: String, port: Int) async throws -> [IPAddress] {
        let trusted = { (host: String) in
            trustedOrigins.contains("http://\(host):\(port)") || trustedOrigins.contains("https://\(host):\(port)")
        }
        switch try judge(host: host, isTrusted: trusted) {
        case .literal(let address): return [address]
        case .trusted(let host): return try await resolver.addresses(of: host)
        case .name(let host): return try await checkedAddresses(of: host)
        }
    }

    /// What the checks that need no DNS make of a host.
    private enum HostVerdict {
        /// A numeric address, allowed.
        case literal(IPAddress)
        /// A trusted origin's host: its addresses are not checked.
        case trusted(String)
        /// A name whose addresses remain to be resolved and checked.
        case name(String)
    }

    /// The allowlist, the trusted origins, and the policy for a numeric host, in that order;
    /// `host` is lowercased and its IPv6 brackets removed first.
    ///
    /// - Throws: ``Refusal``.
    private func judge(host: String, isTrusted: (String) -> Bool) throws -> HostVerdict {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard isAllowed(host: host) else {
            throw Refusal(description: "host \(host) is not on the allowlist")
        }
        let literal = IPAddress(host)
        if isTrusted(host) { return literal.map(HostVerdict.literal) ?? .trusted(host) }
        guard let literal else { return .name(host) }
        if case .refused(let range) = policy.verdict(for: literal) {
            throw Refusal(description: "\(host) is \(range)")
        }
        return .literal(literal)
    }

    /// The checks that need no DNS: the scheme, no credentials, the allowlist, and the address
    /// when the host is a numeric one. Cheap enough for every request, cache hits included.
    ///
    /// - Returns: the host name still to resolve and check, or `nil` when nothing is left.
    /// - Throws: ``Refusal``.
    @discardableResult
    package func checkWithoutResolving(_ url: URL) throws -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw Refusal(description: "scheme \(url.scheme ?? "none") is not fetched")
        }
        guard let host = url.host, !host.isEmpty else {
            throw Refusal(description: "no host")
        }
        // Refused here, where every hop is checked, so that a redirect cannot lead where a
        // URL given directly may not go: credentials in a URL would be sent to the origin.
        guard url.user == nil, url.password == nil else {
            throw Refusal(description: "the URL carries credentials")
        }
        let isTrusted = trustedOrigins.contains(Self.origin(of: url))
        guard case .name(let name) = try judge(host: host, isTrusted: { _ in isTrusted }) else { return nil }
        return name
    }

    /// A short digest of everything that decides what this guard lets through: the allowlist,
    /// the address policy, the trusted origins. The proxy puts it in the key of every variant
    /// made from a remote source, so that after a restart with a stricter policy no variant
    /// made under the old one is answered (a cache hit never resolves the host, so it could not
    /// be judged by today's policy otherwise); the source is then checked again as for a miss.
    package var policyDigest: String {
        let text = [
            allowedHosts.sorted().joined(separator: ","),
            "loopback=\(policy.allowsLoopback)",
            trustedOrigins.sorted().joined(separator: ","),
        ].joined(separator: "|")
        return Hex.encode(SHA256.hash(data: Data(text.utf8)).prefix(8))
    }

    /// Whether `host` (lowercased, without brackets) is on the allowlist.
    package func isAllowed(host: String) -> Bool {
        guard !allowedHosts.isEmpty else { return true }
        let host = host.hasSuffix(".") ? String(host.dropLast()) : host
        return allowedHosts.contains { entry in
            if entry.hasPrefix("*.") {
                return host.hasSuffix(entry.dropFirst()) && host.count > entry.count - 1
            }
            return host == entry
        }
    }

    /// `scheme://host:port`, the port always written.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
