import Foundation

/// An object's bytes and what S3 stored with them.
///
/// ```swift
/// if let object = try await client.getObject(bucket: "photos", key: "cat.jpg") {
///     print(object.data.count, object.contentType ?? "?", object.etag ?? "?", object.metadata["owner"] ?? "")
/// }
/// ```
public struct S3Object: Sendable {
    public var data: Data
    public var contentType: String?
    /// The `ETag` as S3 sends it, quotes included: what `If-None-Match` takes back.
    public var etag: String?
    /// The `Last-Modified` header, as sent (an HTTP date).
    public var lastModified: String?
    /// The user metadata (`x-amz-meta-*`), without the prefix, names lowercased.
    public var metadata: [String: String]
    /// The `Cache-Control` stored with the object, if any.
    public var cacheControl: String?

    public init(data: Data, contentType: String? = nil, etag: String? = nil, lastModified: String? = nil, metadata: [String: String] = [:], cacheControl: String? = nil) {
        self.data = data
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.metadata = metadata
        self.cacheControl = cacheControl
    }
}

/// What `HEAD` tells about an object, without its bytes.
///
/// ```swift
/// let info = try await client.headObject(bucket: "photos", key: "cat.jpg")
/// print(info.size, info.etag ?? "?")
/// ```
public struct S3ObjectInfo: Sendable {
    /// `Content-Length`: the object's size in bytes.
    public var size: Int
    public var etag: String?
    public var contentType: String?
    public var lastModified: String?
    /// The user metadata (`x-amz-meta-*`), without the prefix, names lowercased.
    public var metadata: [String: String]

    public init(size: Int, etag: String? = nil, contentType: String? = nil, lastModified: String? = nil, metadata: [String: String] = [:]) {
        self.size = size
        self.etag = etag
        self.contentType = contentType
        self.lastModified = lastModified
        self.metadata = metadata
    }
}

/// One page of `ListObjectsV2`.
///
/// ```swift
/// var token: String?
/// repeat {
///     let page = try await client.listObjectsV2(bucket: "photos", prefix: "2024/", continuationToken: token)
///     for object in page.objects { print(object.key, object.size) }
///     token = page.nextContinuationToken
/// } while token != nil
/// ```
public struct S3ObjectList: Sendable {
    /// One listed object.
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var size: Int
        public var etag: String?
        /// ISO 8601, as S3 lists it.
        public var lastModified: String?

        public init(key: String, size: Int, etag: String? = nil, lastModified: String? = nil) {
            self.key = key
            self.size = size
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    public var objects: [Entry]
    /// Folders under the prefix, when the listing used a delimiter.
    public var commonPrefixes: [String]
    /// Whether more keys follow: ask again with ``nextContinuationToken``.
    public var isTruncated: Bool
    public var nextContinuationToken: String?
    /// The keys on this page, as the server counted them.
    public var keyCount: Int

    public init(objects: [Entry] = [], commonPrefixes: [String] = [], isTruncated: Bool = false, nextContinuationToken: String? = nil, keyCount: Int? = nil) {
        self.objects = objects
        self.commonPrefixes = commonPrefixes
        self.isTruncated = isTruncated
        self.nextContinuationToken = nextContinuationToken
        self.keyCount = keyCount ?? objects.count
    }
}
