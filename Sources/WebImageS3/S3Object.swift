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
