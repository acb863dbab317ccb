import DequeModule
import Foundation
import Synchronization

/// Loads images ahead of need, a few at a time and at low priority, so that they are in the
/// cache when a view asks for them: SDWebImage's prefetcher, in Swift.
///
/// ```swift
/// let prefetcher = ImagePrefetcher(manager: manager)          // 3 at once, .low, disk only
/// let summary = await prefetcher.prefetch(urls) { progress in
///     print("\(progress.completed) of \(progress.total)")
/// }
/// print("\(summary.finished) downloaded, \(summary.skipped) skipped, \(summary.failed) failed")
///
/// // Or without async code: a batch that can be cancelled on its own.
/// let batch = prefetcher.startPrefetching(urls, completion: { summary in print(summary) })
/// batch.cancel()
/// ```
///
/// **What is loaded.** By default (``Destination/disk``) each URL is loaded with
/// ``ImageManager/data(for:)``: the original bytes go to the disk cache and no time or memory is
/// spent on pixels. ``Destination/memory(thumbnail:)`` decodes into the memory cache as well,
/// optionally downsampled, so that a later request with the same thumbnail size is a memory hit.
///
/// **How many at once.** At most ``Configuration/maximumConcurrentPrefetches`` loads are in
/// flight at once across every batch of the prefetcher; the next one starts as one finishes, in
/// the order given.
///
/// **Counts.** Every URL ends in exactly one of the ``Summary`` counts:
/// - ``Summary/finished``: loaded from its source (downloaded) and cached;
/// - ``Summary/skipped``: nothing was downloaded because the image was already cached (on disk,
///   or for ``Destination/memory(thumbnail:)`` in memory; a disk hit is then still decoded into
///   memory), or because the URL failed permanently a short while ago and the manager refuses
///   it without a load (see ``ImageOptions/retryFailed``), or because it is listed again in
///   the same batch (each request is loaded once per batch);
/// - ``Summary/failed``: the load was tried and failed (HTTP status, network, undecodable bytes),
///   or the URL was not a loadable URL;
/// - ``Summary/cancelled``: the batch was cancelled before the URL completed.
///
/// **Sharing with the foreground.** A prefetch is an ordinary request of its manager: a
/// foreground request for a URL being prefetched joins the download in flight (one request at
/// the server) and raises it to its own priority, also while it still waits in the loader's
/// queue.
public final class ImagePrefetcher: Sendable {
    /// How a prefetcher loads.
    public struct Configuration: Sendable {
        /// Prefetches in flight at once (across all batches). Default: 3.
        public var maximumConcurrentPrefetches = 3
        /// The priority prefetches load at. Default: ``ImagePriority/low``.
        public var priority: ImagePriority = .low
        /// Where the images go. Default: ``Destination/disk``.
        public var destination: Destination = .disk
        /// Added to every request built from a URL (for instance ``ImageOptions/retryFailed``).
        public var options: ImageOptions = []

        public init() {}
    }

    /// Which cache a prefetch fills.
    public enum Destination: Sendable, Hashable {
        /// The original bytes into the disk cache, never decoded.
        case disk
        /// The disk cache and, decoded (to `thumbnail` when given), the memory cache.
        case memory(thumbnail: ImageDecodingOptions.Thumbnail?)
    }

    /// Where a batch stands: every URL is counted once, in one of the outcome counts, when it
    /// completes.
    public struct Summary: Sendable, Hashable, CustomStringConvertible {
        /// URLs in the batch.
        public var total: Int
        /// Loaded from their source.
        public var finished = 0
        /// Not downloaded: already cached, or refused as recently failed.
        public var skipped = 0
        /// Tried and failed, or not loadable.
        public var failed = 0
        /// Not completed because the batch was cancelled.
        public var cancelled = 0
        /// Bytes downloaded: the sum of the sizes of the ``finished`` images.
        public var bytes = 0
        /// The URLs counted in ``failed``, each with its error, in the order they failed.
        public var failures: [Failure] = []

