import Foundation

/// What a load delivers: the image, where it came from, and how long each stage took.
///
/// ```swift
/// let response = try await manager.image(for: ImageRequest(url: url))
/// print(response.cacheType, response.image.width, response.timings.total)
/// ```
public struct ImageResponse: Sendable {
    /// The decoded (and processed) image.
    public var container: ImageContainer
    /// The original bytes, when they were at hand: always after a load from the source or the
    /// disk, and on a memory hit with ``ImageOptions/queryMemoryData``.
    public var data: Data?
    /// The URL asked for.
    public var url: URL
    /// Where the result came from.
    public var cacheType: CacheType
    /// `@2x` / `@3x`, from the request.
    public var scale: Double
    /// `true` when the origin confirmed a cached copy (`304`) during ``ImageOptions/refreshCached``.
    public var isRevalidated: Bool
    public var timings: Timings

    /// The still image, or an animation's first frame.
    public var image: Bitmap { container.image }

    /// Time spent per stage of this load; stages it did not run (or shared with another request
    /// that ran them) are `nil`.
    public struct Timings: Sendable, Hashable {
        /// From the request to the result.
        public var total: Duration = .zero
        /// Reading the disk cache or loading from the source.
        public var load: Duration?
        /// Decoding.
        public var decode: Duration?
        /// Running the processors.
        public var process: Duration?

        package init() {}
    }

    package init(container: ImageContainer, data: Data? = nil, url: URL, cacheType: CacheType, scale: Double = 1, isRevalidated: Bool = false, timings: Timings = .init()) {
        self.container = container
        self.data = data
        self.url = url
        self.cacheType = cacheType
        self.scale = scale
        self.isRevalidated = isRevalidated
        self.timings = timings
    }
}

extension ImageResponse.Timings {
    init(total: Duration) {
        self.init()
        self.total = total
    }
}
