import Foundation

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
