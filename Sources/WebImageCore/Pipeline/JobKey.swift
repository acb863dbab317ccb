import Foundation

/// Identifies shared work: the same key in the same cache, under the same rules, is one job.
struct JobKey: Hashable, Sendable {
    /// How a job may use the caches.
    enum Mode: Hashable, Sendable {
        /// Memory, then disk, then the loader.
        case normal
        /// The loader only (``ImageOptions/fromLoaderOnly``).
        case loaderOnly
        /// The caches only (``ImageOptions/fromCacheOnly``).
        case cacheOnly
        /// Revalidate with the origin (``ImageOptions/refreshCached``).
        case refresh

        init(_ options: ImageOptions) {
            if options.contains(.refreshCached) { self = .refresh }
            else if options.contains(.fromCacheOnly) { self = .cacheOnly }
            else if options.contains(.fromLoaderOnly) { self = .loaderOnly }
            else { self = .normal }
        }
    }

    var key: ImageCacheKey
    var mode: Mode
    var cache: ObjectIdentifier
    /// Set for requests with their own loader, so they never share a download with others.
    var privateLoader: Int?
    /// Set for bytes-only requests (``ImageManager/data(for:)``), which never share a decode or
    /// a processing job with requests that want pixels.
    var bytesOnly = false

    func with(key: ImageCacheKey, mode: Mode? = nil, bytesOnly: Bool? = nil) -> JobKey {
        JobKey(key: key, mode: mode ?? self.mode, cache: cache, privateLoader: privateLoader, bytesOnly: bytesOnly ?? self.bytesOnly)
    }
}
