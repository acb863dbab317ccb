import Foundation

/// How `webimage serve` answers thumbor's URLs (`ThumborURL`): where, with which key, and
/// whether `/unsafe/` URLs are served.
///
/// ```swift
/// var configuration = ImageProxy.Configuration()
/// configuration.thumbor.prefix = "/"            // a drop-in: /unsafe/300x200/… at the root
/// configuration.thumbor.key = "my-security-key" // thumbor's SECURITY_KEY
/// configuration.thumbor.allowsUnsafe = false    // /unsafe/ answers 403
/// ```
///
/// Under the prefix `/`, the proxy's own routes (`/image`, `/info`, `/healthz`, `/metrics`, `/`,
/// `/favicon.ico`) keep their meaning; every other path is a thumbor URL. They cannot collide:
/// a thumbor URL's first segment is `unsafe`, a 28-character signature or `healthcheck`.
public struct ThumborConfiguration: Sendable, Hashable {
    /// The path thumbor URLs are served under (`/thumbor/unsafe/…`); `/` serves them at the
    /// root, as thumbor does; `nil` turns the dialect off. Default: `/thumbor`.
    public var prefix: String? = "/thumbor"
    /// thumbor's `SECURITY_KEY`: with it, signed URLs are served; without it, none is.
    public var key: String?
    /// thumbor's `ALLOW_UNSAFE_URL`: serve `/unsafe/…` URLs. Default: `false` (thumbor's own
    /// default is `true`; a proxy that resizes anything for anyone is not a safe default).
    public var allowsUnsafe = false

    public init() {}

    /// The prefix without its trailing `/` (`""` for the root), or `nil` when off.
    var normalizedPrefix: String? {
        guard var prefix else { return nil }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty, !prefix.hasPrefix("/") { prefix = "/" + prefix }
        return prefix
    }
}