        package init(total: Int) { self.total = total }

        /// URLs completed so far, whatever their outcome.
        public var completed: Int { finished + skipped + failed + cancelled }

        /// Whether every URL has completed.
        public var isComplete: Bool { completed == total }

        public var description: String {
            "\(completed)/\(total): \(finished) finished, \(skipped) skipped, \(failed) failed, \(cancelled) cancelled, \(bytes) bytes"
        }

        /// One URL that failed, and why.
        public struct Failure: Sendable, Hashable, CustomStringConvertible {
            /// `nil` for a request without a URL.
            public var url: URL?
            public var error: ImageError

            package init(url: URL?, error: ImageError) {
                self.url = url
                self.error = error
            }

            public static func == (lhs: Failure, rhs: Failure) -> Bool { lhs.url == rhs.url && lhs.error == rhs.error }
            public func hash(into hasher: inout Hasher) {
                hasher.combine(url)
                hasher.combine(error.description)
            }

            public var description: String { "\(url?.absoluteString ?? "<no URL>"): \(error)" }
        }
    }

    public let manager: ImageManager
    public let configuration: Configuration

    private struct Item: Sendable {
        var batch: Batch
        var index: Int
        var request: ImageRequest
    }

    private struct State {
        var pending = Deque<Item>()
        var running = 0
        /// Whether a thread is starting items: the others leave the starting to it, so that
        /// items completing synchronously never recurse.
        var pumping = false
        var batches: [ObjectIdentifier: Batch] = [:]
    }

    private let state = Mutex(State())

    public init(manager: ImageManager, configuration: Configuration = Configuration()) {
        precondition(configuration.maximumConcurrentPrefetches > 0, "a prefetcher needs at least one prefetch in flight")
        self.manager = manager
        self.configuration = configuration
    }

    // MARK: - Starting

    /// The request the prefetcher loads for `source`: a URL with the configuration's options,
    /// priority and destination; an ``ImageRequest`` as it is (the configuration's
    /// ``Configuration/priority`` and ``Configuration/destination`` do not apply to it).
    private func request(for source: any ImageRequestConvertible) -> ImageRequest {
        guard let url = source as? URL else { return source.asImageRequest() }
        var request = ImageRequest(url: url, options: configuration.options, priority: configuration.priority)
        switch configuration.destination {
        case .disk: request.options.insert(.bytesOnly)
        case .memory(let thumbnail): request.thumbnail = thumbnail
        }
        return request
    }

    /// Starts prefetching `sources` (URLs, or ``ImageRequest``s to load as they are) behind
    /// the batches already queued, and returns the batch.
    ///
    /// `progress` is called after each source completes, in order, with the counts so far;
    /// `completion` is called exactly once, after the last progress, when every source has
    /// completed or the batch was cancelled (at once for an empty list). Both run on the
    /// pipeline's threads (or on the caller's, for sources answered without a load).
    ///
    /// ```swift
    /// prefetcher.startPrefetching(urls + [ImageRequest(url: url, thumbnail: .maxPixelSize(256))]) { summary in
    ///     print(summary)   // 24 of 24: 20 finished, 3 skipped, 1 failed
    /// }
    /// ```
    @discardableResult
    public func startPrefetching(
        _ sources: [any ImageRequestConvertible],
        progress: (@Sendable (Summary) -> Void)? = nil,
        completion: (@Sendable (Summary) -> Void)? = nil
    ) -> Batch {
        let requests = sources.map(request(for:))
        let batch = Batch(prefetcher: self, total: requests.count, progress: progress, completion: completion)
        if requests.isEmpty {
            batch.finishIfComplete()
            return batch
        }
        // A request listed again in the same batch is loaded once; the repeats are skipped.
        var seen = Set<PrefetchKey>()
        var items: [Item] = []
        var repeats = 0
        for (index, request) in requests.enumerated() {
            if let key = request.imageKey {
                guard seen.insert(PrefetchKey(key: key, bytesOnly: request.options.contains(.bytesOnly))).inserted else {
                    repeats += 1
                    continue
                }
            }
            items.append(Item(batch: batch, index: index, request: request))
        }
        state.withLock { state in
            state.batches[ObjectIdentifier(batch)] = batch
            state.pending.append(contentsOf: items)
        }
        for _ in 0..<repeats { batch.record(index: -1, outcome: .skipped) }
        pump()
        return batch
    }

