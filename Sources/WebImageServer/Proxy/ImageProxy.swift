import Foundation
import Logging
import Metrics
import Synchronization
import Tracing
import WebImage
import WebImageCore
import WebImageS3

/// The image proxy's work, without HTTP: parse nothing, serve nothing, just turn a
/// ``ProxyRequest`` into encoded bytes through the library's pipeline and caches.
///
/// ```swift
/// let proxy = try ImageProxy(configuration: .init(cacheDirectory: URL(fileURLWithPath: "/var/cache/proxy")))
/// let request = try ProxyRequest(query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300")
/// let result = try await proxy.image(for: request, accept: ["image/webp"])
/// print(result.image.contentType, result.source)   // image/webp miss
/// await proxy.shutdown()
/// ```
///
/// The way of one request: the encoded variant from memory, else from disk (neither touches
/// the origin, the decoder or the encoder); else the `ImageManager` (the original's bytes
/// from its disk cache or the origin, shared by every variant of the source; decoded at
/// reduced size where the codec can; resized and blurred by the library's processors), then
/// the `CoderRegistry`'s encoder, and both cache levels. Identical variants requested at the
/// same time are made once.
public final class ImageProxy: Sendable {
    /// What one render made.
    struct Rendered: Sendable {
        var image: EncodedImage
        var isComplete: Bool
        var isFromResultStore = false
    }

    /// What the proxy was built from.
    public let configuration: Configuration
    package let manager: ImageManager
    package let signer: URLSigner?
    package let limiter: ConcurrencyLimiter
    /// The Prometheus registry `/metrics` shows: the proxy's instruments and the pipeline's.
    public let metrics: ProxyMetrics
    let originGuard: OriginGuard
    /// ``OriginGuard/policyDigest``, computed once.
    let policyDigest: String
    let variants: VariantCache
    /// Every connection to an origin goes through it: see ``EgressGuard``.
    private let egress: EgressGuard
    private let inProgress = Mutex<[String: Task<Rendered, any Error>]>([:])
    /// What ``reclaimMemory()`` needs to know of the renders since its last call.
    let reclaim = Mutex(MemoryReclaim())
    /// The client of ``Configuration/s3``, shared by `s3://` sources and the stores.
    private let s3: S3Client?
    /// The fleet's shared variants, when ``Configuration/resultStore`` names one.
    package let resultStore: ResultStore?
    /// ``Configuration/autoFormats`` that the registry has an encoder for.
    let autoFormats: [ImageFormat]
    /// ``ImgproxyConfiguration/watermarkData``, decoded once at start.
    private let configuredWatermark: Bitmap?

    /// Opens the disk cache (when the configuration names a folder) and starts the egress
    /// guard every origin connection goes through.
    ///
    /// - Throws: `ImageError/storage(_:)` when the cache folder cannot be created or opened,
    ///   or a NIO error when the egress guard cannot listen on 127.0.0.1.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        autoFormats = configuration.autoFormats.filter { configuration.registry.encoder(for: $0) != nil }
        var originGuard = OriginGuard(allowedHosts: configuration.allowedHosts, policy: configuration.addressPolicy, resolver: configuration.resolver)
        originGuard.trustedOrigins = Set(configuration.trustedOrigins.map { $0.lowercased() })
        self.originGuard = originGuard
        policyDigest = originGuard.policyDigest

        var disk: DiskCache?
        if let directory = configuration.cacheDirectory, !configuration.cachesDisabled {
            var diskConfiguration = DiskCache.Configuration()
            diskConfiguration.sizeLimit = configuration.diskCacheSize
            disk = try DiskCache(directory: directory, configuration: diskConfiguration)
        }
        variants = VariantCache(
            memoryLimit: configuration.cachesDisabled ? 0 : configuration.variantMemoryLimit, disk: disk,
            lifetime: configuration.maxAge > 0 ? .seconds(configuration.maxAge) : nil)

