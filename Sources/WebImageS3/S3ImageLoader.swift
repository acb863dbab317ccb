import Foundation
import Logging
import WebImageCore

/// Loads `s3://bucket/key` URLs through an ``S3Client``, so that ``ImageManager`` caches,
/// coalesces, cancels and revalidates them as it does HTTP images: a cached copy's ETag goes
/// out as `If-None-Match` and a `304` comes back as ``ImageLoadResponse/isNotModified``.
///
/// The URL names only a bucket and a key; the server and the credentials are the client's
/// configuration, never the URL's. An allowlist of buckets refuses the others with
/// ``ImageError/invalidURL(_:)``.
///
/// The loader does not own the client: ``ImageLoader/shutdown()`` leaves it running, and its
/// owner shuts it down.
///
/// ```swift
/// let client = S3Client(configuration: try S3Configuration.fromEnvironment())
/// var configuration = ImageManager.Configuration(cache: ImageCache(disk: nil), loaders: [
///     S3ImageLoader(client: client, allowedBuckets: ["photos"], maximumSize: 32 << 20),
/// ], registry: CoderRegistry.system())
/// configuration.failedURLLifetime = .seconds(60)
/// let manager = ImageManager(configuration: configuration)
/// let response = try await manager.image(for: ImageRequest(url: URL(string: "s3://photos/2024/cat.jpg")!))
/// _ = response
/// ```
public struct S3ImageLoader: ImageLoader {
    public let client: S3Client
    /// The buckets URLs may name; empty allows every bucket.
    public let allowedBuckets: Set<String>
    /// A larger object fails with ``ImageError/tooLarge(_:)``; `nil` sets no limit.
    public let maximumSize: Int?
    private let logger = Logger(label: "webimage.s3.loader")

    public init(client: S3Client, allowedBuckets: [String] = [], maximumSize: Int? = nil) {
        self.client = client
        self.allowedBuckets = Set(allowedBuckets)
        self.maximumSize = maximumSize
    }

    public func canLoad(_ url: URL) -> Bool {
        url.scheme?.lowercased() == "s3"
    }

    /// The bucket and key an `s3://bucket/key` URL names (the key percent-decoded), or `nil`
    /// when it names no bucket or no key.
    public static func location(of url: URL) -> (bucket: String, key: String)? {
        guard url.scheme?.lowercased() == "s3", let bucket = url.host(percentEncoded: false), !bucket.isEmpty else { return nil }
        var key = url.path(percentEncoded: false)
        if key.hasPrefix("/") { key.removeFirst() }
        guard !key.isEmpty else { return nil }
        return (bucket, key)
    }

    /// Fetches the object: the whole body, or for a revalidation whose ETag still matches, an
    /// empty ``ImageLoadResponse/isNotModified`` response. Failures that may pass are retried as
    /// the request's ``ImageLoadRequest/retryPolicy`` or else the client's
    /// ``S3Configuration/retryPolicy`` says, never once some of the body reached `context`.
    ///
    /// - Throws: an ``ImageError``: ``ImageError/invalidURL(_:)`` for a URL without a bucket or
    ///   key or a bucket outside ``allowedBuckets``; ``ImageError/httpStatus(_:)`` `404` for a
    ///   missing key or bucket, `403` for refused credentials; ``ImageError/network(_:)``,
    ///   ``ImageError/timeout(_:)``, ``ImageError/tooLarge(_:)``, ``ImageError/cancelled``.
    public func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse {
        guard let (bucket, key) = Self.location(of: request.url) else {
            throw ImageError.invalidURL("\(request.url.absoluteString) does not name a bucket and a key")
        }
        guard allowedBuckets.isEmpty || allowedBuckets.contains(bucket) else {
            throw ImageError.invalidURL("the bucket \(bucket) is not allowed")
        }
        guard !Task.isCancelled else { throw ImageError.cancelled }
        let response: S3Client.Response
        do {
            response = try await client.fetchObject(
                bucket: bucket, key: key, ifNoneMatch: request.validators?.etag, range: nil, maximumSize: maximumSize,
                wantsChunks: context.wantsChunks, retryPolicy: request.retryPolicy, onRetry: { context.didRetry($0) }
            ) { chunk, received, expected in
                context.didReceive(chunk, received: received, expected: expected)
            }
        } catch {
            let mapped = Self.imageError(from: error)
            logger.debug("S3 load failed", metadata: ["url": "\(request.url)", "error": "\(error)"])
            throw mapped
        }
        let metadata = Self.metadata(of: response, url: request.url)
        if response.status == 304 {
            return ImageLoadResponse(data: Data(), url: request.url, statusCode: 304, isNotModified: true, metadata: metadata)
        }
        return ImageLoadResponse(data: response.body, url: request.url, statusCode: response.status, metadata: metadata)
    }

    private static func metadata(of response: S3Client.Response, url: URL) -> DiskCache.Metadata {
        let headers = response.headers
        return DiskCache.Metadata(
            contentType: headers.first(name: "Content-Type"), url: url.absoluteString,
            etag: headers.first(name: "ETag"), lastModified: headers.first(name: "Last-Modified"),
            expiresAt: headers.first(name: "Cache-Control").flatMap { DiskCache.Metadata.expiration(cacheControl: $0) })
    }

    /// S3's failures in the terms of an image load: a missing object is a `404`, refused
    /// credentials a `403` (so that the manager remembers them as permanent failures), a
    /// server's trouble its 5xx status (transient).
    static func imageError(from error: S3Error) -> ImageError {
        switch error.kind {
        case .noSuchKey, .noSuchBucket: return .httpStatus(404)
        case .accessDenied, .invalidAccessKeyID, .signatureDoesNotMatch: return .httpStatus(403)
        case .slowDown: return .httpStatus(error.statusCode ?? 503)
        case .invalidRange: return .httpStatus(416)
        case .tooLarge: return .tooLarge(error.message)
        case .timeout: return .timeout(error.message)
        case .cancelled: return .cancelled
        case .invalidConfiguration: return .invalidURL(error.message)
        case .invalidResponse: return .network(.init(.invalidResponse, error.message))
        case .connectionFailed:
            let kind: ImageError.NetworkFailure.Kind = switch error.transport {
            case .refused: .connectionRefused
            case .lost: .connectionLost
            case .dns: .dnsFailure
            case .tls: .tls
            case .other, nil: .other
            }
            return .network(.init(kind, error.message))
        case .notModified, .bucketAlreadyExists, .bucketAlreadyOwnedByYou, .other:
            if let status = error.statusCode { return .httpStatus(status) }
            return .network(.init(.other, error.description))
        }
    }
}
