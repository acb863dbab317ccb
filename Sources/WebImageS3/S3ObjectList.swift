import Foundation

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
