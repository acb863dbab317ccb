import Foundation
import Synchronization

/// The line between one download and the manager that asked for it: the priority the download
/// should run at (which changes as requests join, leave or are re-prioritised) and a sink for
/// progress and the bytes as they arrive.
///
/// A loader reads ``priority`` when it queues the download and registers
/// ``onPriorityChange(_:)`` to re-queue it; it calls ``didReceive(_:received:expected:)`` for
/// each chunk. Thread-safe.
///
/// ```swift
/// let context = ImageLoadContext(priority: .normal) { progress in
///     print("\(progress.received) of \(progress.expected ?? -1) bytes")
/// }
/// let response = try await loader.load(ImageLoadRequest(url: url), context: context)
/// ```
public final class ImageLoadContext: Sendable {
    /// One step of a download's progress.
    public struct Progress: Sendable {
        /// The chunk that just arrived, when ``ImageLoadContext/wantsChunks`` is set.
        public var chunk: Data?
        /// Bytes received so far.
        public var received: Int
        /// Bytes announced by the source (`Content-Length`), when known.
        public var expected: Int?
    }

    private struct State {
        var priority: ImagePriority
        var priorityHandler: (@Sendable (ImagePriority) -> Void)?
        var retryHandler: (@Sendable (RetryPolicy.Retry) -> Void)?
    }

    private let state: Mutex<State>
    private let progress: (@Sendable (Progress) -> Void)?
    /// Whether the receiver wants each chunk's bytes (for progressive decoding); when `false`
    /// loaders pass `nil` and save the copy.
    public let wantsChunks: Bool

    public init(priority: ImagePriority = .normal, wantsChunks: Bool = false, progress: (@Sendable (Progress) -> Void)? = nil) {
        self.state = Mutex(State(priority: priority))
        self.wantsChunks = wantsChunks
        self.progress = progress
    }

    /// The priority the download should run at now.
    public var priority: ImagePriority {
        get { state.withLock { $0.priority } }
        set {
            let handler: (@Sendable (ImagePriority) -> Void)? = state.withLock { state in
                guard state.priority != newValue else { return nil }
                state.priority = newValue
                return state.priorityHandler
            }
            handler?(newValue)
        }
    }

    /// Registers the one handler told of later priority changes (replacing an earlier one),
    /// called outside any lock of the context.
    public func onPriorityChange(_ handler: (@Sendable (ImagePriority) -> Void)?) {
        state.withLock { $0.priorityHandler = handler }
    }

    /// Registers the one handler told of each retry the loader is about to make (replacing an
    /// earlier one): the manager counts them, and tells whoever asked to hear of them.
    package func onRetry(_ handler: (@Sendable (RetryPolicy.Retry) -> Void)?) {
        state.withLock { $0.retryHandler = handler }
    }

    /// Reports that the loader will try again after `retry.delay`, called outside any lock.
    package func didRetry(_ retry: RetryPolicy.Retry) {
        let handler = state.withLock { $0.retryHandler }
        handler?(retry)
    }

    /// Reports bytes that arrived: `chunk` (pass it only when ``wantsChunks``), the total
    /// `received` so far and the `expected` total when known.
    public func didReceive(_ chunk: Data?, received: Int, expected: Int?) {
        progress?(Progress(chunk: wantsChunks ? chunk : nil, received: received, expected: expected))
    }
}
