import Foundation
import Logging
import Synchronization

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

    var key: String
    var mode: Mode
    var cache: ObjectIdentifier
    /// Set for requests with their own loader, so they never share a download with others.
    var privateLoader: Int?

    func with(key: String, mode: Mode? = nil) -> JobKey {
        JobKey(key: key, mode: mode ?? self.mode, cache: cache, privateLoader: privateLoader)
    }
}

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

/// Freshly loaded bytes waiting to be written to the disk cache, once.
final class PendingStore: Sendable {
    let disk: DiskCache
    let key: String
    let data: Data
    let metadata: DiskCache.Metadata
    private let claimed = Mutex(false)

    init(disk: DiskCache, key: String, data: Data, metadata: DiskCache.Metadata) {
        self.disk = disk
        self.key = key
        self.data = data
        self.metadata = metadata
    }

    /// Writes the bytes, if no one did yet. The write is not the caller's to cancel: bytes that
    /// have fully arrived are stored even when whoever asked for them has left (a list cell
    /// reused during a fast scroll), so that scrolling back does not download them again.
    func write(logger: Logger) async {
        guard claimed.withLock({ claimed in
            defer { claimed = true }
            return !claimed
        }) else { return }
        // A task of its own: it inherits no cancellation, and is awaited all the same so that
        // whoever waits for the pipeline to be idle waits for it too.
        let outcome = await Task { [disk, data, key, metadata] in
            try await disk.store(data, forKey: key, metadata: metadata)
        }.result
        if case .failure(let error) = outcome {
            let level: Logger.Level = ImageError(error) == .cancelled ? .debug : .warning
            logger.log(level: level, "not stored on disk", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    /// Writes the bytes, if no one did yet and they look like an image `registry` decodes:
    /// for bytes nobody decodes (delivered undecoded, or left behind by a cancelled load),
    /// since only a successful decode proves them an image.
    func writeIfDecodable(registry: CoderRegistry, logger: Logger) async {
        guard let format = ImageFormat(sniffing: data), registry.decoder(for: format) != nil else { return }
        await write(logger: logger)
    }
}

/// A decoded image and the bytes it came from: the decode stage's result.
struct DecodedImage: Sendable {
    /// `nil` with ``ImageOptions/avoidDecode``, or after a `304` (the caller keeps its copy).
    var container: ImageContainer?
    var loaded: LoadedData
    var duration: Duration?
}

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

private let privateLoaderCounter = Mutex(0)

extension ImageManager {
    func start(_ request: ImageRequest, onEvent: (@Sendable (ImageTask.Event) -> Void)?) -> ImageTask {
        let started = ContinuousClock.now
        let metrics = self.metrics
        let logger = self.logger
        let task = ImageTask(request: request, onEvent: onEvent) { task, result in
            metrics.duration.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
            switch result {
            case .success(let response):
                metrics.recordHit(response.cacheType)
                logger.debug("finished", metadata: ["url": "\(task.request.url?.absoluteString ?? "")", "source": "\(response.cacheType)"])
            case .failure(let error):
                metrics.recordFailure(error)
                logger.debug("failed", metadata: ["url": "\(task.request.url?.absoluteString ?? "")", "error": "\(error)"])
            }
        }
        metrics.requests.increment()

        guard let url = request.url, let dataKey = request.dataKey else {
            task.complete(.failure(.invalidURL("the request has no URL")))
            return task
        }
        let imageKey = request.imageKey(forDataKey: dataKey)
        let options = request.options
        if !options.contains(.retryFailed), failedURLs.contains(url) {
            task.complete(.failure(.recentlyFailed(url.absoluteString)))
            return task
        }
        let cache = request.cache ?? configuration.cache
        let mode = JobKey.Mode(options)
        let scale = request.resolvedScale

        if mode == .normal || mode == .cacheOnly, !options.contains(.avoidDecode), let container = cache.memory.value(forKey: imageKey) {
            let response = ImageResponse(container: container, url: url, cacheType: .memory, scale: scale, timings: .init(total: ContinuousClock.now - started))
            if options.contains(.queryMemoryData), let disk = cache.disk {
                if options.contains(.queryDiskSync) {
                    var withData = response
                    withData.data = disk.blocking.data(forKey: dataKey)
                    task.complete(.success(withData))
                } else {
                    Task {
                        var withData = response
                        withData.data = await disk.data(forKey: dataKey)
                        task.complete(.success(withData))
                    }
                }
            } else {
                task.complete(.success(response))
            }
            return task
        }

        var loader = request.loader
        if loader == nil, mode != .cacheOnly {
            loader = configuration.loaders.first { $0.canLoad(url) }
            if loader == nil {
                failedURLs.insert(url.absoluteString)
                task.complete(.failure(.invalidURL("no loader handles \(url.scheme.map { "\($0):" } ?? "this") URLs")))
                return task
            }
        }
        let privateLoader = request.loader == nil ? nil : privateLoaderCounter.withLock { counter in
            counter += 1
            return counter
        }
        let base = JobKey(key: dataKey, mode: mode, cache: ObjectIdentifier(cache), privateLoader: privateLoader)
        let plan = StagePlan(
            request: request,
            url: url,
            dataKey: base,
            decodeKey: base.with(key: dataKey + "\u{1}" + request.decodeVariant),
            // Bytes-only requests never share a processing job with requests that want pixels.
            imageKey: base.with(key: options.contains(.avoidDecode) ? imageKey + "\u{1}bytes" : imageKey),
            memoryKey: imageKey,
            cache: cache,
            loader: loader
        )

        let (job, id, joined) = imageJobs.subscribe(
            key: plan.imageKey,
            priority: task.priority,
            handler: { event in
                switch event {
                case .progress(let progress):
                    task.deliver(.progress(received: progress.received, expected: progress.expected))
                case .preview(var response):
                    response.url = url
                    response.scale = scale
                    task.deliver(response.cacheType == .none ? .preview(response) : .cached(response))
                case .value(var response):
                    response.url = url
                    response.scale = scale
                    response.timings.total = ContinuousClock.now - started
                    task.complete(.success(response))
                case .failure(let error):
                    task.complete(.failure(error))
                }
            },
            body: { [self] job in await runImageJob(job, plan: plan) }
        )
        if joined { metrics.coalesced.increment() }
        if !task.attach(to: job, id: id), let id { job.unsubscribe(id) }
        return task
    }

    // MARK: - Stage 3: the processed image

    private func runImageJob(_ job: SharedJob<ImageResponse>, plan: StagePlan) async {
        let request = plan.request
        let options = request.options
        let cache = plan.cache
        defer { imageJobs.remove(job, forKey: plan.imageKey) }
        do {
            // With refreshCached, show the cached copy first, then ask the origin.
            var cached: ImageResponse?
            if plan.imageKey.mode == .refresh {
                cached = await cachedCopy(plan: plan)
                if let cached { job.send(.preview(cached)) }
            }

            if request.processedDataFormat != nil, plan.imageKey.mode == .normal || plan.imageKey.mode == .cacheOnly,
               let entry = await cache.disk?.entry(forKey: plan.memoryKey) {
                if let (container, duration) = try? await configuration.executor.run({ [registry = configuration.registry] in
                    let started = ContinuousClock.now
                    let container = try registry.decode(entry.data, options: .init())
                    return (container, ContinuousClock.now - started)
                }) {
                    cache.memory.set(container, forKey: plan.memoryKey, cost: container.cost)
                    var timings = ImageResponse.Timings()
                    timings.decode = duration
                    job.send(.value(ImageResponse(container: container, data: entry.data, url: plan.url, cacheType: .disk, timings: timings)))
                    return
                }
                await cache.disk?.removeEntry(forKey: plan.memoryKey)
            }

            let processors = request.processors
            let waiter = JobWaiter<JobKey, DecodedImage> { event in
                switch event {
                case .progress(let progress):
                    job.send(.progress(progress))
                case .preview(let decoded):
                    // Previews arrive on a decode thread, where running the processors is fine.
                    guard let preview = decoded.container,
                          let processed = try? processors.reduce(preview, { try $1.process($0) }) else { return }
                    job.send(.preview(ImageResponse(container: processed, url: plan.url, cacheType: .none)))
                case .value, .failure:
                    break
                }
            }
            job.onPriorityChange { waiter.setPriority($0) }
            let decoded = try await waiter.value(of: decodeJobs, key: plan.decodeKey, priority: job.priority) { [self] decodeJob in
                await runDecodeJob(decodeJob, plan: plan)
            }
            var timings = ImageResponse.Timings()
            timings.load = decoded.loaded.duration
            timings.decode = decoded.duration

            if decoded.loaded.isRevalidated {
                // 304: the copy shown first stays; without one (it did not decode before), the
                // cached bytes the origin just confirmed are decoded now.
                var confirmed: ImageResponse
                if let cached {
                    confirmed = cached
                } else {
                    let container = try await configuration.executor.run { [self, data = decoded.loaded.data] in
                        try processors.reduce(try configuration.registry.decode(data, options: decodingOptions(for: request, data: data))) { try $1.process($0) }
                    }
                    confirmed = ImageResponse(container: container, data: decoded.loaded.data, url: plan.url, cacheType: .disk, timings: timings)
                }
                confirmed.isRevalidated = true
                if let container = confirmed.container {
                    cache.memory.set(container, forKey: plan.memoryKey, cost: container.cost)
                }
                job.send(.value(confirmed))
                return
            }
            guard var container = decoded.container else {
                job.send(.value(ImageResponse(container: nil, data: decoded.loaded.data, url: plan.url, cacheType: decoded.loaded.cacheType, isRevalidated: decoded.loaded.isRevalidated, timings: timings)))
                return
            }
            if !processors.isEmpty {
                guard job.hasSubscribers else { throw ImageError.cancelled }
                let duration: Duration
                (container, duration) = try await configuration.executor.run { [container] in
                    let started = ContinuousClock.now
                    let processed = try processors.reduce(container) { try $1.process($0) }
                    return (processed, ContinuousClock.now - started)
                }
                timings.process = duration
            }
            cache.memory.set(container, forKey: plan.memoryKey, cost: container.cost)
            job.send(.value(ImageResponse(container: container, data: decoded.loaded.data, url: plan.url, cacheType: decoded.loaded.cacheType, timings: timings)))

            if let format = request.processedDataFormat, !options.contains(.cacheMemoryOnly), let disk = cache.disk {
                let encoded = try? await configuration.executor.run { [registry = configuration.registry, container] in
                    try registry.encode(container, as: format)
                }
                if let encoded { try? await disk.store(encoded, forKey: plan.memoryKey, metadata: .init(contentType: format.mimeType, url: plan.url.absoluteString)) }
            }
        } catch {
            job.send(.failure(ImageError(error)))
        }
    }

    /// The cached image for a refreshing request: from memory, else decoded from the bytes on
    /// disk; `nil` when neither has it.
    private func cachedCopy(plan: StagePlan) async -> ImageResponse? {
        if let container = plan.cache.memory.value(forKey: plan.memoryKey) {
            return ImageResponse(container: container, url: plan.url, cacheType: .memory)
        }
        guard plan.cache.existsOnDisk(forKey: plan.dataKey.key) else { return nil }
        let waiter = JobWaiter<JobKey, DecodedImage>()
        let cacheOnly = StagePlan(
            request: plan.request, url: plan.url,
            dataKey: plan.dataKey.with(key: plan.dataKey.key, mode: .cacheOnly),
            decodeKey: plan.decodeKey.with(key: plan.decodeKey.key, mode: .cacheOnly),
            imageKey: plan.imageKey.with(key: plan.imageKey.key, mode: .cacheOnly),
            memoryKey: plan.memoryKey, cache: plan.cache, loader: plan.loader)
        guard let decoded = try? await waiter.value(of: decodeJobs, key: cacheOnly.decodeKey, priority: plan.request.effectivePriority, body: { [self] job in
            await runDecodeJob(job, plan: cacheOnly)
        }), var container = decoded.container else { return nil }
        if !plan.request.processors.isEmpty {
            let processors = plan.request.processors
            guard let processed = try? await configuration.executor.run({ [container] in
                try processors.reduce(container) { try $1.process($0) }
            }) else { return nil }
            container = processed
        }
        return ImageResponse(container: container, data: decoded.loaded.data, url: plan.url, cacheType: .disk)
    }

    // MARK: - Stage 2: the decoded image

    private func runDecodeJob(_ job: SharedJob<DecodedImage>, plan: StagePlan) async {
        defer { decodeJobs.remove(job, forKey: plan.decodeKey) }
        let options = plan.request.options
        do {
            let previewer = options.contains(.progressiveLoad) && !options.contains(.avoidDecode)
                ? ProgressivePreviewer(
                    registry: configuration.registry,
                    options: decodingOptions(for: plan.request, data: Data()),
                    executor: configuration.executor
                ) { preview in
                    job.send(.preview(DecodedImage(container: preview, loaded: LoadedData(data: Data(), metadata: .init(), cacheType: .none))))
                }
                : nil
            defer { previewer?.stop() }
            let waiter = JobWaiter<JobKey, LoadedData> { event in
                guard case .progress(let progress) = event else { return }
                job.send(.progress(progress))
                if let chunk = progress.chunk { previewer?.append(chunk) }
            }
            job.onPriorityChange { waiter.setPriority($0) }
            let loaded = try await waiter.value(of: dataJobs, key: plan.dataKey, priority: job.priority) { [self] dataJob in
                await runDataJob(dataJob, plan: plan)
            }
            previewer?.stop()
            if options.contains(.avoidDecode) || loaded.isRevalidated {
                job.send(.value(DecodedImage(container: nil, loaded: loaded)))
                await loaded.pendingStore?.writeIfDecodable(registry: configuration.registry, logger: logger)
                return
            }
            guard job.hasSubscribers else {
                // Everyone left after the bytes arrived: they are kept all the same.
                await loaded.pendingStore?.writeIfDecodable(registry: configuration.registry, logger: logger)
                throw ImageError.cancelled
            }
            let decodingOptions = decodingOptions(for: plan.request, data: loaded.data)
            let container: ImageContainer
            let duration: Duration
            do {
                let estimate = ImageHeader(sniffing: loaded.data)?.estimatedDecodeMemory(options: decodingOptions) ?? 0
                (container, duration) = try await decodeBudget.withReservation(estimate) {
                    // Nobody may want it any more after waiting for memory.
                    guard job.hasSubscribers else { throw ImageError.cancelled }
                    // Timed on the decode thread: the time spent decoding, not waiting for a thread.
                    return try await configuration.executor.run { [registry = configuration.registry, data = loaded.data] in
                        let started = ContinuousClock.now
                        let container = try registry.decode(data, options: decodingOptions)
                        return (container, ContinuousClock.now - started)
                    }
                }
            } catch ImageError.cancelled {
                // Everyone left while the decode waited: the bytes are kept all the same.
                await loaded.pendingStore?.writeIfDecodable(registry: configuration.registry, logger: logger)
                throw ImageError.cancelled
            } catch let error as ImageError {
                if loaded.cacheType == .disk {
                    // Damaged bytes in the cache: drop them so the next request fetches anew.
                    await plan.cache.disk?.removeEntry(forKey: plan.dataKey.key)
                } else if error.isPermanent {
                    failedURLs.insert(plan.url.absoluteString)
                }
                throw error
            }
            logger.debug("decoded", metadata: ["url": "\(plan.url)", "width": "\(container.image.width)", "height": "\(container.image.height)"])
            job.send(.value(DecodedImage(container: container, loaded: loaded, duration: duration)))
            await loaded.pendingStore?.write(logger: logger)
        } catch {
            job.send(.failure(ImageError(error)))
        }
    }

    /// The decode options a request implies: its thumbnail, first frame only, and the
    /// scale-down limit (which needs the header's dimensions).
    func decodingOptions(for request: ImageRequest, data: Data) -> ImageDecodingOptions {
        var options = configuration.decodingOptions
        options.thumbnail = request.thumbnail
        if request.options.contains(.decodeFirstFrameOnly) { options.firstFrameOnly = true }
        if request.options.contains(.scaleDownLargeImages), options.thumbnail == nil,
           let header = ImageHeader(sniffing: data), let width = header.pixelWidth, let height = header.pixelHeight,
           width * height > configuration.scaleDownLimit {
            let shrink = (Double(configuration.scaleDownLimit) / Double(width * height)).squareRoot()
            options.thumbnail = .maxPixelSize(max(1, Int(Double(max(width, height)) * shrink)))
        }
        return options
    }

    // MARK: - Stage 1: the bytes

    private func runDataJob(_ job: SharedJob<LoadedData>, plan: StagePlan) async {
        defer { dataJobs.remove(job, forKey: plan.dataKey) }
        let options = plan.request.options
        let mode = plan.dataKey.mode
        let disk = plan.cache.disk
        let started = ContinuousClock.now
        do {
            if mode == .normal || mode == .cacheOnly, let disk {
                let entry = options.contains(.queryDiskSync) ? disk.blocking.entry(forKey: plan.dataKey.key) : await disk.entry(forKey: plan.dataKey.key)
                if let entry {
                    logger.debug("disk hit", metadata: ["url": "\(plan.url)"])
                    job.send(.value(LoadedData(data: entry.data, metadata: entry.metadata, cacheType: .disk, duration: ContinuousClock.now - started)))
                    return
                }
            }
            guard mode != .cacheOnly, let loader = plan.loader else {
                throw ImageError.cacheMiss(plan.dataKey.key)
            }
            var cachedEntry: DiskCache.Entry?
            if mode == .refresh, let disk {
                cachedEntry = await disk.entry(forKey: plan.dataKey.key)
            }
            var loadRequest = ImageLoadRequest(
                url: plan.url,
                headers: plan.request.headers,
                options: options,
                validators: cachedEntry.flatMap { ImageLoadRequest.Validators($0.metadata) }
            )
            loadRequest.modifier = plan.request.requestModifier
            let context = ImageLoadContext(priority: job.priority, wantsChunks: options.contains(.progressiveLoad)) { progress in
                job.send(.progress(progress))
            }
            job.onPriorityChange { context.priority = $0 }
            logger.debug("loading", metadata: ["url": "\(plan.url)", "priority": "\(job.priority)"])
            let response = try await loader.load(loadRequest, context: context)
            try Task.checkCancellation()
            metrics.downloadedBytes.increment(by: Int64(response.data.count))

            if response.isNotModified, let cachedEntry {
                var metadata = cachedEntry.metadata
                metadata.merge(response.metadata)
                // Stored before the outcome is known, so that a request made after it cannot see
                // the old validators, nor race this write with a newer copy of its own.
                try? await disk?.store(cachedEntry.data, forKey: plan.dataKey.key, metadata: metadata)
                job.send(.value(LoadedData(data: cachedEntry.data, metadata: metadata, cacheType: .disk, isRevalidated: true, duration: ContinuousClock.now - started)))
                return
            }
            var metadata = response.metadata
            metadata.url = plan.url.absoluteString
            if metadata.contentType == nil { metadata.contentType = ImageFormat(sniffing: response.data)?.mimeType }
            let store = options.contains(.cacheMemoryOnly) ? nil : disk.map {
                PendingStore(disk: $0, key: plan.dataKey.key, data: response.data, metadata: metadata)
            }
            let told = job.send(.value(LoadedData(data: response.data, metadata: metadata, cacheType: .none, duration: ContinuousClock.now - started, pendingStore: store)))
            // Every requester left as the last byte arrived: nobody decodes them, but they are
            // kept (they may be wanted again in a moment).
            if told == 0 { await store?.writeIfDecodable(registry: configuration.registry, logger: logger) }
        } catch {
            let error = ImageError(error)
            if error.isPermanent { failedURLs.insert(plan.url.absoluteString) }
            logger.debug("load failed", metadata: ["url": "\(plan.url)", "error": "\(error)"])
            job.send(.failure(error))
        }
    }
}

extension DiskCache.Metadata {
    /// Takes what a `304` refreshed (validators and expiry), keeping the rest.
    mutating func merge(_ fresh: DiskCache.Metadata) {
        if let etag = fresh.etag { self.etag = etag }
        if let lastModified = fresh.lastModified { self.lastModified = lastModified }
        if let expiresAt = fresh.expiresAt { self.expiresAt = expiresAt }
        if let contentType = fresh.contentType { self.contentType = contentType }
    }
}

extension ImageError {
    /// Any error from the pipeline's work, as an ``ImageError``.
    init(_ error: any Error) {
        if let error = error as? ImageError { self = error }
        else if error is CancellationError { self = .cancelled }
        else { self = .network(.init(.other, "\(error)")) }
    }
}

extension ImageResponse.Timings {
    init(total: Duration) {
        self.init()
        self.total = total
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
