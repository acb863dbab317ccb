import Foundation
import WebImageCore

extension HTTPImageLoader {
    /// The order in which downloads of the same priority leave the queue.
    public enum QueueOrder: Sendable, Equatable {
        /// First queued, first started (the default).
        case fifo
        /// Last queued, first started: what a scrolling list wants, since the newest cells are
        /// the visible ones.
        case lifo
    }

    /// HTTP basic credentials, sent as `Authorization: Basic …` to the host of the requested
    /// URL (never to another host a redirect leads to).
    public struct Credentials: Sendable, Equatable {
        public var user: String
        public var password: String

        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }

        var headerValue: String {
            "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
    }

    /// Limits, headers and policies of an ``HTTPImageLoader``.
    ///
    /// ```swift
    /// var configuration = HTTPImageLoader.Configuration()
    /// configuration.maximumConcurrentDownloads = 4
    /// configuration.timeout = .seconds(30)
    /// configuration.retryPolicy = RetryPolicy(maximumAttempts: 4)
    /// configuration.headers["X-Client"] = "gallery"
    /// configuration.requestModifier = { request in
    ///     var request = request
    ///     request.headers["Authorization"] = "Bearer \(await tokens.current())"
    ///     return request
    /// }
    /// let loader = HTTPImageLoader(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Downloads that run at once; more wait in the queue. Also the width of the
        /// connection pool per host, so that no download waits for a connection while holding
        /// a slot. Default: 6.
        public var maximumConcurrentDownloads = 6
        /// Order among waiting downloads of the same priority. Default: ``QueueOrder/fifo``.
        public var order: QueueOrder = .fifo
        /// The longest a download may take, from sending the first request to the last body
        /// byte, redirects and retries included: a retry gets what is left of it, and none starts
        /// that could not begin before it ends. AsyncHTTPClient's own deadline ends at the
        /// response head, so the loader enforces the body itself. Default: 15 seconds.
        public var timeout: Duration = .seconds(15)
        /// The longest an attempt may wait for the response's head, from sending the request
        /// (opening the connection included). A server that accepts the connection and then
        /// says nothing fails the attempt with a timeout, which is tried again while
        /// ``timeout`` leaves time; a slow body is not cut short by it. Default `nil`: a third
        /// of ``timeout`` (5 seconds of the default 15), so that two retries fit in it.
        public var headTimeout: Duration?

