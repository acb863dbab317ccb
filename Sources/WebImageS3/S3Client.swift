import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import WebImageCore

/// A small S3 client on AsyncHTTPClient: the object calls an image pipeline and a proxy need,
/// signed with AWS Signature Version 4, against AWS or any S3-compatible server.
///
/// Every call is retried as ``S3Configuration/retryPolicy`` says (`SlowDown`, `408`, `429`,
/// `500`, `502`, `503`, `504`, a refused or lost connection, a timeout; never another 4xx), with
/// exponential back-off and full jitter; each attempt is bounded by
/// ``S3Configuration/timeout``. Cancelling the calling task stops the request (and its wait
/// before a retry) and throws ``S3Error/Kind/cancelled``. Errors are always ``S3Error``.
///
/// The client owns its `HTTPClient`: call ``shutdown()`` before dropping it.
///
/// ```swift
/// let client = S3Client(configuration: try S3Configuration.fromEnvironment())
/// try await client.createBucket("photos")
/// let etag = try await client.putObject(bucket: "photos", key: "cat.jpg", data: bytes, contentType: "image/jpeg", metadata: ["owner": "ada"])
/// let object = try await client.getObject(bucket: "photos", key: "cat.jpg")
/// let unchanged = try await client.getObject(bucket: "photos", key: "cat.jpg", ifNoneMatch: etag)   // nil: not modified
/// let link = client.presignedURL(bucket: "photos", key: "cat.jpg", expires: .seconds(3600))
/// try await client.shutdown()
/// _ = (object, unchanged, link)
/// ```
public final class S3Client: Sendable, CustomStringConvertible {
    public let configuration: S3Configuration
    /// Package access so that the benchmarks can time a signature alone.
    package let signer: SigV4Signer
    let http: HTTPClient
    private let isShutDown = Mutex(false)
    let logger = Logger(label: "webimage.s3")

    public init(configuration: S3Configuration) {
        self.configuration = configuration
        self.signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
        var client = HTTPClient.Configuration()
        // S3 answers redirects only for a wrong region; following one would sign for the
        // wrong host. The caller fixes the configuration instead.
        client.redirectConfiguration = .disallow
        client.decompression = .disabled
        client.timeout = .init(connect: TimeAmount(configuration.connectTimeout))
        // Retries are the client's own (bounded, with back-off and jitter); AsyncHTTPClient's
        // retrying of refused connections would turn a closed port into a wait until the
        // deadline.
        client.connectionPool.retryConnectionEstablishment = false
        // The client makes the span of each attempt and sends its trace itself (see
        // HTTPImageLoader's client).
        client.tracing.tracer = nil
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
    }

    deinit {
        // AsyncHTTPClient traps in debug builds when a client is released without a shutdown;
        // the task keeps it alive until then. After an explicit shutdown this does nothing.
        guard !isShutDown.withLock({ $0 }) else { return }
        let http = self.http
        Task { try? await http.shutdown() }
    }

    /// Shuts the HTTP client down, waiting for running requests; calls after it fail.
    public func shutdown() async throws {
        let already = isShutDown.withLock { state in
            defer { state = true }
            return state
        }
        guard !already else { return }
        try await http.shutdown()
    }

    public var description: String { "S3Client(\(configuration))" }

    // MARK: Objects

    /// Downloads an object, or `nil` when `ifNoneMatch` still matches its ETag (`304`).
    ///
    /// - Parameters:
    ///   - range: the bytes wanted, both ends included (`Range: bytes=lower-upper`).
    ///   - maximumSize: a larger body fails with ``S3Error/Kind/tooLarge``, before it is read when
    ///     the server announces its length, otherwise as soon as it passes the limit.
    ///   - progress: called as bytes arrive, with the total so far and the announced length.
    public func getObject(
        bucket: String, key: String, ifNoneMatch: String? = nil, range: ClosedRange<Int>? = nil, maximumSize: Int? = nil,
        progress: (@Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil
    ) async throws(S3Error) -> S3Object? {
        var onBody: (@Sendable (Data?, Int, Int?) -> Void)?
        if let progress {
            onBody = { (_: Data?, received: Int, expected: Int?) in progress(received, expected) }
        }
        let response = try await fetchObject(bucket: bucket, key: key, ifNoneMatch: ifNoneMatch, range: range, maximumSize: maximumSize, wantsChunks: false, onBody: onBody)
        guard response.status != 304 else { return nil }
        return S3Object(
            data: response.body, contentType: response.headers.first(name: "Content-Type"), etag: response.headers.first(name: "ETag"),
            lastModified: response.headers.first(name: "Last-Modified"), metadata: Self.userMetadata(response.headers),
            cacheControl: response.headers.first(name: "Cache-Control"))
    }

    /// `GetObject` with the raw answer (status `304` included) and each chunk's bytes when asked:
    /// what the image loader needs for its metadata and progressive decoding.
    /// A `retryPolicy` replaces the configuration's, and `onRetry` hears of each retry.
    func fetchObject(
        bucket: String, key: String, ifNoneMatch: String?, range: ClosedRange<Int>?, maximumSize: Int?, wantsChunks: Bool,
        retryPolicy: RetryPolicy? = nil, onRetry: (@Sendable (RetryPolicy.Retry) -> Void)? = nil,
        onBody: (@Sendable (Data?, Int, Int?) -> Void)?
    ) async throws(S3Error) -> Response {
        var headers: [(String, String)] = []
        if let ifNoneMatch { headers.append(("if-none-match", ifNoneMatch)) }
        if let range { headers.append(("range", "bytes=\(range.lowerBound)-\(range.upperBound)")) }
        return try await send(Request(
            method: .GET, bucket: bucket, key: key, headers: headers, maximumSize: maximumSize,
            acceptsNotModified: ifNoneMatch != nil, wantsChunks: wantsChunks, onBody: onBody,
            retryPolicy: retryPolicy, onRetry: onRetry))
    }

    /// An object's size, ETag, type, date and user metadata, without its bytes.
    ///
    /// A `HEAD` answer has no body, so a failure is known by its status alone: `404` is
    /// ``S3Error/Kind/noSuchKey``, `403` ``S3Error/Kind/accessDenied``.
    public func headObject(bucket: String, key: String) async throws(S3Error) -> S3ObjectInfo {
        let response = try await send(Request(method: .HEAD, bucket: bucket, key: key))
        let headers = response.headers
        return S3ObjectInfo(
            size: headers.first(name: "Content-Length").flatMap { Int($0) } ?? 0, etag: headers.first(name: "ETag"),
            contentType: headers.first(name: "Content-Type"), lastModified: headers.first(name: "Last-Modified"),
            metadata: Self.userMetadata(headers))
    }

    /// Uploads an object in one request, its SHA-256 signed (`x-amz-content-sha256`).
    ///
    /// - Parameter metadata: stored as `x-amz-meta-<name>`; names are lowercased, as S3 returns
    ///   them.
    /// - Returns: the new object's ETag.
    @discardableResult
    public func putObject(bucket: String, key: String, data: Data, contentType: String? = nil, metadata: [String: String] = [:]) async throws(S3Error) -> String? {
        var headers: [(String, String)] = []
        if let contentType { headers.append(("content-type", contentType)) }
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            headers.append(("x-amz-meta-\(name.lowercased())", value))
        }
        let response = try await send(Request(method: .PUT, bucket: bucket, key: key, headers: headers, body: data))
        return response.headers.first(name: "ETag")
    }

