import Foundation
import Logging
import Metrics

/// Loads images: memory cache, then disk cache, then a loader, then the decoder and the
/// processors, with identical work shared and each request cancellable on its own.
///
/// ```swift
/// let manager = ImageManager(configuration: .init(
///     cache: ImageCache(disk: try DiskCache(name: "my-app")),
///     loaders: [HTTPImageLoader(), FileImageLoader(), DataURLImageLoader()],
///     registry: .system()))
///
/// let request = ImageRequest(url: url, thumbnail: .maxPixelSize(256))
/// let response = try await manager.image(for: request)
/// print(response.cacheType)   // .none the first time, .memory after
/// ```
///
/// Each stage is shared by key: one download per URL (after the cache key filter), one decode
/// per URL and decode variant (thumbnail size, first frame only), one processing chain per
/// processed variant. A request leaves its stages on its own; a stage stops when no request
/// wants it any more, and no decode or disk write starts for work nobody wants.
///
/// What is stored: the original bytes on disk (so every variant can be derived again), the
/// decoded and processed image in memory, and the processed bytes on disk when
/// ``ImageRequest/processedDataFormat`` asks for them.
public final class ImageManager: Sendable {
    /// What a manager is built from.
    public struct Configuration: Sendable {
        /// Where images are kept (a request may name its own).
        public var cache: ImageCache
        /// Tried in order; the first whose ``ImageLoader/canLoad(_:)`` accepts the URL loads it.
        public var loaders: [any ImageLoader]
        /// The decoders (and encoders, for ``ImageRequest/processedDataFormat``).
        public var registry: CoderRegistry
        /// How long a permanently failed URL is refused before it is tried again. Default: 10
        /// minutes.
        public var failedURLLifetime: Duration = .seconds(600)
        /// The threads that decode, process and encode. Default: one per core.
        public var executor: BlockingExecutor = .decoding
        /// Limits and defaults every decode starts from.
        public var decodingOptions = ImageDecodingOptions()
        /// The most memory decodes may hold together, by their estimates
        /// (from the header alone): a decode waits until its estimate
        /// fits, so that two costly decodes on two threads do not stack up; one larger than the
        /// whole budget runs alone. Default: 64 MiB per decoding thread, at least 128 MiB.
        public var decodeMemoryLimit = max(128 << 20, (64 << 20) * BlockingExecutor.decoding.width)
        /// The pixel count ``ImageOptions/scaleDownLargeImages`` shrinks larger images to.
        /// Default: 16 megapixels (64 MB as RGBA).
        public var scaleDownLimit = 16_000_000
        /// Whether the first decode of each source also computes its ThumbHash, remembered
        /// beside the cache for ``ImageManager/placeholder(for:)``. It reads a reduction of at
        /// most 100 px a side of the decoded image: well under 5 % of a thumbnail's decode.
        /// Default: `true`.
        public var remembersPlaceholders = true
        public var logger = Logger(label: "webimage.manager")
        /// Where the counters and timers go; `nil` uses the process-wide `MetricsSystem`
        /// (bootstrapped by the app, e.g. with swift-prometheus).
        public var metricsFactory: (any MetricsFactory)?

        /// The clock failed URLs expire by; tests move it forward instead of waiting.
        package var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }

        public init(cache: ImageCache, loaders: [any ImageLoader], registry: CoderRegistry) {
            self.cache = cache
            self.loaders = loaders
            self.registry = registry
        }
    }

    public let configuration: Configuration
    let failedURLs: FailedURLList
    let metrics: PipelineMetrics
    let activity = ActivityTracker()
    let imageJobs: JobTable<JobKey, PipelineResponse>
    let decodeJobs: JobTable<JobKey, DecodedImage>
    let dataJobs: JobTable<JobKey, LoadedData>
    let decodeBudget: MemoryBudget
    /// Freshly loaded bytes until they are on disk.
    let pendingStores = PendingStoreTable()
    var logger: Logger { configuration.logger }

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.metrics = PipelineMetrics(factory: configuration.metricsFactory)
        self.decodeBudget = MemoryBudget(limit: configuration.decodeMemoryLimit)
        self.failedURLs = FailedURLList(lifetime: configuration.failedURLLifetime, now: configuration.now)
        // A revalidation asked for after another finished must reach the origin again: the
        // image may have changed since.
        let joinsFinished: @Sendable (JobKey) -> Bool = { $0.mode != .refresh }
        self.imageJobs = JobTable(activity: activity, joinsFinished: joinsFinished, replayed: { $0.replayed })
        self.decodeJobs = JobTable(activity: activity, joinsFinished: joinsFinished, replayed: { $0.replayed })
        self.dataJobs = JobTable(activity: activity, joinsFinished: joinsFinished, replayed: { $0.replayed })
    }

    // MARK: - Loading

    /// Loads the image `source` names: a URL as it is, or an ``ImageRequest``.
    ///
    /// A memory hit returns without suspending. Cancelling the calling task cancels this
    /// request (and the shared work, when nobody else wants it).
    ///
    /// ```swift
    /// let image = try await ImageManager.shared.image(for: url).image
    /// let thumbnail = try await manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(256)))
    /// ```
    ///
    /// - Throws: an ``ImageError``.
    public func image(for source: some ImageRequestConvertible) async throws -> ImageResponse {
        let request = source.asImageRequest()
        if let response = cachedResponse(for: request) {
            metrics.requests.increment()
            metrics.memoryHits.increment()
            return response
        }
        return try await loadImage(with: request).response
    }

    /// Loads the original bytes `request` names, without decoding them: from the disk cache,
    /// else from the source (then stored on disk, unless ``ImageOptions/cacheMemoryOnly``).
    /// Thumbnail and processors are ignored; the bytes are the original's.
    ///
    /// ```swift
    /// let original = try await manager.data(for: ImageRequest(url: url))
    /// try original.data.write(to: URL(fileURLWithPath: "/tmp/original"))
    /// ```
    ///
    /// - Throws: an ``ImageError``.
    public func data(for request: ImageRequest) async throws -> ImageDataResponse {
        let outcome = await startBytesOnly(request, onOutcome: nil).outcome
        let response = try outcome.get()
        guard let data = response.dataResponse else { throw ImageError.cacheMiss(request.url?.absoluteString ?? "") }
        return data
    }

    /// The decoded image in memory for `request`, answered synchronously; `nil` on a miss or
    /// when the request's options rule the memory cache out.
    public func cachedResponse(for request: ImageRequest) -> ImageResponse? {
        // With queryMemoryData the bytes must come too, which the loading path adds.
        guard !request.options.contains(.queryMemoryData), let url = request.url, let key = request.imageKey,
              let container = memoryHit(for: request, key: key, cache: request.cache ?? configuration.cache)
        else { return nil }
        return ImageResponse(container: container, url: url, cacheType: .memory, scale: request.resolvedScale)
    }

    /// The one memory lookup of every path (``cachedResponse(for:)``, ``image(for:)``, the
    /// loading tasks): the decoded variant under `key`, unless the request's options rule the
    /// memory cache out.
    func memoryHit(for request: ImageRequest, key: ImageCacheKey, cache: ImageCache) -> ImageContainer? {
        guard request.options.isDisjoint(with: Self.optionsBypassingMemory) else { return nil }
        return cache.memory.value(forKey: key)
    }

    /// Options under which memory does not answer: the origin must be asked, or only bytes
    /// are wanted.
    private static let optionsBypassingMemory: ImageOptions = [.fromLoaderOnly, .refreshCached, .bytesOnly]

    /// Starts loading `request` and returns its task: await ``ImageTask/response`` or iterate
    /// ``ImageTask/events``.
    @discardableResult
    public func loadImage(with request: ImageRequest) -> ImageTask {
        start(request, onEvent: nil)
    }

    /// Starts loading `request`, for callers outside async code. `completion` is called exactly
    /// once: synchronously, before this method returns, on a memory hit; otherwise on one of the
    /// pipeline's threads. `progress` reports bytes received and expected.
    ///
    /// ```swift
    /// manager.loadImage(with: request, progress: { received, expected in bar.update(received, expected) }) { result in
    ///     if case .success(let response) = result { show(response.image) }
    /// }
    /// ```
    @discardableResult
    public func loadImage(
        with request: ImageRequest,
        progress: (@Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil,
        completion: @escaping @Sendable (Result<ImageResponse, ImageError>) -> Void
    ) -> ImageTask {
        start(request, onEvent: { event in
            switch event {
            case .progress(let received, let expected): progress?(received, expected)
            case .finished(let result): completion(result)
            case .preview, .cached: break
            }
        })
    }

    // MARK: - Failed URLs

    /// Forgets that `url` failed, so the next request tries it again.
    public func removeFailedURL(_ url: URL) {
        failedURLs.remove(url.absoluteString)
    }

    /// Forgets every failed URL.
    public func removeAllFailedURLs() {
        failedURLs.removeAll()
    }

    /// Whether `url` is currently refused after a permanent failure.
    public func isFailedURL(_ url: URL) -> Bool {
        failedURLs.contains(url.absoluteString)
    }

    // MARK: - Statistics

    /// Returns once no work runs in any stage: every download, decode and processing chain has
    /// finished, and so have the disk writes that follow them. A command-line tool calls it
    /// before exiting so that nothing it loaded is left unwritten.
    public func waitUntilIdle() async {
        await activity.waitUntilIdle()
    }

    /// The priority the download of `url` (data key: the absolute URL) runs at, `nil` when none
    /// runs: it rises when a request of higher priority joins. Lets tests wait until a request
    /// has joined a download in flight.
    package func downloadPriority(for url: URL) -> ImagePriority? {
        let key = ImageCacheKey(url.absoluteString)
        return dataJobs.jobs { $0.key == key }.map(\.priority).max()
    }

    /// Bytes of the decode memory budget held by decodes under way, and decodes waiting for
    /// their estimate to fit.
    package var decodeMemory: (held: Int, waiting: Int) {
        (decodeBudget.held, decodeBudget.waiting)
    }

    /// Work under way, per stage: downloads (or disk reads), decodes, and processing chains.
    package var activeJobs: (data: Int, decode: Int, image: Int) {
        (dataJobs.count, decodeJobs.count, imageJobs.count)
    }
}

extension BlockingExecutor {
    /// Threads for decoding, processing and encoding, one per core: CPU-bound work that must
    /// not occupy the cooperative pool.
    public static let decoding = BlockingExecutor(name: "webimage.decode", width: max(1, ProcessInfo.processInfo.activeProcessorCount))
}