        /// ``headTimeout``, or a third of ``timeout`` when it is `nil`.
        var resolvedHeadTimeout: Duration { headTimeout ?? timeout / 3 }
        /// How a download that failed before any of its body arrived is tried again: a refused
        /// or lost connection, a timeout, `408`, `429`, `500`, `502`, `503`, `504`
        /// (``RetryPolicy``). A request's own ``ImageLoadRequest/retryPolicy`` wins. Default: 3
        /// attempts in all, waits of full jitter from 200 ms doubling up to 2 s, a `Retry-After`
        /// honoured up to 2 s; ``RetryPolicy/never`` tries once.
        public var retryPolicy = RetryPolicy()
        /// The longest a TCP (and TLS) connection may take to open. Default: 10 seconds.
        public var connectTimeout: Duration = .seconds(10)
        /// The most bytes a response body may have: a larger `Content-Length` fails at once
        /// without reading the body, and a body without one fails as soon as it passes the
        /// limit. Default: 50 MiB.
        public var maximumResponseSize = 50 << 20
        /// Redirects followed before the download fails with
        /// ``ImageError/NetworkFailure/Kind/redirects``. A redirect back to a URL already seen
        /// fails at once. Default: 10.
        public var maximumRedirects = 10
        /// Sent as `User-Agent` unless a request sets its own.
        public var userAgent = "swift-web-image/\(LibraryVersion.string)"
        /// Sent as `Accept` unless a request sets its own: the MIME types of the formats the
        /// decoders read, then `image/*;q=0.8`. Unless set, or given to the initializer,
        /// ``ImageManager/Configuration/standard(cache:http:registry:)`` lists the formats its
        /// registry decodes.
        public var accept: String {
            didSet { acceptsRegistryFormats = false }
        }
        /// Whether ``accept`` is still the default, for the manager to replace with its
        /// registry's formats.
        package private(set) var acceptsRegistryFormats = false
        /// Header fields sent with every request; a request's own headers win.
        public var headers: [String: String] = [:]
        /// Changes every request just before it is sent (before the request's own modifier):
        /// sign URLs, add fresh tokens.
        public var requestModifier: (@Sendable (ImageLoadRequest) async throws -> ImageLoadRequest)?
        /// Basic credentials sent with every request to the requested host.
        public var credentials: Credentials?
        /// Whether every request sends and keeps cookies, as if it carried
        /// ``ImageOptions/handleCookies``. Default: `false`.
        public var handlesCookies = false
        /// The cookies kept for requests that handle cookies.
        public var cookieJar = CookieJar()
        /// Whether a `2xx` response whose `Content-Type` is neither `image/*` nor
        /// `application/octet-stream` (which object stores send for anything) fails with
        /// ``ImageError/unsupportedFormat(_:)`` before its body is read. Default: `false`: the
        /// format is sniffed from the bytes anyway.
        public var validatesContentType = false
        /// Called with every URL before it is requested: the first one and each redirect
        /// target. Throw to refuse it (for instance a private address, against SSRF); an
        /// ``ImageError`` passes through as it is.
        public var redirectPolicy: (@Sendable (URL) async throws -> Void)?
        /// A SOCKS5 proxy that opens every connection: host names are sent to it unresolved, so
        /// it is the proxy that resolves them and decides where to connect. `webimage serve`
        /// points this at its own egress guard, which checks the very addresses it connects to.
        /// `nil` (the default): connections are made directly.
        package var socksProxy: SOCKSProxy?

        /// PEM files of certificate authorities trusted for HTTPS besides the system's roots:
        /// for origins behind a private CA (a company's own image service, a staging host).
        /// Certificates are still verified, the host name included; only the roots grow. A
        /// file that cannot be read fails each HTTPS download with
        /// ``ImageError/NetworkFailure/Kind/tls``. Requests with
        /// ``ImageOptions/allowInvalidSSLCertificates`` verify nothing, as before. Default: none.
        public var additionalTrustRoots: [URL] = []

        /// Where a SOCKS5 proxy listens.
        package struct SOCKSProxy: Sendable, Hashable {
            package var host: String
            package var port: Int

            package init(host: String, port: Int) {
                self.host = host
                self.port = port
            }
        }

        /// A configuration whose `Accept` header lists `acceptedFormats`, most preferred first;
        /// `nil`, the formats the manager's registry decodes (every format the library knows,
        /// for a loader used on its own).
        public init(acceptedFormats: Set<ImageFormat>? = nil) {
            accept = Self.acceptHeader(for: acceptedFormats ?? Set(ImageFormat.allCases))
            acceptsRegistryFormats = acceptedFormats == nil
        }

        /// This configuration, its default `Accept` replaced by `formats`'s.
        package func accepting(_ formats: Set<ImageFormat>) -> Self {
            guard acceptsRegistryFormats else { return self }
            var configuration = self
            configuration.accept = Self.acceptHeader(for: formats)
            return configuration
        }

        /// `image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8` for those four formats:
        /// modern, compact formats first, so that an origin that negotiates picks them.
        package static func acceptHeader(for formats: Set<ImageFormat>) -> String {
            let preference: [ImageFormat] = [.avif, .jxl, .webp, .heic, .heif, .apng, .png, .jpeg, .gif, .svg, .tiff, .bmp, .ico, .mp4, .webm, .mov, .mkv, .pdf]
            let known = preference.filter(formats.contains)
            let others = formats.subtracting(preference).map(\.mimeType).sorted()
            var types: [String] = []
            for type in known.map(\.mimeType) + others where !types.contains(type) { types.append(type) }
            return (types + ["image/*;q=0.8"]).joined(separator: ",")
        }
    }
}
