import Foundation

/// What one request needs to run its stages; the first request of a shared job runs it.
struct StagePlan: Sendable {
    var request: ImageRequest
    var url: URL
    var dataKey: JobKey
    var decodeKey: JobKey
    var imageKey: JobKey
    /// The processed image's key in the memory cache.
    var memoryKey: ImageCacheKey
    /// The processed bytes' key on disk, with ``ImageRequest/processedDataFormat``.
    var processedDataKey: ImageCacheKey?
    var cache: ImageCache
    var loader: (any ImageLoader)?
}
