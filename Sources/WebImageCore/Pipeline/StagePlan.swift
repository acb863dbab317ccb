import Foundation

/// What one request needs to run its stages; the first request of a shared job runs it.
struct StagePlan: Sendable {
    var request: ImageRequest
    var url: URL
    var dataKey: JobKey
    var decodeKey: JobKey
    var imageKey: JobKey
    /// The processed image's key in the memory cache (and on disk, for processed bytes).
    var memoryKey: String
    var cache: ImageCache
    var loader: (any ImageLoader)?
}
