import Foundation

/// What the processing stage delivers to its requests: a decoded image with its bytes, or the
/// bytes alone for a bytes-only load (``ImageManager/data(for:)``, the prefetcher's disk
/// destination). Public callers see it as an ``ImageResponse`` or an ``ImageDataResponse``.
struct PipelineResponse: Sendable {
    /// `nil` for a bytes-only load.
    var container: ImageContainer?
    var data: Data?
    var url: URL
    var cacheType: CacheType
    var scale: Double = 1
    var isRevalidated = false
    var timings = ImageResponse.Timings()
    /// The content type the bytes were stored or served with.
    var contentType: String?
    /// The disk write of the bytes this response was loaded from, still under way when it was
    /// delivered: the prefetcher waits for it before it counts the image as cached.
    var diskWrite: PendingStore?

    init(container: ImageContainer?, data: Data? = nil, url: URL, cacheType: CacheType, isRevalidated: Bool = false, timings: ImageResponse.Timings = .init()) {
        self.container = container
        self.data = data
        self.url = url
        self.cacheType = cacheType
        self.isRevalidated = isRevalidated
        self.timings = timings
    }

    init(_ response: ImageResponse) {
        self.init(container: response.container, data: response.data, url: response.url, cacheType: response.cacheType, isRevalidated: response.isRevalidated, timings: response.timings)
        scale = response.scale
    }

    /// The response as an image load sees it; `nil` for a bytes-only load.
    var imageResponse: ImageResponse? {
        container.map {
            ImageResponse(container: $0, data: data, url: url, cacheType: cacheType, scale: scale, isRevalidated: isRevalidated, timings: timings)
        }
    }

    /// The response as a bytes-only load sees it; `nil` when the bytes were not kept.
    var dataResponse: ImageDataResponse? {
        data.map { ImageDataResponse(data: $0, url: url, cacheType: cacheType, contentType: contentType) }
    }
}

extension PipelineResponse: Replayable {}

extension Result<PipelineResponse, ImageError> {
    /// The outcome as an image load reports it. Image loads always decode; a bytes-only
    /// response reaching one would be a pipeline bug, reported rather than trapped.
    var imageResult: Result<ImageResponse, ImageError> {
        flatMap { response -> Result<ImageResponse, ImageError> in
            guard let image = response.imageResponse else { return .failure(.invalidBitmap("the load delivered bytes without an image")) }
            return .success(image)
        }
    }
}
