import Foundation

/// The bytes of an image and where they came from: the data stage's result.
struct LoadedData: Sendable {
    var data: Data
    var metadata: DiskCache.Metadata
    var cacheType: CacheType
    /// The origin answered `304` to a revalidation: ``data`` is the cached copy.
    var isRevalidated = false
    var duration: Duration?
    /// The disk write of freshly loaded bytes, left to the first decode that succeeds: bytes
    /// that do not decode are never kept.
    var pendingStore: PendingStore?
}

extension LoadedData: Replayable {}