    /// Prefetches `sources` (URLs, or ``ImageRequest``s to load as they are) and returns when
    /// every one has completed. Cancelling the calling task cancels the batch (the summary then
    /// counts what was left as cancelled).
    public func prefetch(_ sources: [any ImageRequestConvertible], progress: (@Sendable (Summary) -> Void)? = nil) async -> Summary {
        let batch = startPrefetching(sources, progress: progress)
        return await withTaskCancellationHandler {
            await batch.summary
        } onCancel: {
            batch.cancel()
        }
    }

    /// Cancels every batch: queued URLs never start, loads in flight are cancelled (their shared
    /// downloads continue only for other requests that want them). Each batch's completion is
    /// still called once.
    public func cancel() {
        let batches = state.withLock { Array($0.batches.values) }
        for batch in batches { batch.cancel() }
    }

    /// Prefetches in flight now (for tests and statistics).
    package var runningCount: Int { state.withLock { $0.running } }

    /// URLs waiting for a slot now.
    package var pendingCount: Int { state.withLock { $0.pending.count } }

    // MARK: - Running

    /// Starts queued items while there is room. One thread at a time does it; items that
    /// complete meanwhile only free their slot, which the starting thread sees on its next turn.
    private func pump() {
        let claimed = state.withLock { state in
            guard !state.pumping else { return false }
            state.pumping = true
            return true
        }
        guard claimed else { return }
        while let item = state.withLock({ state -> Item? in
            guard state.running < configuration.maximumConcurrentPrefetches, let item = state.pending.popFirst() else {
                state.pumping = false
                return nil
            }
            state.running += 1
            return item
        }) {
            launch(item)
        }
    }

    /// Answers `item` without a load when the caches already have it, else starts its load.
    private func launch(_ item: Item) {
        let request = item.request
        if item.batch.isCancelled {
            return complete(item, .failure(.cancelled))
        }
        guard let url = request.url, request.dataKey != nil else {
            return complete(item, .failure(.invalidURL("the request has no URL")))
        }
        if !request.options.contains(.retryFailed), manager.isFailedURL(url) {
            return complete(item, .failure(.recentlyFailed(url.absoluteString)))
        }
        if isCached(request) {
            return complete(item, nil)
        }
        let task = manager.start(request, onOutcome: { [self] result in
            complete(item, result)
        })
        item.batch.attach(task, index: item.index)
    }

    /// Whether the cache a prefetch fills already has `request`'s image, answered from memory
    /// (the disk cache keeps an index) without reading a file.
    private func isCached(_ request: ImageRequest) -> Bool {
        guard !request.options.contains(.fromLoaderOnly), !request.options.contains(.refreshCached),
              let dataKey = request.dataKey else { return false }
        let cache = request.cache ?? manager.configuration.cache
        if request.options.contains(.bytesOnly), cache.disk != nil {
            return cache.existsOnDisk(forKey: dataKey)
        }
        return cache.memory.value(forKey: request.imageKey(forDataKey: dataKey)) != nil
    }

    /// Counts `item`'s outcome (`nil`: cached, skipped without a load) and frees its slot;
    /// an image whose bytes are still being written to disk counts once they are there, so
    /// that a program that exits after its prefetch finds every image it was told of.
    private func complete(_ item: Item, _ result: Result<PipelineResponse, ImageError>?) {
        if case .success(let response) = result, let write = response.diskWrite {
            Task {
                await write.settled()
                record(item, result)
            }
        } else {
            record(item, result)
        }
    }

