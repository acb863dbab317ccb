import Foundation
import Logging
import Synchronization
import Tracing

extension ImageManager {
    /// Starts a load: a memory hit completes the task before this returns; otherwise the task
    /// joins (or starts) the processing job of its variant, which runs the stages below it.
    func start(
        _ request: ImageRequest,
        onEvent: (@Sendable (ImageTask.Event) -> Void)? = nil,
        onOutcome: (@Sendable (Result<PipelineResponse, ImageError>) -> Void)? = nil
    ) -> ImageTask {
        let started = ContinuousClock.now
        let task = makeTask(request, onEvent: onEvent, onOutcome: onOutcome, started: started)
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
        if let container = PipelineStage.memoryLookup.lookUp({ memoryHit(for: request, key: imageKey, cache: cache) }) {
            var response = PipelineResponse(
                container: container, url: url, cacheType: .memory, timings: .init(total: ContinuousClock.now - started))
            response.scale = request.resolvedScale
            completeFromMemory(task, response: response, dataKey: dataKey, cache: cache)
            return task
        }
        guard let plan = makePlan(request, url: url, dataKey: dataKey, cache: cache, mode: mode, task: task) else { return task }
        subscribe(task, to: plan, started: started)
        return task
    }

    /// A task whose completion is measured and logged.
    private func makeTask(
        _ request: ImageRequest,
        onEvent: (@Sendable (ImageTask.Event) -> Void)?,
        onOutcome: (@Sendable (Result<PipelineResponse, ImageError>) -> Void)?,
        started: ContinuousClock.Instant
    ) -> ImageTask {
        let metrics = self.metrics
        let logger = self.logger
        return ImageTask(request: request, onEvent: onEvent, onOutcome: onOutcome) { task, result in
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
    }

    /// Completes `task` with a memory hit, adding the bytes from disk when the request asks
    /// for them (on the spot with `readsDiskOnCallingThread`).
    private func completeFromMemory(_ task: ImageTask, response: PipelineResponse, dataKey: ImageCacheKey, cache: ImageCache) {
        let options = task.request.options
        guard options.contains(.queryMemoryData), let disk = cache.disk else {
            task.complete(.success(response))
            return
        }
        if options.contains(.readsDiskOnCallingThread) {
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
    }

    /// The stages' keys and loader for `request`, or `nil` (the task completed with the
    /// failure) when no loader handles its URL.
    private func makePlan(
        _ request: ImageRequest, url: URL, dataKey: ImageCacheKey, cache: ImageCache, mode: JobKey.Mode, task: ImageTask
    ) -> StagePlan? {
        var loader = request.loader
        if loader == nil, mode != .cacheOnly {
            loader = configuration.loaders.first { $0.canLoad(url) }
            if loader == nil {
                failedURLs.insert(url.absoluteString)
                task.complete(.failure(.invalidURL("no loader handles \(url.scheme.map { "\($0):" } ?? "this") URLs")))
                return nil
            }
        }
        let privateLoader = request.loader == nil ? nil : privateLoaderCounter.withLock { counter in
            counter += 1
            return counter
        }
        let imageKey = request.imageKey(forDataKey: dataKey)
        let base = JobKey(key: dataKey, mode: mode, cache: ObjectIdentifier(cache), privateLoader: privateLoader)
        let bytesOnly = request.options.contains(.bytesOnly)
        return StagePlan(
            request: request,
            url: url,
            dataKey: base,
            decodeKey: base.with(key: request.decodeKey(forDataKey: dataKey), bytesOnly: bytesOnly),
            imageKey: base.with(key: imageKey, bytesOnly: bytesOnly),
            memoryKey: imageKey,
            processedDataKey: request.processedDataKey(forDataKey: dataKey),
            cache: cache,
            loader: loader
        )
    }

    /// Joins `task` to the processing job of `plan`'s variant, starting it if none runs.
    private func subscribe(_ task: ImageTask, to plan: StagePlan, started: ContinuousClock.Instant) {
        let url = plan.url, scale = plan.request.resolvedScale
        let (job, id, joined) = imageJobs.subscribe(
            key: plan.imageKey,
            priority: task.priority,
            handler: { event in
                switch event {
                case .progress(let progress):
                    task.deliver(.progress(received: progress.received, expected: progress.expected))
                case .preview(var preview):
                    preview.url = url
                    preview.scale = scale
                    guard let response = preview.imageResponse else { return }
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
            body: { [self] job in
                await PipelineStage.image.run { span in
                    span.attributes["url.full"] = url.absoluteString
                    await runImageJob(job, plan: plan)
                }
            }
        )
        if joined { metrics.coalesced.increment() }
        if !task.attach(to: job, id: id), let id { job.unsubscribe(id) }
    }
}

extension ImageManager {
    /// Starts a bytes-only load of `request`'s original: no decode, no thumbnail, no
    /// processors, and its own jobs (it never shares a decode with requests that want pixels).
    func startBytesOnly(_ request: ImageRequest, onOutcome: (@Sendable (Result<PipelineResponse, ImageError>) -> Void)?) -> ImageTask {
        var bytesOnly = request
        bytesOnly.options.insert(.bytesOnly)
        bytesOnly.thumbnail = nil
        bytesOnly.processors = []
        bytesOnly.processedDataFormat = nil
        return start(bytesOnly, onOutcome: onOutcome)
    }
}

/// Numbers the requests that bring a loader of their own, so that their jobs are never shared.
private let privateLoaderCounter = Mutex(0)
