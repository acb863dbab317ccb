import Foundation
import Synchronization
import WebImage
import WebImageTestSupport

/// A simulated fast scroll: 1,000 targets, every one rebound every 5 ms to a row of a feed whose
/// images come from 300 URLs, on a loopback origin that paces its bodies (2 KB every 10 ms, so a
/// 30 KB thumbnail takes about 150 ms: most loads are cancelled before they finish).
///
/// Like a GUI, everything that touches the targets runs on one serial "main" queue: the rebinds
/// (one job per 5 ms tick) and the binder's delivery. Results that were already on their way
/// when a cell was rebound therefore wait in the queue behind the rebind, which is exactly what
/// the binder's sentinel must catch.
///
/// The figures:
/// - **bytes downloaded for images never shown**: what the loader received for downloads that
///   were cancelled, against the bytes of those downloads in flight when each was cancelled:
///   what the origin had sent by then (read from its log inside the cancellation), received or
///   still in the network's buffers. The target: no more than that, i.e. no work after
///   the cancellation.
/// - **received after the cancellation**: the part of the above that arrived once the download
///   was cancelled, against what was in transit at that moment (sent but not yet received):
///   bytes already on their way, never new ones.
/// - **bytes the origin sent** for those downloads in all, against what it had sent when each
///   was cancelled. The few KB more are chunks the origin's timer wrote before the connection's
///   close reached it: bytes in the kernel's buffers that the client never reads.
/// - **violations**: a target shown an image (or preview) of a URL it no longer holds. Must be 0.
func runScrollBenchmarks(_ report: Report) {
    let result = waitFor { try await simulateScroll() }
    report.add(.init(
        group: "scroll", name: "bytes downloaded for images never shown, \(result.cancelled) of \(result.attempts) downloads cancelled",
        ours: Double(result.receivedByCancelled) / 1024, reference: Double(result.inFlightAtCancel) / 1024,
        referenceName: "bytes of those downloads in flight when cancelled", unit: "KB", goal: .ratioAtMost(1.0)))
    report.add(.init(
        group: "scroll", name: "of which received after the cancellation",
        ours: Double(result.receivedByCancelled - result.receivedAtCancel) / 1024,
        reference: Double(result.inFlightAtCancel - result.receivedAtCancel) / 1024,
        referenceName: "bytes in transit when cancelled (sent, not yet received)", unit: "KB", goal: .ratioAtMost(1.0)))
    report.add(.init(
        group: "scroll", name: "bytes the origin sent for those downloads",
        ours: Double(result.wastedBytes) / 1024, reference: Double(result.inFlightAtCancel) / 1024,
        referenceName: "bytes it had sent when each was cancelled", unit: "KB", goal: .none))
    report.add(.init(
        group: "scroll", name: "targets shown an image of a URL they no longer hold (\(result.imagesShown) images shown)",
        ours: Double(result.violations), reference: Double(result.stalesDropped),
        referenceName: "superseded bindings (completed as cancelled)", unit: "", goal: .valueAtMost(0)))
    report.add(.init(
        group: "scroll", name: "downloads of bytes that had already arrived whole (scroll-backs)",
        ours: Double(result.redownloads), reference: Double(result.completedDownloads),
        referenceName: "downloads that completed", unit: "", goal: .valueAtMost(0)))
    report.add(.init(
        group: "scroll", name: "rebind tick, 1,000 setImage calls on the main queue",
        ours: result.tickMilliseconds, reference: 5,
        referenceName: "the 5 ms scroll period", unit: "ms", goal: .none))
    report.add(.init(
        group: "scroll", name: "targets showing their own URL once the scroll stopped",
        ours: Double(result.settledCorrectly), reference: Double(scrollTargets),
        referenceName: "targets", unit: "", goal: .none))
}

private let scrollTargets = 1000
private let scrollURLs = 300
private let scrollTicks = 300

private struct ScrollResult: Sendable {
    var attempts = 0
    var cancelled = 0
    var wastedBytes = 0
    var inFlightAtCancel = 0
    var receivedByCancelled = 0
    var receivedAtCancel = 0
    var violations = 0
    var stalesDropped = 0
    var imagesShown = 0
    var tickMilliseconds = 0.0
    var settledCorrectly = 0
    /// Downloads of a URL whose bytes had already arrived whole in an earlier download.
    var redownloads = 0
    var completedDownloads = 0
}

