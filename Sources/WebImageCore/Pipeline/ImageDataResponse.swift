import Foundation

/// What ``ImageManager/data(for:)`` delivers: an image's original bytes, undecoded.
///
/// ```swift
/// let response = try await manager.data(for: ImageRequest(url: url))
/// try response.data.write(to: URL(fileURLWithPath: "/tmp/original"))
/// print(response.contentType ?? "unknown type", response.cacheType)
/// ```
public struct ImageDataResponse: Sendable {
    /// The bytes as the source sent them (or the disk cache kept them).
    public var data: Data
    /// The URL asked for.
    public var url: URL
    /// Where the bytes came from.
    public var cacheType: CacheType
    /// The content type the source declared, or the one sniffed from the bytes.
    public var contentType: String?

    package init(data: Data, url: URL, cacheType: CacheType, contentType: String? = nil) {
        self.data = data
        self.url = url
        self.cacheType = cacheType
        self.contentType = contentType
    }
}
