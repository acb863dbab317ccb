import Foundation
import Logging
import Synchronization
import Tracing

extension ImageManager {
    // MARK: - Stage 1: the bytes

    func runDataJob(_ job: SharedJob<LoadedData>, plan: StagePlan) async {
        defer { dataJobs.remove(job, forKey: plan.dataKey) }
        let options = plan.request.options
        let mode = plan.dataKey.mode
        let disk = plan.cache.disk
        let started = ContinuousClock.now
        do {
            if mode == .normal || mode == .cacheOnly, let disk {
                if let entry = await cachedEntry(for: plan, in: disk) {
                    logger.debug("disk hit", metadata: ["url": "\(plan.url)"])
                    job.send(.value(LoadedData(data: entry.data, metadata: entry.metadata, cacheType: .disk, duration: ContinuousClock.now - started)))
                    return
                }
            }
            if mode == .normal || mode == .cacheOnly, let pending = pendingStores.store(for: plan.dataKey) {
                // Bytes that arrived whole are still being written: they are used, not loaded again.
                job.send(.value(LoadedData(data: pending.data, metadata: pending.metadata, cacheType: .memory, duration: ContinuousClock.now - started, pendingStore: pending)))
                return
            }
            guard mode != .cacheOnly, let loader = plan.loader else {
                throw ImageError.cacheMiss(plan.dataKey.key.description)
            }
            var cachedEntry: DiskCache.Entry?
            if mode == .refresh, let disk {
                cachedEntry = await disk.entry(forKey: plan.dataKey.key)
            }
            let response = try await load(plan, with: loader, job: job, revalidating: cachedEntry)
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
                pendingStores.makeStore(for: plan.dataKey, disk: $0, data: response.data, metadata: metadata)
            }
            let told = job.send(.value(LoadedData(data: response.data, metadata: metadata, cacheType: .none, duration: ContinuousClock.now - started, pendingStore: store)))
            // Every requester left as the last byte arrived: nobody decodes them, but they are
            // kept (they may be wanted again in a moment).
            if told == 0 { await store?.writeIfDecodable(registry: configuration.registry, logger: logger) }
        } catch {
            let error = ImageError(error)
            // The loader has run its retries by now: a failure that reaches this point is
            // final, and one a retry could pass was never permanent.
            if error.isPermanent { failedURLs.insert(plan.url.absoluteString) }
            logger.debug("load failed", metadata: ["url": "\(plan.url)", "error": "\(error)"])
            job.send(.failure(error))
        }
    }

    /// The original's entry in the disk cache, read in a span (on the calling thread when the
    /// request asks so).
    private func cachedEntry(for plan: StagePlan, in disk: DiskCache) async -> DiskCache.Entry? {
        let key = plan.dataKey.key
        return await PipelineStage.diskRead.lookUp {
            plan.request.options.contains(.readsDiskOnCallingThread) ? disk.blocking.entry(forKey: key) : await disk.entry(forKey: key)
        }
    }

    /// Asks `loader` for `plan`'s bytes, in a span: the request's headers, modifier and retry policy, and
    /// the validators of `cachedEntry` when revalidating. Progress goes to `job`'s requests and
    /// the priority follows theirs. The loader's retries are one download's, whoever shares
    /// it: counted once, and told to the ``RetryObserver`` bound where the download started.
    private func load(
        _ plan: StagePlan, with loader: any ImageLoader, job: SharedJob<LoadedData>, revalidating cachedEntry: DiskCache.Entry?
    ) async throws -> ImageLoadResponse {
        let options = plan.request.options
        var request = ImageLoadRequest(
            url: plan.url, headers: plan.request.headers, options: options,
            validators: cachedEntry.flatMap { ImageLoadRequest.Validators($0.metadata) })
        request.modifier = plan.request.requestModifier
        request.retryPolicy = plan.request.retryPolicy
        let context = ImageLoadContext(priority: job.priority, wantsChunks: options.contains(.progressiveLoad)) { progress in
            job.send(.progress(progress))
        }
        job.onPriorityChange { context.priority = $0 }
        let metrics = self.metrics, observer = RetryObserver.current
        context.onRetry { retry in
            metrics.recordRetry(retry.reason)
            observer?.hear(retry)
        }
        logger.debug("loading", metadata: ["url": "\(plan.url)", "priority": "\(job.priority)"])
        return try await PipelineStage.load.run { span in
            span.attributes["url.full"] = plan.url.absoluteString
            let response = try await loader.load(request, context: context)
            span.attributes["webimage.bytes"] = response.data.count
            return response
        }
    }
}
