import Foundation
import Logging
import Synchronization
import Tracing

extension ImageManager {
    // MARK: - Stage 3: the processed image

    func runImageJob(_ job: SharedJob<PipelineResponse>, plan: StagePlan) async {
        defer { imageJobs.remove(job, forKey: plan.imageKey) }
        do {
            // With refreshCached, show the cached copy first, then ask the origin.
            var cached: PipelineResponse?
            if plan.imageKey.mode == .refresh {
                cached = await cachedCopy(plan: plan)
                if let cached { job.send(.preview(cached)) }
            }
            if let stored = await processedBytesFromDisk(plan: plan) {
                job.send(.value(stored))
                return
            }
            let decoded = try await decode(for: job, plan: plan)
            var timings = ImageResponse.Timings()
            timings.load = decoded.loaded.duration
            timings.decode = decoded.duration

            if decoded.loaded.isRevalidated {
                job.send(.value(try await confirmedCopy(cached, decoded: decoded, plan: plan, timings: timings)))
                return
            }
            guard var container = decoded.container else {
                var response = PipelineResponse(container: nil, data: decoded.loaded.data, url: plan.url, cacheType: decoded.loaded.cacheType, isRevalidated: decoded.loaded.isRevalidated, timings: timings)
                response.contentType = decoded.loaded.metadata.contentType
                response.diskWrite = decoded.loaded.pendingStore
                job.send(.value(response))
                return
            }
            let processors = plan.request.processors
            if !processors.isEmpty {
                guard job.hasSubscribers else { throw ImageError.cancelled }
                let duration: Duration
                (container, duration) = try await PipelineStage.process.run { [container] _ in
                    try await configuration.executor.run { [container] in
                        let started = ContinuousClock.now
                        let processed = try processors.apply(to: container)
                        return (processed, ContinuousClock.now - started)
                    }
                }
                timings.process = duration
            }
            plan.cache.memory.set(container, forKey: plan.memoryKey, cost: container.cost)
            var response = PipelineResponse(container: container, data: decoded.loaded.data, url: plan.url, cacheType: decoded.loaded.cacheType, timings: timings)
            response.diskWrite = decoded.loaded.pendingStore
            job.send(.value(response))
            await storeProcessedBytes(of: container, plan: plan)
        } catch {
            job.send(.failure(ImageError(error)))
        }
    }

    /// The decoded image `job` processes, from the decode stage's shared job; its progress and
    /// previews (processed) are passed on to `job`.
    private func decode(for job: SharedJob<PipelineResponse>, plan: StagePlan) async throws -> DecodedImage {
        let processors = plan.request.processors
        let waiter = JobWaiter<JobKey, DecodedImage> { event in
            switch event {
            case .progress(let progress):
                job.send(.progress(progress))
            case .preview(let decoded):
                // Previews arrive on a decode thread, where running the processors is fine.
                guard let preview = decoded.container,
                      let processed = try? processors.apply(to: preview) else { return }
                job.send(.preview(PipelineResponse(container: processed, url: plan.url, cacheType: .none)))
            case .value, .failure:
                break
            }
        }
        job.onPriorityChange { waiter.setPriority($0) }
        return try await waiter.value(of: decodeJobs, key: plan.decodeKey, priority: job.priority) { [self] decodeJob in
            await runDecodeJob(decodeJob, plan: plan)
        }
    }

    /// The variant decoded from its processed bytes on disk (``ImageRequest/processedDataFormat``),
    /// and kept in memory; `nil` when there are none, or they do not decode (they are removed).
    private func processedBytesFromDisk(plan: StagePlan) async -> PipelineResponse? {
        guard let key = plan.processedDataKey, plan.imageKey.mode == .normal || plan.imageKey.mode == .cacheOnly,
              let disk = plan.cache.disk,
              let entry = await PipelineStage.diskRead.lookUp({ await disk.entry(forKey: key) }) else { return nil }
        let container: ImageContainer, duration: Duration
        do {
            (container, duration) = try await configuration.executor.run { [registry = configuration.registry] in
                let started = ContinuousClock.now
                let container = try registry.decode(entry.data, options: .init())
                return (container, ContinuousClock.now - started)
            }
        } catch {
            // Cancellation, or a work budget that ran out, says nothing of the bytes: they stay.
            let saysNothing = (error as? ImageError) == .cancelled || WorkDeadline.budget?.isSpent == true
            if !saysNothing { await disk.removeEntry(forKey: key) }
            return nil
        }
        plan.cache.memory.set(container, forKey: plan.memoryKey, cost: container.cost)
        var timings = ImageResponse.Timings()
        timings.decode = duration
        return PipelineResponse(container: container, data: entry.data, url: plan.url, cacheType: .disk, timings: timings)
    }