private func simulateScroll() async throws -> ScrollResult {
    let origin = try await TestOrigin.start()
    let images = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Demo/images")
    let bodies = try ["thumb-Kite.jpg", "thumb-Path.jpg", "thumb-PastelHills.jpg", "thumb-summer_1am.jpg", "flower.webp"]
        .map { try Data(contentsOf: images.appendingPathComponent($0)) }
    let urls = (0..<scrollURLs).map { index in
        origin.register("/img/\(index)", data: bodies[index % bodies.count])
        return origin.url("/slow/img/\(index)?chunk=2048&delayMs=10")
    }

    let http = HTTPImageLoader()
    let loader = MeteredLoader(base: http, origin: origin)
    // With a disk cache, as an app has: bytes that arrived whole are kept there, so scrolling
    // back never downloads them again.
    let diskDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-scroll-\(getpid())")
    defer { try? FileManager.default.removeItem(at: diskDirectory) }
    let manager = ImageManager(configuration: .init(
        cache: ImageCache(disk: try DiskCache(directory: diskDirectory)), loaders: [loader], registry: .system()))
    let main = DispatchQueue(label: "webimage.bench.main")
    let binder = ImageBinder(manager: manager, delivery: .init { job in main.async(execute: job) })
    let cells = (0..<scrollTargets).map { _ in ScrollCell() }
    let stales = Counter()

    @Sendable func rebind(_ cells: [ScrollCell], to rows: [URL]) {
        for (cell, url) in zip(cells, rows) {
            cell.expect(url)
            cell.setImage(with: url, using: binder, completion: { result in
                if case .failure(.cancelled) = result { stales.add() }
            })
        }
    }

    // The scroll, from a thread of its own (it blocks on the main queue and sleeps).
    let tickNanoseconds = await withCheckedContinuation { (continuation: CheckedContinuation<UInt64, Never>) in
        Thread.detachNewThread {
            var random = SplitMix64(seed: 5)
            var busy: UInt64 = 0
            let period: UInt64 = 5_000_000
            var next = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<scrollTicks {
                let rows = (0..<scrollTargets).map { _ in urls[Int(random.next() % UInt64(scrollURLs))] }
                let start = DispatchTime.now().uptimeNanoseconds
                main.sync { rebind(cells, to: rows) }
                let end = DispatchTime.now().uptimeNanoseconds
                busy += end - start
                next += period
                if next > end { usleep(useconds_t((next - end) / 1000)) } else { next = end }
            }
            continuation.resume(returning: busy / UInt64(scrollTicks))
        }
    }

    // Let the last bindings finish, then let the origin settle every response it started.
    await manager.waitUntilIdle()
    await withCheckedContinuation { continuation in main.async { continuation.resume() } }
    _ = await origin.waitUntil(timeout: .seconds(30)) { records in records.allSatisfy { $0.outcome != .pending } }

    var result = ScrollResult()
    var completedURLs: Set<String> = []
    for attempt in loader.attempts {
        if completedURLs.contains(attempt.url) { result.redownloads += 1 }
        if attempt.completed {
            completedURLs.insert(attempt.url)
            result.completedDownloads += 1
        }
        result.attempts += 1
        guard let atCancel = attempt.bytesAtCancel else { continue }
        result.cancelled += 1
        result.inFlightAtCancel += atCancel
        result.wastedBytes += origin.record(uri: attempt.uri)?.bodyBytesSent ?? 0
        result.receivedAtCancel += attempt.receivedAtCancel ?? 0
        result.receivedByCancelled += attempt.received
    }
    for cell in cells {
        let state = cell.snapshot
        result.violations += state.violations
        result.imagesShown += state.imagesShown
        if state.lastShown == state.expected, state.expected != nil { result.settledCorrectly += 1 }
    }
    result.stalesDropped = stales.value
    result.tickMilliseconds = Double(tickNanoseconds) / 1e6

    try await http.shutdown()
    try await origin.shutdown()
    return result
}

/// A cell of the list. Touched only on the main queue (by the scroll and by the binder's
/// delivery); the lock makes it `Sendable`, not correct: the queue does that.
private final class ScrollCell: ImageTarget {
    struct State {
        var expected: URL?
        var lastShown: URL?
        var imagesShown = 0
        var violations = 0
    }

    private let state = Mutex(State())

    func expect(_ url: URL) {
        state.withLock { $0.expected = url }
    }

    func display(_ display: ImageDisplay) {
        guard let response = display.response else { return }
        state.withLock { state in
            if response.url != state.expected { state.violations += 1 }
            if case .image = display.content {
                state.imagesShown += 1
                state.lastShown = response.url
            }
        }
    }

    var snapshot: State { state.withLock { $0 } }
}

/// The HTTP loader, with each download told apart at the origin (an `attempt` query item) and
/// the origin's byte count for it read at the instant the manager cancels it.
private final class MeteredLoader: ImageLoader {
    struct Attempt: Sendable {
        var uri: String
        /// The URL asked for, before the attempt's tag.
        var url = ""
        /// Whether the whole body arrived.
        var completed = false
        var bytesAtCancel: Int?
        /// Body bytes the loader received, in all and by the time it was cancelled.
        var received = 0
        var receivedAtCancel: Int?
    }

    let base: any ImageLoader
    let origin: TestOrigin
    private let log = Mutex<[Attempt]>([])

    init(base: any ImageLoader, origin: TestOrigin) {
        self.base = base
        self.origin = origin
    }

    var attempts: [Attempt] { log.withLock { $0 } }

    func canLoad(_ url: URL) -> Bool { base.canLoad(url) }

    func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse {
        let index = log.withLock { log in
            log.append(Attempt(uri: "", url: request.url.absoluteString))
            return log.count - 1
        }
        var tagged = request
        tagged.url = URL(string: request.url.absoluteString + "&attempt=\(index)")!
        let uri = tagged.url.path + "?" + (tagged.url.query ?? "")
        log.withLock { $0[index].uri = uri }
        let origin = self.origin
        // A context of our own, between the manager's and the loader, to count what arrives.
        let metered = ImageLoadContext(priority: context.priority, wantsChunks: context.wantsChunks) { progress in
            self.log.withLock { $0[index].received = progress.received }
            context.didReceive(progress.chunk, received: progress.received, expected: progress.expected)
        }
        context.onPriorityChange { metered.priority = $0 }
        return try await withTaskCancellationHandler {
            let response = try await base.load(tagged, context: metered)
            log.withLock { $0[index].completed = true }
            return response
        } onCancel: {
            let sent = origin.record(uri: uri)?.bodyBytesSent ?? 0
            self.log.withLock { log in
                log[index].bytesAtCancel = sent
                log[index].receivedAtCancel = log[index].received
            }
        }
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// A small deterministic generator, so every run scrolls the same way.
private struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
