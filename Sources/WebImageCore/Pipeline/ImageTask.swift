import Foundation
import Synchronization

/// A handle on one load: its events, its priority, and a way to cancel it.
///
/// A task completes exactly once: with the image, with an error, or with
/// ``ImageError/cancelled`` after ``cancel()``, in which case it never delivers an image. Other
/// requests sharing the same download are not affected by one task's cancellation; the
/// download stops only when no task wants it any more.
///
/// ```swift
/// let task = manager.loadImage(with: ImageRequest(url: url, options: .progressiveLoad))
/// task.priority = .high
/// for await event in task.events {
///     switch event {
///     case .progress(let received, let expected): bar.update(received, expected)
///     case .preview(let response), .cached(let response): show(response.image)
///     case .finished(.success(let response)): show(response.image)
///     case .finished(.failure(let error)): print(error)
///     }
/// }
/// ```
public final class ImageTask: Sendable, Hashable, CustomStringConvertible {
    /// What a task reports, in order; ``finished(_:)`` comes last, once.
    public enum Event: Sendable {
        /// Bytes received and expected (when the source announced a length).
        case progress(received: Int, expected: Int?)
        /// A progressive preview of the image still downloading.
        case preview(ImageResponse)
        /// With ``ImageOptions/refreshCached``: the cached copy, delivered while the origin is
        /// asked whether it changed.
        case cached(ImageResponse)
        /// The outcome.
        case finished(Result<ImageResponse, ImageError>)
    }

    /// The request the task loads.
    public let request: ImageRequest
    /// Unique within the process, in creation order.
    public let id: Int

    private struct State {
        var result: Result<ImageResponse, ImageError>?
        var priority: ImagePriority
        var job: SharedJob<ImageResponse>?
        var subscriptionID: Int?
        var waiters: [CheckedContinuation<ImageResponse, any Error>] = []
        var stream: AsyncStream<Event>.Continuation?
        var streamCreated = false
        var onEvent: (@Sendable (Event) -> Void)?
    }

    private let state: Mutex<State>
    private let onFinish: @Sendable (ImageTask, Result<ImageResponse, ImageError>) -> Void

    private static let counter = Mutex(0)

    init(request: ImageRequest, onEvent: (@Sendable (Event) -> Void)? = nil, onFinish: @escaping @Sendable (ImageTask, Result<ImageResponse, ImageError>) -> Void) {
        self.request = request
        self.id = Self.counter.withLock { value in
            value += 1
            return value
        }
        self.state = Mutex(State(priority: request.effectivePriority, onEvent: onEvent))
        self.onFinish = onFinish
    }

    /// The priority the task's work runs at; changing it re-orders a download still waiting for
    /// a slot (a shared download runs at the highest priority of its tasks).
    public var priority: ImagePriority {
        get { state.withLock { $0.priority } }
        set {
            let (job, id) = state.withLock { state -> (SharedJob<ImageResponse>?, Int?) in
                state.priority = newValue
                return (state.job, state.subscriptionID)
            }
            if let job, let id { job.setPriority(newValue, of: id) }
        }
    }

    /// Cancels the task: it completes at once with ``ImageError/cancelled`` (unless it had
    /// already completed), and its share of the work is dropped.
    public func cancel() {
        let (job, id) = state.withLock { ($0.job, $0.subscriptionID) }
        complete(.failure(.cancelled))
        if let job, let id { job.unsubscribe(id) }
    }

    /// The task's events from now on. The outcome is always delivered, even to a stream made
    /// after the task finished; progress and previews reach only a stream made before them, so
    /// ask for it right after creating the task. One stream per task.
    public var events: AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let finished = state.withLock { state -> Result<ImageResponse, ImageError>? in
            precondition(!state.streamCreated, "ImageTask.events can be iterated by one consumer")
            state.streamCreated = true
            if state.result == nil { state.stream = continuation }
            return state.result
        }
        if let finished {
            continuation.yield(.finished(finished))
            continuation.finish()
        }
        return stream
    }

    /// The image, once loaded.
    ///
    /// - Throws: the load's ``ImageError``; cancelling the awaiting task cancels this one.
    public var response: ImageResponse {
        get async throws {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let result = state.withLock { state -> Result<ImageResponse, ImageError>? in
                        if state.result == nil { state.waiters.append(continuation) }
                        return state.result
                    }
                    if let result { continuation.resume(with: result.mapError { $0 }) }
                }
            } onCancel: {
                cancel()
            }
        }
    }

    /// The outcome, once the task has completed.
    public var result: Result<ImageResponse, ImageError>? { state.withLock { $0.result } }

    /// Whether the task has completed (with any outcome).
    public var isFinished: Bool { result != nil }

    // MARK: - Driven by the manager

    /// Records the job this task waits on. Returns `false` when the task was cancelled first,
    /// in which case the caller leaves the job again.
    func attach(to job: SharedJob<ImageResponse>, id: Int?) -> Bool {
        state.withLock { state in
            guard state.result == nil else { return false }
            state.job = job
            state.subscriptionID = id
            return true
        }
    }

    /// Passes on a progress or preview event, unless the task has completed.
    func deliver(_ event: Event) {
        let (handler, stream) = state.withLock { state in
            state.result == nil ? (state.onEvent, state.stream) : (nil, nil)
        }
        handler?(event)
        stream?.yield(event)
    }

    /// Completes the task once; later calls do nothing.
    func complete(_ result: Result<ImageResponse, ImageError>) {
        let delivery = state.withLock { state -> (handler: (@Sendable (Event) -> Void)?, stream: AsyncStream<Event>.Continuation?, waiters: [CheckedContinuation<ImageResponse, any Error>])? in
            guard state.result == nil else { return nil }
            state.result = result
            defer {
                state.waiters = []
                state.stream = nil
                state.onEvent = nil
                state.job = nil
            }
            return (state.onEvent, state.stream, state.waiters)
        }
        guard let delivery else { return }
        onFinish(self, result)
        delivery.handler?(.finished(result))
        if let stream = delivery.stream {
            stream.yield(.finished(result))
            stream.finish()
        }
        for waiter in delivery.waiters { waiter.resume(with: result.mapError { $0 }) }
    }

    public static func == (lhs: ImageTask, rhs: ImageTask) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        "ImageTask #\(id) \(request.url?.absoluteString ?? "<no URL>")"
    }
}