    private func record(_ item: Item, _ result: Result<PipelineResponse, ImageError>?) {
        item.batch.record(index: item.index, outcome: Outcome(result, url: item.request.url))
        state.withLock { $0.running -= 1 }
        pump()
    }

    /// Forgets `batch`'s queued items (only those of `urls`, when given); returns how many
    /// there were.
    fileprivate func dequeue(_ batch: Batch, urls: Set<URL>? = nil) -> Int {
        state.withLock { state in
            let before = state.pending.count
            state.pending.removeAll { item in
                item.batch === batch && (urls.map { item.request.url.map($0.contains) ?? false } ?? true)
            }
            return before - state.pending.count
        }
    }

    /// Stops prefetching `urls` in every batch, as rows leave a list's prefetch window: those
    /// still queued never start, those loading are cancelled (a download shared with another
    /// request goes on for it). They count as cancelled; the rest of each batch goes on.
    ///
    /// ```swift
    /// prefetcher.stopPrefetching(rowsThatLeft.compactMap(\.imageURL))
    /// ```
    public func stopPrefetching(_ urls: [URL]) {
        let urls = Set(urls)
        guard !urls.isEmpty else { return }
        let batches = state.withLock { Array($0.batches.values) }
        for batch in batches { batch.cancel(urls: urls) }
    }

    fileprivate func forget(_ batch: Batch) {
        state.withLock { _ = $0.batches.removeValue(forKey: ObjectIdentifier(batch)) }
    }

    fileprivate enum Outcome {
        case finished(bytes: Int)
        case skipped
        case failed(Summary.Failure)
        case cancelled

        init(_ result: Result<PipelineResponse, ImageError>?, url: URL?) {
            switch result {
            case .none: self = .skipped
            case .some(.success(let response)):
                self = response.cacheType == .none ? .finished(bytes: response.data?.count ?? 0) : .skipped
            case .some(.failure(.cancelled)): self = .cancelled
            case .some(.failure(.recentlyFailed)): self = .skipped
            case .some(.failure(let error)): self = .failed(Summary.Failure(url: url, error: error))
            }
        }
    }
}

extension ImagePrefetcher {
    /// One list of URLs handed to a prefetcher: its counts so far, its outcome, and a way to
    /// cancel it alone.
    public final class Batch: Sendable {
        private struct State {
            var summary: Summary
            var isCancelled = false
            var isDone = false
            /// Loads in flight, by index in the list.
            var tasks: [Int: ImageTask] = [:]
            /// Summaries waiting to be told, in order; the one deliverer drains them, so the
            /// callbacks run outside the lock and in order.
            var outbox: Deque<(Summary, isFinal: Bool)> = []
            var delivering = false
            var waiters: [CheckedContinuation<Summary, Never>] = []
        }

        private let state: Mutex<State>
        private let progress: (@Sendable (Summary) -> Void)?
        private let completion: (@Sendable (Summary) -> Void)?
        private weak let prefetcher: ImagePrefetcher?

        fileprivate init(prefetcher: ImagePrefetcher, total: Int, progress: (@Sendable (Summary) -> Void)?, completion: (@Sendable (Summary) -> Void)?) {
            self.prefetcher = prefetcher
            self.progress = progress
            self.completion = completion
            self.state = Mutex(State(summary: Summary(total: total)))
        }

        /// The counts so far.
        public var current: Summary { state.withLock { $0.summary } }

        /// Whether every URL has completed (or the batch was cancelled and its loads ended).
        public var isFinished: Bool { state.withLock { $0.isDone } }

