import Foundation
import Logging
import Synchronization

/// Freshly loaded bytes waiting to be written to the disk cache, once.
final class PendingStore: Sendable {
    let disk: DiskCache
    let key: ImageCacheKey
    let data: Data
    let metadata: DiskCache.Metadata
    private let claimed = Mutex(false)

    init(disk: DiskCache, key: ImageCacheKey, data: Data, metadata: DiskCache.Metadata) {
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
