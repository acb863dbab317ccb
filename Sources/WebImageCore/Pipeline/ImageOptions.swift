/// Switches that change how one load behaves: SDWebImage's `SDWebImageOptions`, in Swift.
///
/// The names are SDWebImage's, kept as the vocabulary its users know; where the request or a
/// loader has a property of its own, the option is SDWebImage's spelling of it and wins over
/// it: ``lowPriority`` and ``highPriority`` set ``ImageRequest/priority``'s starting value,
/// ``handleCookies`` turns on the HTTP loader's cookie jar for this request as
/// `HTTPImageLoader.Configuration.handlesCookies` does for all, and ``decodeFirstFrameOnly``
/// is ``ImageDecodingOptions/firstFrameOnly`` for this request.
///
/// ```swift
/// var request = ImageRequest(url: avatarURL)
/// request.options = [.refreshCached, .highPriority]
/// ```
public struct ImageOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Load even if the URL failed permanently a short while ago.
    public static let retryFailed = ImageOptions(rawValue: 1 << 0)
    /// Start at ``ImagePriority/low`` instead of the request's own priority.
    public static let lowPriority = ImageOptions(rawValue: 1 << 1)
    /// Start at ``ImagePriority/high`` instead of the request's own priority.
    public static let highPriority = ImageOptions(rawValue: 1 << 2)
    /// Keep the result in memory only; write nothing to disk.
    public static let cacheMemoryOnly = ImageOptions(rawValue: 1 << 3)
    /// Deliver previews while a progressive JPEG, an interlaced PNG, a WebP, a GIF or a JPEG XL
    /// downloads.
    public static let progressiveLoad = ImageOptions(rawValue: 1 << 4)
    /// Revalidate a cached image with the origin (`If-None-Match`, `If-Modified-Since`):
    /// deliver the cached image first, then the new one only if it changed.
    public static let refreshCached = ImageOptions(rawValue: 1 << 5)
    /// Send the cookies stored for the host and keep those the response sets.
    public static let handleCookies = ImageOptions(rawValue: 1 << 6)
    /// Accept a TLS certificate that does not verify (self-signed, expired, wrong host). For
    /// development servers only.
    public static let allowInvalidSSLCertificates = ImageOptions(rawValue: 1 << 7)
    /// Answer from the caches only; a miss fails instead of loading.
    public static let fromCacheOnly = ImageOptions(rawValue: 1 << 8)
    /// Skip the caches on the way in: always load from the source (the result is still stored).
    public static let fromLoaderOnly = ImageOptions(rawValue: 1 << 9)
    /// On a memory hit, also read the original bytes from disk into the result.
    public static let queryMemoryData = ImageOptions(rawValue: 1 << 10)
    /// Read the disk cache on the calling thread instead of the I/O threads: the deprecated
    /// `queryDiskSync` (Deprecations.swift).
    package static let readsDiskOnCallingThread = ImageOptions(rawValue: 1 << 11)
    /// Decode only the first frame of an animated image.
    public static let decodeFirstFrameOnly = ImageOptions(rawValue: 1 << 12)
    /// Decode images larger than ``ImageManager/Configuration/scaleDownLimit`` pixels to fit it.
    public static let scaleDownLargeImages = ImageOptions(rawValue: 1 << 13)
    /// Deliver the bytes only, without decoding them: set by ``ImageManager/data(for:)`` and the
    /// prefetcher's disk destination, never by callers (an image load always decodes).
    static let bytesOnly = ImageOptions(rawValue: 1 << 14)
}
