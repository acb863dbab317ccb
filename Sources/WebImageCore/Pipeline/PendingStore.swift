import Foundation
import Logging
import Synchronization

/// Freshly loaded bytes waiting to be written to the disk cache, once.
///
/// Whoever must know the bytes are on disk (a prefetch, before it counts them) waits with
/// ``settled()``; the pipeline settles every store it hands out, by writing it or deciding not
/// to (bytes that do not look like an image). Until then the bytes are in the manager's
/// ``PendingStoreTable``, so that a request that comes meanwhile uses them instead of loading
/// them again.
final class PendingStore: Sendable {
    let disk: DiskCache
    let key: ImageCacheKey
    let data: Data
    let metadata: DiskCache.Metadata
    /// Takes the store out of its table: once settled, or once its bytes failed to decode.
    private let forgotten: @Sendable (PendingStore) -> Void

    private enum Phase {
        case pending(waiters: [CheckedContinuation<Void, Never>])
        case writing(waiters: [CheckedContinuation<Void, Never>])
        case settled
    }

    private let phase = Mutex(Phase.pending(waiters: []))

    init(disk: DiskCache, key: ImageCacheKey, data: Data, metadata: DiskCache.Metadata, forgotten: @escaping @Sendable (PendingStore) -> Void = { _ in }) {
        self.disk = disk
        self.key = key
        self.data = data
        self.metadata = metadata
        self.forgotten = forgotten
    }

    /// Writes the bytes, if no one did yet. The write is not the caller's to cancel: bytes that
    /// have fully arrived are stored even when whoever asked for them has left (a list cell
    /// reused during a fast scroll), so that scrolling back does not download them again.
    func write(logger: Logger) async {
        guard claim() else { return }
        // A task of its own: it inherits no cancellation, and is awaited all the same so that
        // whoever waits for the pipeline to be idle waits for it too.
        let outcome = await Task { [disk, data, key, metadata] in
            try await disk.store(data, forKey: key, metadata: metadata)
        }.result
        if case .failure(let error) = outcome {
            let level: Logger.Level = ImageError(error) == .cancelled ? .debug : .warning
            logger.log(level: level, "not stored on disk", metadata: ["key": "\(key)", "error": "\(error)"])
        }
        settle()
    }

    /// Writes the bytes, if no one did yet and they look like an image `registry` decodes:
    /// for bytes nobody decodes (delivered undecoded, or left behind by a cancelled load),
    /// since only a successful decode proves them an image.
    func writeIfDecodable(registry: CoderRegistry, logger: Logger) async {
        guard let format = ImageFormat(sniffing: data), registry.decoder(for: format) != nil else {
            if claim() { settle() }
            return
        }
        await write(logger: logger)
    }

    /// Returns once the write is done (whether it succeeded) or was decided against.
    func settled() async {
        await withCheckedContinuation { continuation in
            let now = phase.withLock { phase -> Bool in
                switch phase {
                case .pending(var waiters):
                    waiters.append(continuation)
                    phase = .pending(waiters: waiters)
                case .writing(var waiters):
                    waiters.append(continuation)
                    phase = .writing(waiters: waiters)
                case .settled:
                    return true
                }
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Takes the write on; `false` when another caller has it.
    private func claim() -> Bool {
        phase.withLock { phase in
            guard case .pending(let waiters) = phase else { return false }
            phase = .writing(waiters: waiters)
            return true
        }
    }

    /// Takes the bytes out of the table without settling: they failed to decode, so nobody
    /// should be handed them again (another decode of them may still write them).
    func forget() {
        forgotten(self)
    }

    private func settle() {
        forgotten(self)
        let waiters = phase.withLock { phase -> [CheckedContinuation<Void, Never>] in
            defer { phase = .settled }
            switch phase {
            case .pending(let waiters), .writing(let waiters): return waiters
            case .settled: return []
            }
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// The bytes on their way to the disk, by the data job's key.
final class PendingStoreTable: Sendable {
    private let stores = Mutex<[JobKey: PendingStore]>([:])

    /// A store for `key` whose bytes the table offers until the store is settled or forgotten.
    func makeStore(for key: JobKey, disk: DiskCache, data: Data, metadata: DiskCache.Metadata) -> PendingStore {
        let store = PendingStore(disk: disk, key: key.key, data: data, metadata: metadata) { [weak self] store in
            self?.stores.withLock { stores in
                if stores[key] === store { stores[key] = nil }
            }
        }
        stores.withLock { $0[key] = store }
        return store
    }

    /// The bytes being written for `key`, if any.
    func store(for key: JobKey) -> PendingStore? {
        stores.withLock { $0[key] }
    }

    var count: Int { stores.withLock { $0.count } }
}
