import Foundation
import WebImage

/// The README's tour, step by step.
enum Tour {
    /// async/await: a 256 px thumbnail.
    static func thumbnail(_ manager: ImageManager, _ url: URL) async throws {
        let response = try await manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(256)))
        check(max(response.image.width, response.image.height) <= 256, "thumbnail of \(url.lastPathComponent): \(response.image.width)×\(response.image.height)")
        let again = try await manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(256)))
        check(again.cacheType == .memory, "the second request is a memory hit")
    }

    /// 50 loads at once over a few URLs: every one completes with an image.
    static func concurrentLoads(_ manager: ImageManager, _ urls: [URL]) async throws {
        let widths = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<50 {
                group.addTask {
                    try await manager.image(for: ImageRequest(url: urls[index % urls.count], thumbnail: .maxPixelSize(64))).image.width
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        check(widths.count == 50 && widths.allSatisfy { $0 > 0 && $0 <= 64 }, "50 concurrent loads completed")
    }

    /// A task can be cancelled, and its priority changed while it runs.
    static func cancelAndPriority(_ manager: ImageManager, _ urls: [URL]) async {
        let cancelled = manager.loadImage(with: ImageRequest(url: urls[4], thumbnail: .maxPixelSize(48)))
        cancelled.cancel()
        do {
            _ = try await cancelled.response
            check(false, "a cancelled task fails")
        } catch {
            check(error as? ImageError == .cancelled, "a cancelled task fails with ImageError.cancelled")
        }
        let raised = manager.loadImage(with: ImageRequest(url: urls[4], priority: .low, thumbnail: .maxPixelSize(40)))
        raised.priority = .high
        let response = try? await raised.response
        check(response != nil && raised.priority == .high, "a raised task completes")
    }

    /// Cache queries and removal, by request.
    static func cacheQueries(_ manager: ImageManager, _ url: URL) async throws {
        let request = ImageRequest(url: url)
        _ = try await manager.image(for: request)
        await manager.waitUntilIdle()
        check(manager.cachedType(for: request) == .memory, "cachedType is memory after a load")
        check(manager.cachedType(for: ImageRequest(url: url, thumbnail: .maxPixelSize(10))) == .disk, "another variant finds the original on disk")
        await manager.removeCachedImage(for: request)
        check(manager.cachedType(for: request) == .none, "removeCachedImage empties both levels")
    }

    /// Prefetch a batch, and stop part of it.
    static func prefetch(_ manager: ImageManager, _ urls: [URL]) async {
        try? await manager.removeAllCachedImages()
        let prefetcher = ImagePrefetcher(manager: manager)
        let batch = prefetcher.startPrefetching(urls)
        prefetcher.stopPrefetching([urls[urls.count - 1]])
        let summary = await batch.summary
        check(summary.total == urls.count && summary.completed == urls.count, "prefetch accounted for every URL: \(summary)")
        check(summary.failed == 0, "no prefetch failed")
    }

    /// A processor written as a closure.
    static func closureProcessor(_ manager: ImageManager, _ url: URL) async throws {
        let gray = ImageProcessors.Anonymous(id: "consumer.gray") { container in
            try container.mappingFrames { bitmap in bitmap.grayscaled() }
        }
        let response = try await manager.image(for: ImageRequest(url: url, processors: [gray], thumbnail: .maxPixelSize(32)))
        check(response.image.width > 0, "a closure processor ran")
    }

    /// What a file says about itself, without decoding it.
    static func metadata(_ urls: [URL]) throws {
        for url in urls where url.pathExtension == "gif" {
            let metadata = try ImageMetadata(reading: Data(contentsOf: url))
            check(metadata.frameCount ?? 0 > 1 && metadata.isAnimated == true, "\(url.lastPathComponent): \(metadata.frameCount ?? 0) frames, read without decoding")
        }
    }

    /// Encoding a loaded image.
    static func encoding(_ manager: ImageManager, _ url: URL) async throws {
        let response = try await manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(64)))
        let webp = try CoderRegistry.system().encode(response.container, as: .webp)
        check(ImageFormat(sniffing: webp) == .webp, "encoded a thumbnail as WebP (\(webp.count) bytes)")
    }

    /// A main-actor widget wrapper bound through the default binder.
    @MainActor
    static func mainActorTarget(_ url: URL) async throws {
        let picture = Picture()
        let result = await withCheckedContinuation { continuation in
            picture.setImage(with: url, using: .shared) { result in continuation.resume(returning: result) }
        }
        check((try? result.get()) != nil && picture.shown != nil, "a @MainActor target was shown its image")
    }
}

/// A toolkit widget's wrapper: main-actor isolated, conforming directly.
@MainActor
final class Picture: MainActorImageTarget {
    var shown: Bitmap?

    func display(_ display: ImageDisplay) {
        shown = display.image
    }
}