    /// After a `304`: the copy shown first stays; without one (it did not decode before), the
    /// cached bytes the origin just confirmed are decoded now.
    private func confirmedCopy(_ cached: PipelineResponse?, decoded: DecodedImage, plan: StagePlan, timings: ImageResponse.Timings) async throws -> PipelineResponse {
        var confirmed: PipelineResponse
        if let cached {
            confirmed = cached
        } else {
            let request = plan.request
            let container = try await configuration.executor.run { [self, data = decoded.loaded.data] in
                try request.processors.apply(to: try configuration.registry.decode(data, options: decodingOptions(for: request, data: data)))
            }
            confirmed = PipelineResponse(container: container, data: decoded.loaded.data, url: plan.url, cacheType: .disk, timings: timings)
        }
        confirmed.isRevalidated = true
        if let container = confirmed.container {
            plan.cache.memory.set(container, forKey: plan.memoryKey, cost: container.cost)
        }
        return confirmed
    }

    /// Encodes the processed image and stores it on disk under its own key, when the request
    /// asks for processed bytes.
    private func storeProcessedBytes(of container: ImageContainer, plan: StagePlan) async {
        guard let key = plan.processedDataKey, let format = key.encoding,
              !plan.request.options.contains(.cacheMemoryOnly), let disk = plan.cache.disk else { return }
        let encoded = try? await PipelineStage.encode.run { span in
            span.attributes["webimage.format"] = format.rawValue
            let encoded = try await configuration.executor.run { [registry = configuration.registry, container] in
                try registry.encode(container, as: format)
            }
            span.attributes["webimage.bytes"] = encoded.count
            return encoded
        }
        guard let encoded else { return }
        try? await PipelineStage.store.run { _ in
            try await disk.store(encoded, forKey: key, metadata: .init(contentType: format.mimeType, url: plan.url.absoluteString))
        }
    }

    /// The cached image for a refreshing request: from memory, else decoded from the bytes on
    /// disk; `nil` when neither has it.
    func cachedCopy(plan: StagePlan) async -> PipelineResponse? {
        if let container = plan.cache.memory.value(forKey: plan.memoryKey) {
            return PipelineResponse(container: container, url: plan.url, cacheType: .memory)
        }
        guard plan.cache.existsOnDisk(forKey: plan.dataKey.key) else { return nil }
        let waiter = JobWaiter<JobKey, DecodedImage>()
        let cacheOnly = StagePlan(
            request: plan.request, url: plan.url,
            dataKey: plan.dataKey.with(key: plan.dataKey.key, mode: .cacheOnly),
            decodeKey: plan.decodeKey.with(key: plan.decodeKey.key, mode: .cacheOnly),
            imageKey: plan.imageKey.with(key: plan.imageKey.key, mode: .cacheOnly),
            memoryKey: plan.memoryKey, processedDataKey: plan.processedDataKey, cache: plan.cache, loader: plan.loader)
        guard let decoded = try? await waiter.value(of: decodeJobs, key: cacheOnly.decodeKey, priority: plan.request.effectivePriority, body: { [self] job in
            await runDecodeJob(job, plan: cacheOnly)
        }), var container = decoded.container else { return nil }
        if !plan.request.processors.isEmpty {
            let processors = plan.request.processors
            guard let processed = try? await configuration.executor.run({ [container] in
                try processors.apply(to: container)
            }) else { return nil }
            container = processed
        }
        return PipelineResponse(container: container, data: decoded.loaded.data, url: plan.url, cacheType: .disk)
    }
}
