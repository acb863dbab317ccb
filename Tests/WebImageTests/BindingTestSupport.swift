import Foundation
import Synchronization
import WebImageCore

/// A target that records everything it was shown, in order.
final class RecordingTarget: ImageTarget {
    private let log = Mutex<[ImageDisplay]>([])

    func display(_ display: ImageDisplay) {
        log.withLock { $0.append(display) }
    }

    /// Everything shown so far.
    var shown: [ImageDisplay] { log.withLock { $0 } }

    /// What was shown, as short strings: `placeholder`, `placeholder(none)`, `preview /path`,
    /// `image /path memory`; the operation key is prefixed unless it is the default one.
    var summary: [String] {
        shown.map { display in
            let prefix = display.operationKey == ImageBinder.defaultOperationKey ? "" : "\(display.operationKey): "
            switch display.content {
            case .placeholder(let container): return prefix + (container == nil ? "placeholder(none)" : "placeholder")
            case .preview(let response): return prefix + "preview \(response.url.path)"
            case .image(let response): return prefix + "image \(response.url.path) \(response.cacheType)"
            }
        }
    }
}

/// Awaits a binding's completion, and checks it comes exactly once.
final class CompletionProbe: Sendable {
    private struct State {
        var results: [Result<ImageResponse, ImageError>] = []
        var waiters: [CheckedContinuation<Result<ImageResponse, ImageError>, Never>] = []
    }

    private let state = Mutex(State())

    /// The closure to pass as a completion.
    var callback: @Sendable (Result<ImageResponse, ImageError>) -> Void {
        { result in
            let waiters = self.state.withLock { state in
                state.results.append(result)
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: result) }
        }
    }

    /// Every completion so far (exactly one is expected).
    var results: [Result<ImageResponse, ImageError>] { state.withLock { $0.results } }

    /// The first completion, once it has come.
    var result: Result<ImageResponse, ImageError> {
        get async {
            await withCheckedContinuation { continuation in
                let first = state.withLock { state in
                    if state.results.isEmpty { state.waiters.append(continuation) }
                    return state.results.first
                }
                if let first { continuation.resume(returning: first) }
            }
        }
    }

    /// Whether the first completion was ``ImageError/cancelled``.
    var wasCancelled: Bool {
        guard results.count == 1, case .failure(.cancelled) = results[0] else { return false }
        return true
    }
}

/// A delivery that queues results until the test runs them: a main loop that has not got to
/// them yet.
final class ManualDelivery: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    var delivery: ImageBinder.Delivery {
        ImageBinder.Delivery { job in
            let ready = self.state.withLock { state in
                state.jobs.append(job)
                let count = state.jobs.count
                let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
                state.waiters.removeAll { $0.count <= count }
                return ready
            }
            for waiter in ready { waiter.resume() }
        }
    }

    var pendingCount: Int { state.withLock { $0.jobs.count } }

    /// Returns once at least `count` jobs are queued.
    func waitForJobs(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.jobs.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Runs the queued jobs in order (and any they queue).
    func drain() {
        while true {
            let jobs = state.withLock { state in
                defer { state.jobs = [] }
                return state.jobs
            }
            if jobs.isEmpty { return }
            for job in jobs { job() }
        }
    }

    /// Runs the queued jobs newest first: a worst-case reordering.
    func drainNewestFirst() {
        let jobs = state.withLock { state in
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in jobs.reversed() { job() }
    }
}

extension ImageContainer {
    /// A 3×3 grey placeholder.
    static let placeholder = ImageContainer(image: try! Bitmap(
        width: 3, height: 3, pixelFormat: .rgba8, pixels: [UInt8](repeating: 128, count: 36)))
}
