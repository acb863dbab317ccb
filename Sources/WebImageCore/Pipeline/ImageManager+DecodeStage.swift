import Foundation
import Logging
import Synchronization
import Tracing

extension ImageManager {
    // MARK: - Stage 2: the decoded image

    func runDecodeJob(_ job: SharedJob<DecodedImage>, plan: StagePlan) async {
        defer { decodeJobs.remove(job, forKey: plan.decodeKey) }
        let options = plan.request.options
        do {
            let previewer = options.contains(.progressiveLoad) && !options.contains(.bytesOnly)
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
            if options.contains(.bytesOnly) || loaded.isRevalidated {
                job.send(.value(DecodedImage(container: nil, loaded: loaded)))
                await loaded.pendingStore?.writeIfDecodable(registry: configuration.registry, logger: logger)
                return
            }
            guard job.hasSubscribers else {
                // Everyone left after the bytes arrived: they are kept all the same.
                await loaded.pendingStore?.writeIfDecodable(registry: configuration.registry, logger: logger)
                throw ImageError.cancelled
            }
            let (container, duration) = try await PipelineStage.decode.run { span in
                let decoded = try await decode(loaded, for: job, plan: plan)
                span.attributes["webimage.width"] = decoded.0.image.width
                span.attributes["webimage.height"] = decoded.0.image.height
                return decoded
            }
            logger.debug("decoded", metadata: ["url": "\(plan.url)", "width": "\(container.image.width)", "height": "\(container.image.height)"])
            job.send(.value(DecodedImage(container: container, loaded: loaded, duration: duration)))
            if let store = loaded.pendingStore {
                await PipelineStage.store.run { _ in await store.write(logger: logger) }
            }
        } catch {
            job.send(.failure(ImageError(error, origin: .decoder)))
        }
    }

    /// Decodes `loaded` once its memory estimate fits the budget, unless everyone left first
    /// (the bytes are then stored all the same). Damaged bytes from the disk are dropped so
    /// that the next request fetches anew; a permanent failure of fresh bytes marks the URL.
    private func decode(_ loaded: LoadedData, for job: SharedJob<DecodedImage>, plan: StagePlan) async throws -> (ImageContainer, Duration) {
        let decodingOptions = decodingOptions(for: plan.request, data: loaded.data)
        do {
            let estimate = ImageHeader(sniffing: loaded.data)?.estimatedDecodeMemory(options: decodingOptions) ?? 0
            return try await decodeBudget.withReservation(estimate) {
                // Nobody may want it any more after waiting for memory.
                guard job.hasSubscribers else { throw ImageError.cancelled }
                // Timed on the decode thread: the time spent decoding, not waiting for a thread.
                return try await configuration.executor.run { [self, registry = configuration.registry, data = loaded.data] in
                    let started = ContinuousClock.now
                    let container = try registry.decode(data, options: decodingOptions)
                    let duration = ContinuousClock.now - started
                    rememberPlaceholder(of: container, decodedWith: decodingOptions, plan: plan)
                    return (container, duration)
                }
            }
        } catch ImageError.cancelled {
            await loaded.pendingStore?.writeIfDecodable(registry: configuration.registry, logger: logger)
            throw ImageError.cancelled
        } catch ImageError.timeout(let detail) where WorkDeadline.budget?.isSpent == true {
            // The caller's work budget ran out, which says nothing of the bytes: a cached copy
            // stays, and fresh bytes are not kept unchecked (checking them would spend the work
            // the budget refused).
            loaded.pendingStore?.forget()
            throw ImageError.timeout(detail)
        } catch {
            // Bytes that do not decode are not handed to anyone else.
            loaded.pendingStore?.forget()
            if loaded.cacheType == .disk {
                await plan.cache.disk?.removeEntry(forKey: plan.dataKey.key)
            } else if (error as? ImageError)?.isPermanent == true {
                failedURLs.insert(plan.url.absoluteString)
            }
            throw error
        }
    }

    /// The decode options a request implies: its thumbnail, first frame only, video time and clip, page,
    /// and the scale-down limit (which needs the header's dimensions).
    func decodingOptions(for request: ImageRequest, data: Data) -> ImageDecodingOptions {
        var options = configuration.decodingOptions
        options.thumbnail = request.thumbnail
        if let videoTime = request.videoTime { options.videoTime = videoTime }
        if let videoClip = request.videoClip { options.videoClip = videoClip }
        if let page = request.page { options.page = page }
        if request.options.contains(.decodeFirstFrameOnly) { options.firstFrameOnly = true }
        if request.options.contains(.scaleDownLargeImages), options.thumbnail == nil,
           let header = ImageHeader(sniffing: data), let width = header.pixelWidth, let height = header.pixelHeight,
           width * height > configuration.scaleDownLimit {
            let shrink = (Double(configuration.scaleDownLimit) / Double(width * height)).squareRoot()
            options.thumbnail = .maxPixelSize(max(1, Int(Double(max(width, height)) * shrink)))
        }
        return options
    }
}
