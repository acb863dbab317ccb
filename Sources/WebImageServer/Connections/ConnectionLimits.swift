/// How long a client may hold a connection without using it, and how many connections the
/// proxy keeps open at once: without them, a few thousand idle connections use up the
/// process's file descriptors and the proxy stops answering anyone.
///
/// ```swift
/// var configuration = ImageProxy.Configuration()
/// configuration.limits.connections.headerTimeout = .seconds(5)
/// configuration.limits.connections.maximumConnections = 1_000
/// configuration.limits.connections.trustedProxies = ["10.0.0.5"]   // nginx in front
/// ```
public struct ConnectionLimits: Sendable, Hashable {
    /// How long a client has to send a whole request once it has started one (its first byte;
    /// for a new connection, the connection itself), head and body. A client that trickles a
    /// header (slowloris) is closed when it runs out. Default: 10 seconds.
    public var headerTimeout: Duration = .seconds(10)
    /// How long a kept-alive connection may wait for its next request after a response.
    /// Default: 60 seconds (what browsers and CDNs keep idle connections for, or less).
    public var idleTimeout: Duration = .seconds(60)
    /// The most connections open at once; a connection beyond it is closed as soon as it is
    /// accepted, so the process never runs out of file descriptors. Default: 4,096, or less
    /// when the descriptor limit is lower (``defaultMaximumConnections``).
    public var maximumConnections = ConnectionLimits.defaultMaximumConnections
    /// The most connections one client may hold open at once; its next one is closed as soon as
    /// it is accepted, so that one client cannot take every connection. A client is an IPv4
    /// address, or an IPv6 /64 (one host's share of a network). Connections from
    /// ``trustedProxies`` are not counted this way: the requests they carry are, per client they
    /// name in `X-Forwarded-For`, against the same number of requests in progress. Default: 128
    /// (a browser opens six connections to a host).
    public var maximumConnectionsPerClient = 128
    /// Connections accepted past ``maximumConnections`` that answer only `/healthz` and
    /// `/metrics` (anything else gets `503` and the connection closes), so that a health checker
    /// and a metrics scraper still get through when clients hold every other connection.
    /// Default: 16.
    public var reservedConnections = 16
    /// Addresses of proxies in front (a load balancer, nginx, a CDN's edges), exactly as they
    /// connect (`10.0.0.5`, `::1`): their connections are exempt from
    /// ``maximumConnectionsPerClient``, and for their requests the client is the rightmost
    /// `X-Forwarded-For` address that is not itself one of them. `X-Forwarded-For` from anyone
    /// else is ignored. Default: none.
    public var trustedProxies: [String] = []

    public init() {}

    /// Descriptors left for everything that is not a client connection: cache files, origin
    /// connections, the listening socket, logs.
    static let reservedDescriptors = 256

    /// 4,096, or the process's soft descriptor limit less `reservedDescriptors` when that is
    /// lower (Debian's default soft limit is 1,024), but never below 64.
    public static var defaultMaximumConnections: Int {
        // RLIM_INFINITY is the largest value: clamped, it leaves 4,096.
        guard let limit = SocketPlatform.softDescriptorLimit() else { return 4_096 }
        let available = limit - reservedDescriptors
        return max(64, min(4_096, available))
    }
}