        let registry = Self.decoding(configuration.registry, without: Self.refusedFormats(configuration))
        var http = Self.originHTTPConfiguration(configuration, registry: registry, originGuard: originGuard)
        egress = try EgressGuard(originGuard: originGuard, logger: configuration.logger)
        http.socksProxy = .init(host: "127.0.0.1", port: egress.port)
        metrics = ProxyMetrics()
        s3 = configuration.s3.map(S3Client.init(configuration:))
        resultStore = try Self.makeResultStore(configuration, client: s3, metrics: metrics)
        var loaders: [any ImageLoader] = [HTTPImageLoader(configuration: http)]
        if let resultStore, configuration.keepsOriginalsInStore {
            loaders[0] = StoredOriginLoader(origin: loaders[0], store: resultStore, policyDigest: policyDigest)
        }
        if let s3, !configuration.allowedBuckets.isEmpty {
            let buckets = configuration.allowedBuckets.contains("*") ? [] : configuration.allowedBuckets
            loaders.append(S3ImageLoader(client: s3, allowedBuckets: buckets, maximumSize: configuration.limits.maximumSourceBytes))
        }
        if let root = configuration.originDirectory {
            loaders.append(FileImageLoader(root: root, maximumFileSize: configuration.limits.maximumSourceBytes, timeout: configuration.originTimeout))
        }
        let managerConfiguration = Self.pipelineConfiguration(configuration, disk: disk, loaders: loaders, registry: registry, metrics: metrics)
        manager = ImageManager(configuration: managerConfiguration)
        signer = configuration.signingKey.map(URLSigner.init(key:))
        limiter = ConcurrencyLimiter(limit: configuration.limits.maximumConcurrentRequests)
        configuredWatermark = try configuration.imgproxy.watermarkData.map { data in
            do {
                return try registry.decode(data, options: managerConfiguration.decodingOptions).image
            } catch {
                throw ImageError.corruptData("the configured imgproxy watermark: \(error)")
            }
        }
    }

    /// The origins' HTTP loader's configuration from the proxy's: its limits, its user agent,
    /// and the origin guard's check of every redirect. The egress guard's SOCKS address is set
    /// by `init`, once the guard listens.
    private static func originHTTPConfiguration(
        _ configuration: Configuration, registry: CoderRegistry, originGuard: OriginGuard
    ) -> HTTPImageLoader.Configuration {
        var http = HTTPImageLoader.Configuration(acceptedFormats: registry.decodableFormats)
        http.maximumResponseSize = configuration.limits.maximumSourceBytes
        http.timeout = configuration.originTimeout
        http.retryPolicy = configuration.originRetryPolicy
        http.additionalTrustRoots = configuration.originTrustRoots
        http.maximumConcurrentDownloads = max(6, min(configuration.limits.maximumConcurrentRequests, 32))
        http.userAgent = "swift-web-image-proxy/\(LibraryVersion.string)"
        // Every hop, the first included, is checked; a refusal travels through the loader as
        // an ImageError with a marker the proxy recognises.
        http.redirectPolicy = { [originGuard] url in
            do {
                try await originGuard.check(url)
            } catch let refusal as OriginGuard.Refusal {
                throw ImageError.invalidURL(ProxyError.refusalPrefix + refusal.description)
            }
        }
        return http
    }

    /// The pipeline's configuration: its memory cache over `disk`, `loaders`, the source
    /// limits, the colour handling, and the metrics.
    private static func pipelineConfiguration(
        _ configuration: Configuration, disk: DiskCache?, loaders: [any ImageLoader], registry: CoderRegistry, metrics: ProxyMetrics
    ) -> ImageManager.Configuration {
        let memory = MemoryCache<ImageCacheKey, ImageContainer>(configuration: .init(
            costLimit: configuration.cachesDisabled ? 0 : configuration.imageMemoryLimit, ageLimit: configuration.imageMemoryLifetime))
        var managerConfiguration = ImageManager.Configuration(cache: ImageCache(memory: memory, disk: disk), loaders: loaders, registry: registry)
        managerConfiguration.decodingOptions.maximumPixelCount = configuration.limits.maximumSourcePixels
        managerConfiguration.decodingOptions.maximumAnimationBytes = configuration.limits.maximumAnimationBytes
        managerConfiguration.decodingOptions.maximumAnimationPixels = configuration.limits.maximumAnimationPixels
        managerConfiguration.decodingOptions.colorSpace = configuration.keepsColorProfile ? .preserve : .sRGB
        managerConfiguration.logger = configuration.logger
        managerConfiguration.executor = configuration.executor
        // Every request goes to the origin again after a failure (requests also carry
        // retryFailed): the status the client gets must be the origin's, not "failed
        // recently", and a zero lifetime keeps the list from growing with the URLs of a scan.
        managerConfiguration.failedURLLifetime = .zero
        managerConfiguration.metricsFactory = metrics.factory
        return managerConfiguration
    }

    /// Waits for the pipeline's work (disk writes included) to finish, then closes the HTTP
    /// client and the egress guard.
    public func shutdown() async {
        await manager.shutdown()
        await resultStore?.waitForWrites()
        try? await s3?.shutdown()
        await egress.shutdown()
    }

    /// The store ``Configuration/resultStore`` names, over `client`.
    ///
    /// - Throws: `ImageError/invalidURL(_:)` when the location is not `s3://bucket[/prefix]`
    ///   or no S3 service is configured.
    /// The source formats this proxy decodes: its registry's, without the ones refused.
    package var decodableFormats: Set<ImageFormat> { manager.configuration.registry.decodableFormats }

    /// The formats `configuration` does not accept (``Configuration/allowsSVG``,
    /// ``Configuration/allowsPDF``, ``Configuration/allowsVideo``): documents for a renderer and
    /// movies, off unless asked.
    static func refusedFormats(_ configuration: Configuration) -> Set<ImageFormat> {
        var formats: Set<ImageFormat> = []
        if !configuration.allowsSVG { formats.insert(.svg) }
        if !configuration.allowsPDF { formats.insert(.pdf) }
        if !configuration.allowsVideo { formats.formUnion(ImageFormat.allCases.filter(\.isVideo)) }
        return formats
    }

    /// `registry`'s coders without the decoders of `formats` (a decoder that reads one of them
    /// is left out for all of its formats): the loaders then refuse such a body as soon as it is
    /// sniffed. A snapshot: coders registered in `registry` later are not seen.
    static func decoding(_ registry: CoderRegistry, without formats: Set<ImageFormat>) -> CoderRegistry {
        guard formats.contains(where: { registry.decoder(for: $0) != nil }) else { return registry }
        let copy = CoderRegistry(encoders: ImageFormat.allCases.compactMap { registry.encoder(for: $0) })
        for format in registry.decodableFormats where !formats.contains(format) {
            if let decoder = registry.decoder(for: format), decoder.formats.isDisjoint(with: formats) { copy.register(decoder) }
        }
        return copy
    }

    private static func makeResultStore(_ configuration: Configuration, client: S3Client?, metrics: ProxyMetrics) throws -> ResultStore? {
        guard let url = configuration.resultStore else {
            guard !configuration.keepsOriginalsInStore else { throw ImageError.invalidURL("the origin store needs a result store") }
            return nil
        }
        guard let location = ResultStore.Location(url) else {
            throw ImageError.invalidURL("the result store must be s3://bucket or s3://bucket/prefix, not \(url)")
        }
        guard let client else { throw ImageError.invalidURL("the result store needs an S3 endpoint and credentials") }
        return ResultStore(client: client, location: location, timeout: configuration.resultStoreTimeout, metrics: metrics, logger: configuration.logger)
    }

    // MARK: Serving

    /// The encoded image for `request`, with `format=auto` answered in the first of
    /// ``Configuration/autoFormats`` that the client's `Accept` field values name.
    ///
    /// ```swift
    /// let request = try ProxyRequest(query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300")
    /// let output = try await proxy.image(for: request, accept: ["image/avif,image/webp,*/*"])
    /// print(output.image.contentType)   // image/avif
    /// ```
    ///
    /// - Throws: a ``ProxyError`` with the status to answer.
    public func image(for request: ProxyRequest, accept: [String]) async throws(ProxyError) -> Output {
        try await image(for: request.recipe, accepted: negotiatedFormat(accept: accept))
    }

    /// What `format=auto` gives a client whose `Accept` is `accept`: the first of
    /// ``autoFormats`` it names, or `nil` for the source's own format.
    func negotiatedFormat(accept: [String]) -> ImageFormat? {
        FormatNegotiation.preferred(autoFormats, accept: accept)
    }

    /// The encoded image of `recipe`, whichever URL dialect it came from: one plan, one variant
    /// cache, one in-progress table, one result store for all of them. `accepted` is what
    /// ``negotiatedFormat(accept:)`` gave the client.
    func image(for recipe: RenderRecipe, accepted: ImageFormat?) async throws(ProxyError) -> Output {
        let plan = try plan(for: recipe, accepted: accepted)
        return try await output(forKey: plan.key, of: recipe.source, variesOnAccept: plan.variesOnAccept) {
            try await self.render(recipe, from: try await self.checkedSourceURL(recipe.source), as: plan.target)
        }
    }

    /// The output kept under `key` (memory, then disk), else the one another request is making
    /// now, else the fleet's result store's, else `render`'s: the way of every answer the proxy
    /// caches (an image of any dialect, `/info`'s JSON). `source` is the source the work reads,
    /// for the status of a failure.
    func output(
        forKey key: String, of source: ProxyRequest.Source, variesOnAccept: Bool,
        render: @escaping @Sendable () async throws -> Rendered
    ) async throws(ProxyError) -> Output {
        if let (image, cached) = await variants.image(forKey: key) {
            metrics.recordVariant(cached.rawValue)
            return Output(image: image, source: cached, variesOnAccept: variesOnAccept)
        }
        // The task removes itself from the table when it ends.
        let task = inProgress.withLock { tasks in
            if let task = tasks[key] { return task }
            let task = Task { try await self.make(key: key, render: render) }
            tasks[key] = task
            return task
        }
        do {
            let made = try await task.value
            let origin: VariantSource = made.isFromResultStore ? .disk : .miss
            var output = Output(image: made.image, source: origin, variesOnAccept: variesOnAccept, isComplete: made.isComplete)
            output.isFromResultStore = made.isFromResultStore
            metrics.recordVariant(output.cacheLabel)
            return output
        } catch {
            throw Self.proxyError(error, source: source)
        }
    }

    /// The answer to a failure of `source`'s work: a ``ProxyError`` as it is, an ``ImageError``
    /// by its kind, anything else a 500. The file loader's refusals (not a regular file, such
    /// as a FIFO; a link out of the folder) name no file the proxy serves: 404.
    static func proxyError(_ error: any Error, source: ProxyRequest.Source) -> ProxyError {
        switch error {
        case let error as ProxyError:
            return error
        case let error as ImageError:
            if case .local = source, case .invalidURL = error {
                return ProxyError(status: 404, message: "source not found", detail: error.description)
            }
            return ProxyError(error)
        default:
            return ProxyError(status: 500, message: "internal error", detail: "\(error)")
        }
    }

    /// The size and frame count of `recipe`'s source, decoded through the pipeline (and its
    /// caches) after the same checks as an image, and its placeholders (``PlaceholderReport``,
    /// from the decoded first frame): what thumbor's `meta/` reports.
    ///
    /// - Throws: a ``ProxyError`` with the status to answer.
    func sourceSize(of recipe: RenderRecipe) async throws(ProxyError) -> (width: Int, height: Int, frames: Int, placeholders: PlaceholderReport) {
        _ = try plan(for: recipe, accepted: nil)
        let url = try await checkedSourceURL(recipe.source)
        do {
            let container = try await manager.image(for: originalRequest(url, options: [.retryFailed])).container
            // Reduced from the decoded image, a few milliseconds of the decode thread's.
            let placeholders = try await manager.configuration.executor.run { try PlaceholderReport(decoded: container) }
            return (container.image.width, container.image.height, container.animation?.frames.count ?? 1, placeholders)
        } catch {
            throw Self.proxyError(error, source: recipe.source)
        }
    }

    /// The encoded image of `plan` if memory holds it, else `nil`: what ``image(for:accept:)``
    /// would answer from memory, found synchronously, so that the server can answer it without
    /// leaving the connection's event loop.
    /// The caller counts the variant (`webimage_proxy_variants_total{source="memory"}`).
    func cachedImage(for plan: Plan) -> Output? {
        guard let image = variants.memoryImage(forKey: plan.key) else { return nil }
        return Output(image: image, source: .memory, variesOnAccept: plan.variesOnAccept)
    }

    /// What one request makes, decided before any cache is asked.
    struct Plan: Sendable {
        /// The output format; `nil` is the source's own.
        var target: ImageFormat?
        var key: String
        var variesOnAccept: Bool
    }

    /// The plan of `request`, once its origin passes the checks that need no DNS.
    ///
    /// - Throws: ``ProxyError/forbiddenOrigin(_:)``.
    func plan(for request: ProxyRequest, accepted: ImageFormat?) throws(ProxyError) -> Plan {
        try plan(for: request.recipe, accepted: accepted)
    }

    /// The plan of `recipe`: see ``plan(for:accepted:)``.
    func plan(for request: RenderRecipe, accepted: ImageFormat?) throws(ProxyError) -> Plan {
        let target: ImageFormat? = request.format ?? (request.negotiatesFormat ? accepted : nil)
        // Before the caches too, so that a narrower allowlist or policy after a restart is not
        // undone by variants made under the old one. Resolving the name waits for a miss: a
        // hit must not cost a DNS query.
        var key = request.variantKey(format: target?.rawValue ?? "source")
        // Variants that kept the profile are kept apart from the (default) sRGB ones.
        if configuration.keepsColorProfile { key += "|icc=keep" }
        var remote = try checkWithoutResolving(request.source)
        if case .source(let source)? = request.watermark?.origin { remote = try checkWithoutResolving(source) || remote }
        if let frame = request.frame { remote = try checkWithoutResolving(frame) || remote }
        // Variants made under another origin policy are never found: see policyDigest.
        if remote { key += "|policy=" + policyDigest }
        return Plan(target: target, key: key, variesOnAccept: request.negotiatesFormat && request.format == nil)
    }

    /// The checks of `source` that need no DNS, and whether it is an HTTP origin (whose
    /// variants then carry the origin policy in their keys).
    func checkWithoutResolving(_ source: ProxyRequest.Source) throws(ProxyError) -> Bool {
        guard case .remote(let url) = source else { return false }
        if url.scheme == "s3" {
            try checkBucket(of: url)
            return false
        }
        do {
            try originGuard.checkWithoutResolving(url)
        } catch {
            throw .forbiddenOrigin("\(error)")
        }
        return true
    }

    /// Refuses an `s3://` source when no S3 service is configured or its bucket is not allowed.
    /// The endpoint is the configuration's, so there is no address to check.
    private func checkBucket(of url: URL) throws(ProxyError) {
        let buckets = configuration.allowedBuckets
        guard configuration.s3 != nil, !buckets.isEmpty else { throw .badRequest("s3:// sources are not enabled (--allow-bucket)") }
        let bucket = url.host(percentEncoded: false) ?? ""
        guard buckets.contains("*") || buckets.contains(bucket) else {
            throw .forbiddenOrigin("bucket \(bucket) is not allowed")
        }
    }

    /// The URL the pipeline loads: the remote URL once the guard accepts it (the loader checks
    /// it again, with every redirect), the `s3://` URL as it is (``plan(for:accepted:)``
    /// checked its bucket), or the file inside the origin folder.
    func checkedSourceURL(_ source: ProxyRequest.Source) async throws(ProxyError) -> URL {
        switch source {
        case .remote(let url) where url.scheme == "s3":
            return url
        case .remote(let url):
            do {
                try await originGuard.check(url)
            } catch let refusal as OriginGuard.Refusal {
                throw .forbiddenOrigin(refusal.description)
            } catch let error as ImageError {
                throw ProxyError(error)
            } catch {
                throw ProxyError(status: 502, message: "origin failed", detail: "\(error)")
            }
            return url
        case .local(let path):
            guard let root = configuration.originDirectory else {
                throw .badRequest("local:// sources need --origin-dir")
            }
            return root.appendingPathComponent(path)
        }
    }

    /// The variant from the fleet's result store, else rendered now (and then offered to the
    /// store): the work of one entry of the in-progress table, which it leaves when done.
    private func make(key: String, render: () async throws -> Rendered) async throws -> Rendered {
        defer { _ = inProgress.withLock { $0.removeValue(forKey: key) } }
        if let resultStore, let image = await resultStore.variant(forKey: key) {
            await variants.store(image, forKey: key)
            return Rendered(image: image, isComplete: true, isFromResultStore: true)
        }
        let rendered = try await render()
        reclaim.withLock { $0.rendered() }
        // An image of a damaged source is answered, never kept as if it were whole.
        if rendered.isComplete {
            await PipelineStage.store.run { span in
                span.attributes["webimage.bytes"] = rendered.image.body.readableBytes
                await variants.store(rendered.image, forKey: key)
                // Its upload outlives the span: a child span of its own, in the same trace.
                resultStore?.store(rendered.image, forKey: key)
            }
        }
        return rendered
    }

    /// The manager's request for the original at `url`, retried as
    /// ``Configuration/originRetryPolicy`` says. For an HTTP origin the original's
    /// cache key carries ``OriginGuard/policyDigest``, as variant keys do: an original fetched
    /// through a redirect that today's policy refuses (a host since removed from the
    /// allowlist, loopback no longer allowed) is a cache hit that would never follow the
    /// redirect again, so after a restart with a stricter policy it must not be found.
    func originalRequest(_ url: URL, options: ImageOptions) -> ImageRequest {
        var request = ImageRequest(url: url, options: options)
        // For every loader: the S3 client's own policy is also the result store's.
        request.retryPolicy = configuration.originRetryPolicy
        if let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" {
            let digest = policyDigest
            request.cacheKeyFilter = { $0.absoluteString + "|policy=" + digest }
        }
        return request
    }

    /// ``renderWithinBudget(_:from:as:)`` under the work budget.
    private func render(_ recipe: RenderRecipe, from url: URL, as target: ImageFormat?) async throws -> Rendered {
        try await withinWorkBudget { try await renderWithinBudget(recipe, from: url, as: target) }
    }

    /// `work` under the ``Configuration/workBudget``: a budget spent is a `503`, not the
    /// origin's `504`.
    func withinWorkBudget<T>(_ work: () async throws -> T) async throws -> T {
        let budget = WorkDeadline(configuration.workBudget)
        do {
            return try await WorkDeadline.$budget.withValue(budget) { try await work() }
        } catch ImageError.timeout(let detail) where budget.isSpent {
            throw ProxyError(status: 503, message: "the image takes more work than this server allows", detail: detail)
        }
    }

    /// Loads, decodes and processes through the manager, encodes.
    private func renderWithinBudget(_ recipe: RenderRecipe, from url: URL, as target: ImageFormat?) async throws -> Rendered {
        var imageRequest = originalRequest(url, options: [.retryFailed])
        if target == .jpeg { imageRequest.options.insert(.decodeFirstFrameOnly) }
        if configuration.cachesDisabled { imageRequest.options.insert(.fromLoaderOnly) }
        let (thumbnail, processors) = Self.processors(for: recipe, maximumDimension: configuration.limits.maximumDimension)
        imageRequest.thumbnail = thumbnail
        imageRequest.processors = processors
        imageRequest.videoTime = recipe.chosenVideoTime
        imageRequest.videoClip = recipe.videoClip
        imageRequest.page = recipe.chosenPage
        if let frame = recipe.frame {
            let ninePatch = try await firstFrame(of: try await checkedSourceURL(frame))
            imageRequest.processors.append(ThumborFrame(source: frame, ninePatch: ninePatch, maximumDimension: configuration.limits.maximumDimension))
        }
        if let watermark = recipe.watermark {
            imageRequest.processors.append(WatermarkOverlay(watermark: watermark, mark: try await watermarkImage(of: watermark)))
        }
        let container = try await manager.image(for: imageRequest).container
        let registry = configuration.registry
        let format = target ?? FormatNegotiation.sourceOutput(container, registry: registry)
        var options = ImageEncodingOptions()
        options.quality = recipe.formatQuality[format] ?? recipe.quality
        options.stripsMetadata = recipe.stripsICC
        let maxBytes = recipe.maxBytes
        let data = try await PipelineStage.encode.run { span in
            span.attributes["webimage.format"] = format.rawValue
            let data = try await manager.configuration.executor.run { [options] in
                try Self.encode(container, as: format, options: options, maxBytes: maxBytes, registry: registry)
            }
            span.attributes["webimage.bytes"] = data.count
            return data
        }
        let image = EncodedImage(data: data, contentType: format == .apng ? "image/png" : format.mimeType)
        return Rendered(image: image, isComplete: container.isComplete)
    }

    /// The image of `watermark`: the configured one, or its source loaded through the pipeline
    /// (the origin guard, the caches and the limits of a source), first frame only.
    private func watermarkImage(of watermark: RenderRecipe.Watermark) async throws -> Bitmap {
        let url: URL
        switch watermark.origin {
        case .source(let source):
            url = try await checkedSourceURL(source)
        case .configured:
            if let configuredWatermark { return configuredWatermark }
            guard let configured = configuration.imgproxy.watermarkURL else {
                throw ProxyError.badRequest("watermark: no watermark image is configured")
            }
            url = try await checkedSourceURL(.remote(configured))
        }
        return try await firstFrame(of: url)
    }

    /// The first frame of the image at `url` (checked already), through the pipeline: the
    /// caches and the limits of a source. Watermarks and frames are read this way.
    private func firstFrame(of url: URL) async throws -> Bitmap {
        var request = originalRequest(url, options: [.retryFailed, .decodeFirstFrameOnly])
        if configuration.cachesDisabled { request.options.insert(.fromLoaderOnly) }
        return try await manager.image(for: request).container.image
    }

    /// `container` encoded as `format`; with `maxBytes`, a lossy format at the highest quality
    /// (below the asked one) whose bytes fit, found by bisection, or at quality 1 when none fits:
    /// at most ``maximumEncodes`` encodes of the output in all, each after a check of the work
    /// budget (hostile-input finding 5: `format(avif):max_bytes(100)` took nine AVIF encodes).
    static func encode(_ container: ImageContainer, as format: ImageFormat, options: ImageEncodingOptions, maxBytes: Int?, registry: CoderRegistry) throws -> Data {
        let first = try registry.encode(container, as: format, options: options)
        guard let maxBytes, first.count > maxBytes, [.jpeg, .webp, .avif].contains(format), options.quality > 1 else { return first }
        var options = options
        var low = 1, high = options.quality - 1, best: Data?
        // The first encode and the quality-1 fallback are two of the encodes.
        var bisections = maximumEncodes - 2
        while low <= high, bisections > 0 {
            bisections -= 1
            try WorkDeadline.check("fitting \(maxBytes) bytes")
            options.quality = (low + high) / 2
            let data = try registry.encode(container, as: format, options: options)
            if data.count <= maxBytes {
                best = data
                low = options.quality + 1
            } else {
                high = options.quality - 1
            }
        }
        if let best { return best }
        try WorkDeadline.check("fitting \(maxBytes) bytes")
        options.quality = 1
        return try registry.encode(container, as: format, options: options)
    }

    /// The most encodes ``encode(_:as:options:maxBytes:registry:)`` makes of one output: the
    /// first, four steps of bisection (qualities within 1/16 of the range of the best that fits),
    /// and quality 1 when none does.
    static let maximumEncodes = 6

    /// The decode size hint and the processors of `recipe`, in the recipe's order.
    static func processors(for recipe: RenderRecipe, maximumDimension: Int) -> (ImageDecodingOptions.Thumbnail?, [any ImageProcessor]) {
        var thumbnail: ImageDecodingOptions.Thumbnail?
        var processors: [any ImageProcessor] = []
        if recipe.isPlainResize {
            let width = recipe.width, height = recipe.height
            if width != nil || height != nil {
                let mode: ContentMode = width != nil && height != nil ? recipe.box.contentMode : .fit
                // Decoding straight to about the output size lets JPEG and WebP skip most of the
                // work; the resize then makes the exact size (and crops, for cover).
                thumbnail = .size(width: width ?? Self.unbounded, height: height ?? Self.unbounded, contentMode: mode)
                processors.append(ImageProcessors.Resize(width: width, height: height, contentMode: mode))
            }
        } else {
            // A window that depends on the decoded size: RecipeGeometry sees it. The decode can
            // still shrink when that changes nothing of the geometry (see geometryDecodeSize).
            thumbnail = geometryDecodeSize(recipe)
            processors.append(RecipeGeometry(recipe, maximumDimension: maximumDimension))
        }
        if recipe.flipHorizontal { processors.append(ImageProcessors.Flip(.horizontal)) }
        if recipe.flipVertical { processors.append(ImageProcessors.Flip(.vertical)) }
        if recipe.quarterTurns % 4 != 0 { processors.append(ImageProcessors.Rotate(quarterTurns: recipe.quarterTurns % 4)) }
        if !recipe.colorFilters.isEmpty { processors.append(ThumborColorFilter(operations: recipe.colorFilters)) }
        processors += recipe.convolutions as [any ImageProcessor]
        if recipe.equalizes { processors.append(ThumborEqualize()) }
        if recipe.grayscale { processors.append(ImageProcessors.Grayscale()) }
        if recipe.blur > 0 { processors.append(ImageProcessors.GaussianBlur(radius: recipe.blur)) }
        if let sharpen = recipe.sharpen { processors.append(sharpen) }
        if recipe.sharpenSigma > 0 { processors.append(ImgproxySharpen(sigma: recipe.sharpenSigma)) }
        if recipe.pixelate > 1 { processors.append(ImgproxyPixelate(size: recipe.pixelate)) }
        if let noise = recipe.noise, noise.amount > 1 {
            // The same recipe always draws the same noise, so its variant is stable.
            let seed = ThumborNoise.seed([RenderRecipe.sourceKey(recipe.source), String(noise.amount), String(noise.seed)])
            processors.append(ThumborNoise(amount: noise.amount, seed: seed))
        }
        if let canvas = recipe.canvas { processors.append(RecipeCanvas(canvas: canvas, maximumDimension: maximumDimension)) }
        if let roundCorner = recipe.roundCorner { processors.append(roundCorner) }
        return (thumbnail, processors)
    }

    /// A decode size for a recipe that ``RecipeGeometry`` renders, when decoding smaller gives
    /// exactly the output of the full-size decode's geometry: a box with one side (`300x0`), or
    /// a `fit` or `stretch` box, without crops in source pixels, a trim, `orig` or `adaptive`
    /// sides. The registry decodes to exactly the size the geometry would scale the source to
    /// (same rounding), and the geometry then keeps it. A `fill` needs the whole image scaled
    /// to cover the box, which no decode size can ask for without knowing the source's shape.
    static func geometryDecodeSize(_ recipe: RenderRecipe) -> ImageDecodingOptions.Thumbnail? {
        guard recipe.crop == nil, recipe.sizedCrop == nil, recipe.trim == nil, !recipe.adaptive,
              !recipe.widthIsOriginal, !recipe.heightIsOriginal else { return nil }
        switch (recipe.width, recipe.height) {
        case (let width?, nil) where width > 0: return .size(width: width, height: unbounded, contentMode: .fit)
        case (nil, let height?) where height > 0: return .size(width: unbounded, height: height, contentMode: .fit)
        case (let width?, let height?) where width > 0 && height > 0:
            switch recipe.box {
            case .fit: return .size(width: width, height: height, contentMode: .fit)
            case .stretch: return .size(width: width, height: height, contentMode: .stretch)
            default: return nil
            }
        default: return nil
        }
    }

    /// A side left free: larger than any image, so the other side decides the scale.
    private static let unbounded = 1 << 20
}
