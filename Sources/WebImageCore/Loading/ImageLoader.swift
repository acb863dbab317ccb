import Foundation

/// Fetches the encoded bytes of an image from where its URL points: the network, a file, a
/// `data:` URL.
///
/// The manager picks the first loader whose ``canLoad(_:)`` accepts the URL, calls
/// ``load(_:context:)`` once per download however many requests share it, and cancels the
/// calling task when no request wants the bytes any more: a loader stops its work then and
/// throws ``ImageError/cancelled``.
///
/// ```swift
/// struct BundleLoader: ImageLoader {
///     func canLoad(_ url: URL) -> Bool { url.scheme == "bundle" }
///     func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse {
///         let path = request.url.path(percentEncoded: false)   // bundle:///icons/a.png
///         let data = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/my-app" + path))
///         context.didReceive(data, received: data.count, expected: data.count)
///         return ImageLoadResponse(data: data, url: request.url)
///     }
/// }
/// ```
public protocol ImageLoader: Sendable {
    /// Whether this loader handles `url` (usually decided by its scheme alone).
    func canLoad(_ url: URL) -> Bool

    /// Loads the bytes `request` names.
    ///
    /// Report progress through `context` as bytes arrive, and follow its priority while the
    /// load waits for a slot.
    ///
    /// - Throws: an ``ImageError``: ``ImageError/cancelled`` when the calling task is
    ///   cancelled, ``ImageError/httpStatus(_:)``, ``ImageError/network(_:)``,
    ///   ``ImageError/timeout(_:)``, ``ImageError/tooLarge(_:)``, ``ImageError/invalidURL(_:)``.
    func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse

    /// Lets go of what the loader holds (connections, threads); called by
    /// ``ImageManager/shutdown()``. Loads after it may fail. Does nothing by default.
    func shutdown() async throws
}

/// What a loader is asked to fetch.
///
/// ```swift
/// var request = ImageLoadRequest(url: url)
/// request.headers["Authorization"] = "Bearer \(token)"
/// ```
public struct ImageLoadRequest: Sendable {
    /// Where the bytes are.
    public var url: URL
    /// Extra header fields for loaders that speak HTTP; names compare case-insensitively, and
    /// these win over the loader's own defaults.
    public var headers: [String: String]
    /// The options of the request (or, for a shared download, of the first request): loaders
    /// read ``ImageOptions/handleCookies`` and ``ImageOptions/allowInvalidSSLCertificates``.
    public var options: ImageOptions
    /// Validators of a cached copy: when set, an HTTP loader sends `If-None-Match` /
    /// `If-Modified-Since` and answers a `304` with ``ImageLoadResponse/isNotModified``.
    public var validators: Validators?
    /// Changes the request just before it is sent, after the loader's own modifier: sign the
    /// URL, add a fresh token.
    public var modifier: (@Sendable (ImageLoadRequest) async throws -> ImageLoadRequest)?
    /// How this request is retried, in place of the loader's own policy (the HTTP loader's
    /// ``HTTPImageLoader/Configuration/retryPolicy``, the S3 client's); `nil` (the default) keeps
    /// the loader's. Loaders that never retry (files, `data:` URLs) ignore it.
    public var retryPolicy: RetryPolicy?

    public init(url: URL, headers: [String: String] = [:], options: ImageOptions = [], validators: Validators? = nil) {
        self.url = url
        self.headers = headers
        self.options = options
        self.validators = validators
    }

    /// What identifies a cached copy to the origin.
    public struct Validators: Sendable, Hashable {
        /// The `ETag` the origin sent with the copy.
        public var etag: String?
        /// The `Last-Modified` the origin sent with the copy.
        public var lastModified: String?

        package init(etag: String? = nil, lastModified: String? = nil) {
            self.etag = etag
            self.lastModified = lastModified
        }

        /// The validators stored with a disk cache entry, or `nil` when it has none.
        package init?(_ metadata: DiskCache.Metadata) {
            guard metadata.etag != nil || metadata.lastModified != nil else { return nil }
            self.init(etag: metadata.etag, lastModified: metadata.lastModified)
        }
    }
}

/// What a loader fetched.
public struct ImageLoadResponse: Sendable {
    /// The bytes; empty when ``isNotModified``.
    public var data: Data
    /// The URL the bytes finally came from, after redirects.
    public var url: URL
    /// The HTTP status, for loaders that speak HTTP.
    public var statusCode: Int?
    /// `true` when the origin answered `304 Not Modified` to a revalidation: the cached copy is
    /// still good and ``metadata`` holds its refreshed headers.
    public var isNotModified: Bool
    /// What to store beside the bytes in the disk cache: content type, validators, expiry.
    public var metadata: DiskCache.Metadata

    public init(data: Data, url: URL, statusCode: Int? = nil, isNotModified: Bool = false, metadata: DiskCache.Metadata = .init()) {
        self.data = data
        self.url = url
        self.statusCode = statusCode
        self.isNotModified = isNotModified
        self.metadata = metadata
    }
}

extension ImageLoader {
    public func shutdown() async throws {}
}