    /// Deletes an object; deleting a key that does not exist succeeds, as in S3.
    public func deleteObject(bucket: String, key: String) async throws(S3Error) {
        _ = try await send(Request(method: .DELETE, bucket: bucket, key: key))
    }

    /// One page of the keys in `bucket` (`ListObjectsV2`), at most `maxKeys` (S3's default and
    /// limit: 1000), starting after `continuationToken`.
    public func listObjectsV2(bucket: String, prefix: String? = nil, continuationToken: String? = nil, maxKeys: Int? = nil) async throws(S3Error) -> S3ObjectList {
        var query: [(String, String)] = [("list-type", "2")]
        if let prefix { query.append(("prefix", prefix)) }
        if let continuationToken { query.append(("continuation-token", continuationToken)) }
        if let maxKeys { query.append(("max-keys", String(maxKeys))) }
        let response = try await send(Request(method: .GET, bucket: bucket, key: nil, query: query))
        return try S3ObjectList.parse(response.body)
    }

    /// Creates a bucket (outside `us-east-1`, in the configured region).
    ///
    /// - Throws: ``S3Error/Kind/bucketAlreadyOwnedByYou`` when it exists already and is yours.
    public func createBucket(_ bucket: String) async throws(S3Error) {
        var body = Data()
        if configuration.region != "us-east-1" {
            body = Data(#"<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>\#(configuration.region)</LocationConstraint></CreateBucketConfiguration>"#.utf8)
        }
        _ = try await send(Request(method: .PUT, bucket: bucket, key: nil, body: body))
    }

    /// A URL that performs `method` on the object without credentials until `expires` after
    /// `date` (query authentication; at most 7 days on AWS). Only `Host` is signed and the
    /// payload is `UNSIGNED-PAYLOAD`, so the URL works from any HTTP client.
    public func presignedURL(method: String = "GET", bucket: String, key: String, expires: Duration, date: Date = Date()) -> URL {
        let address = address(bucket: bucket, key: key)
        let query = signer.presignedQuery(
            method: method.uppercased(), path: address.path, query: [], host: address.host, expires: Int(expires.components.seconds), date: date)
        // Built from parts that are all ASCII and already encoded: it always parses.
        return URL(string: "\(address.origin)\(address.path)?\(query)")!
    }

    /// `x-amz-meta-*` headers, without the prefix, names lowercased.
    static func userMetadata(_ headers: HTTPHeaders) -> [String: String] {
        var metadata: [String: String] = [:]
        for header in headers {
            let name = header.name.lowercased()
            if name.hasPrefix("x-amz-meta-") { metadata[String(name.dropFirst("x-amz-meta-".count))] = header.value }
        }
        return metadata
    }

    // MARK: Addressing

    /// Where a request goes: the scheme and authority, the `Host` header, the encoded path.
    struct Address {
        var origin: String
        var host: String
        var path: String
    }

    func address(bucket: String, key: String?) -> Address {
        let endpoint = configuration.endpoint
        let scheme = endpoint.scheme?.lowercased() ?? "https"
        var host = endpoint.host ?? ""
        if host.contains(":") { host = "[\(host)]" }   // IPv6 literal
        if let port = endpoint.port, port != (scheme == "https" ? 443 : 80) { host += ":\(port)" }
        var prefix = endpoint.path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        let encodedKey = key.map { SigV4Signer.uriEncode($0, keepSlash: true) }
        switch configuration.addressingStyle {
        case .path:
            let path = prefix + "/" + SigV4Signer.uriEncode(bucket, keepSlash: false) + (encodedKey.map { "/" + $0 } ?? "")
            return Address(origin: "\(scheme)://\(host)", host: host, path: path)
        case .virtualHosted:
            let bucketHost = "\(bucket).\(host)"
            return Address(origin: "\(scheme)://\(bucketHost)", host: bucketHost, path: prefix + "/" + (encodedKey ?? ""))
        }
    }
}
