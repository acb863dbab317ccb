/// Names what a cache holds: the original bytes of a source, or one variant made from them.
///
/// A key is a value with separate parts, never a string glued from them, so no URL can pass
/// for a variant of another: `a.jpg#thumb(256)` is a source of its own, and a thumbnail of
/// `a.jpg` is the source `a.jpg` with the variant `["thumb(256)"]`. A variant's processed
/// bytes on disk carry their format as well, so they never replace the original's bytes.
///
/// ```swift
/// let cache = ImageCache(disk: try DiskCache(name: "my-app-images"))
/// let original: ImageCacheKey = "https://example.com/a.jpg"   // the source's own bytes
/// let bytes = await cache.disk?.data(forKey: original)
/// ```
public struct ImageCacheKey: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// Where the bytes came from: the URL after the request's cache key filter.
    package var source: String
    /// What was done to the source's pixels, in order (decode variant, then each processor's
    /// identifier); empty for the original.
    package var variant: [String]
    /// The format a variant's processed bytes were encoded as (``ImageRequest/processedDataFormat``);
    /// `nil` for the original bytes and for decoded images.
    package var encoding: ImageFormat?

    /// The key of `source`'s original bytes.
    public init(_ source: String) {
        self.init(source: source)
    }

    package init(source: String, variant: [String] = [], encoding: ImageFormat? = nil) {
        self.source = source
        self.variant = variant
        self.encoding = encoding
    }

    public init(stringLiteral source: String) {
        self.init(source: source)
    }

    /// Whether the key names the original bytes rather than a variant.
    package var isOriginal: Bool { variant.isEmpty && encoding == nil }

    /// The key of the original bytes this key's variant was made from.
    package var original: ImageCacheKey { ImageCacheKey(source: source) }

    public var description: String {
        guard !isOriginal else { return source }
        let parts = variant + (encoding.map { ["as \($0.rawValue)"] } ?? [])
        return source + " [" + parts.joined(separator: ", ") + "]"
    }

    /// Bytes that identify the key, one to one: an original's are its source's UTF-8 (so disk
    /// entries stored under plain URLs keep their names); a variant's start with 0xFF and mark
    /// each part with 0xFF, and the encoding with 0xFE, bytes that never occur in UTF-8.
    func withIdentityBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var source = source
        guard !isOriginal else { return source.withUTF8 { body(UnsafeRawBufferPointer($0)) } }
        var bytes: [UInt8] = [0xFF]
        bytes.append(contentsOf: source.utf8)
        for part in variant {
            bytes.append(0xFF)
            bytes.append(contentsOf: part.utf8)
        }
        if let encoding {
            bytes.append(0xFE)
            bytes.append(contentsOf: encoding.rawValue.utf8)
        }
        return bytes.withUnsafeBytes(body)
    }
}