        /// The final counts, once the batch has completed. Cancelling the awaiting task does not
        /// cancel the batch (``ImagePrefetcher/prefetch(_:progress:)`` does).
        public var summary: Summary {
            get async {
                await withCheckedContinuation { continuation in
                    let done = state.withLock { state -> Summary? in
                        if state.isDone { return state.summary }
                        state.waiters.append(continuation)
                        return nil
                    }
                    if let done { continuation.resume(returning: done) }
                }
            }
        }

        /// Cancels the batch: its queued URLs never start and count as cancelled, its loads in
        /// flight are cancelled. The completion is called once, when the last of them has ended.
        public func cancel() {
            let first = state.withLock { state in
                defer { state.isCancelled = true }
                return !state.isCancelled && !state.isDone
            }
            guard first else { return }
            let dropped = prefetcher?.dequeue(self) ?? 0
            let tasks = state.withLock { state in
                state.summary.cancelled += dropped
                return Array(state.tasks.values)
            }
            for task in tasks { task.cancel() }
            finishIfComplete()
        }

        /// Stops the batch's items for `urls` alone: see ``ImagePrefetcher/stopPrefetching(_:)``.
        fileprivate func cancel(urls: Set<URL>) {
            guard !isCancelled, !isFinished else { return }
            let dropped = prefetcher?.dequeue(self, urls: urls) ?? 0
            let tasks = state.withLock { state in
                state.summary.cancelled += dropped
                if dropped > 0 { state.outbox.append((state.summary, false)) }
                return state.tasks.values.filter { $0.request.url.map(urls.contains) ?? false }
            }
            for task in tasks { task.cancel() }
            finishIfComplete()
        }

        fileprivate var isCancelled: Bool { state.withLock { $0.isCancelled } }

        /// Records the task loading item `index`; cancels it if the batch was cancelled first.
        fileprivate func attach(_ task: ImageTask, index: Int) {
            let cancelled = state.withLock { state in
                guard !state.isCancelled else { return true }
                // A task that already completed was recorded already.
                if task.result == nil { state.tasks[index] = task }
                return false
            }
            if cancelled { task.cancel() }
        }

        fileprivate func record(index: Int, outcome: ImagePrefetcher.Outcome) {
            state.withLock { state in
                state.tasks[index] = nil
                switch outcome {
                case .finished(let bytes):
                    state.summary.finished += 1
                    state.summary.bytes += bytes
                case .skipped: state.summary.skipped += 1
                case .failed(let failure):
                    state.summary.failed += 1
                    state.summary.failures.append(failure)
                case .cancelled: state.summary.cancelled += 1
                }
                state.outbox.append((state.summary, false))
            }
            finishIfComplete()
        }

        /// Queues the completion once every URL is counted, then delivers what is queued.
        fileprivate func finishIfComplete() {
            let finished = state.withLock { state -> Bool in
                guard !state.isDone, state.summary.isComplete else { return false }
                state.isDone = true
                state.outbox.append((state.summary, true))
                return true
            }
            if finished { prefetcher?.forget(self) }
            deliver()
        }

        /// The next summary to tell, or `nil` (and no one delivering) when none is queued.
        private func nextDelivery() -> (Summary, Bool)? {
            state.withLock { state in
                guard let next = state.outbox.popFirst() else {
                    state.delivering = false
                    return nil
                }
                return (next.0, next.isFinal)
            }
        }

        private func deliver() {
            let claimed = state.withLock { state in
                guard !state.delivering else { return false }
                state.delivering = true
                return true
            }
            guard claimed else { return }
            while let (summary, isFinal) = nextDelivery() {
                if isFinal {
                    completion?(summary)
                    let waiters = state.withLock { state in
                        defer { state.waiters = [] }
                        return state.waiters
                    }
                    for waiter in waiters { waiter.resume(returning: summary) }
                } else {
                    progress?(summary)
                }
            }
        }
    }
}

/// What makes two prefetched requests the same load: the variant, and whether only the bytes
/// are wanted.
private struct PrefetchKey: Hashable {
    var key: ImageCacheKey
    var bytesOnly: Bool
}
