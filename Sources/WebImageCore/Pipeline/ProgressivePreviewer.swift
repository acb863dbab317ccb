import Foundation
import Synchronization

/// Feeds a download's chunks to an incremental decoder on the decode threads and reports
/// previews, at most one per ``interval``: what ``ImageOptions/progressiveLoad`` shows while an
/// image arrives.
///
/// Chunks are queued as they arrive and drained by one job at a time on the executor, so the
/// loader's delivery path never waits for a decode, and a slow decode skips straight to the
/// latest bytes instead of falling behind. ``stop()`` ends previews (the final image is about
/// to be delivered); a preview already being made is dropped by the job's own rule that
/// nothing follows its outcome.
///
/// `@unchecked Sendable`: every mutable property except `decoder` and `sniffed` lives in the
/// `Mutex`. Those two are touched only by the drain job, and at most one drain job runs at a
/// time: `state.isDraining` is set under the lock before a drain is submitted and cleared
/// under the lock when it returns, so their accesses never overlap.
final class ProgressivePreviewer: @unchecked Sendable {
    private struct State {
        var pending: [Data] = []
        var isDraining = false
        var isStopped = false
        var lastPreview: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let registry: CoderRegistry
    private let options: ImageDecodingOptions
    private let executor: BlockingExecutor
    private let interval: Duration
    private let onPreview: @Sendable (ImageContainer) -> Void
    private var decoder: (any IncrementalImageDecoder)?
    private var sniffed = Data()

    init(
        registry: CoderRegistry,
        options: ImageDecodingOptions,
        executor: BlockingExecutor,
        interval: Duration = .milliseconds(100),
        onPreview: @escaping @Sendable (ImageContainer) -> Void
    ) {
        self.registry = registry
        self.options = options
        self.executor = executor
        self.interval = interval
        self.onPreview = onPreview
    }

    /// Queues the next bytes of the file.
    func append(_ chunk: Data) {
        let start = state.withLock { state -> Bool in
            guard !state.isStopped else { return false }
            state.pending.append(chunk)
            guard !state.isDraining else { return false }
            state.isDraining = true
            return true
        }
        if start { executor.submit { self.drain() } }
    }

    /// Ends previews: nothing queued is decoded any more.
    func stop() {
        state.withLock { state in
            state.isStopped = true
            state.pending = []
        }
    }

    private func drain() {
        while true {
            let chunks = state.withLock { state -> [Data]? in
                guard !state.isStopped, !state.pending.isEmpty else {
                    state.isDraining = false
                    return nil
                }
                defer { state.pending = [] }
                return state.pending
            }
            guard let chunks else { return }
            do {
                try feed(chunks)
            } catch {
                // A preview is a courtesy: a file the incremental decoder cannot follow simply
                // shows none, and the final decode reports what is wrong with it.
                stop()
                state.withLock { $0.isDraining = false }
                return
            }
            let now = ContinuousClock.now
            let due = state.withLock { state in
                guard !state.isStopped else { return false }
                return state.lastPreview.map { now - $0 >= interval } ?? true
            }
            if due, let preview = try? decoder?.preview() {
                state.withLock { $0.lastPreview = ContinuousClock.now }
                onPreview(preview)
            }
        }
    }

    private func feed(_ chunks: [Data]) throws {
        if let decoder {
            for chunk in chunks { try decoder.append(chunk) }
            return
        }
        for chunk in chunks { sniffed.append(chunk) }
        guard let format = ImageFormat(sniffing: sniffed) else {
            // Not enough bytes to tell the format yet; a format no sniffer knows gives up.
            if sniffed.count > 4096 { throw ImageError.unsupportedFormat("no preview") }
            return
        }
        guard let decoder = registry.makeIncrementalDecoder(for: format, options: options) else {
            throw ImageError.unsupportedFormat("no incremental decoder for \(format.rawValue)")
        }
        self.decoder = decoder
        try decoder.append(sniffed)
        sniffed = Data()
    }
}
