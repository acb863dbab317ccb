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
        var result: Result<PipelineResponse, ImageError>?
        var priority: ImagePriority
        var job: SharedJob<PipelineResponse>?
        var subscriptionID: Int?
        var waiters: [CheckedContinuation<PipelineResponse, any Error>] = []
        /// Every consumer's stream of ``events``, by the order they were made.
        var streams: [Int: AsyncStream<Event>.Continuation] = [:]
        var nextStream = 0
        var onEvent: (@Sendable (Event) -> Void)?
        var onOutcome: (@Sendable (Result<PipelineResponse, ImageError>) -> Void)?
    }

    private let state: Mutex<State>
    private let onFinish: @Sendable (ImageTask, Result<PipelineResponse, ImageError>) -> Void

    private static let counter = Mutex(0)

    /// - Parameters:
    ///   - onEvent: the public events, as ``events`` delivers them.
    ///   - onOutcome: the outcome as the pipeline made it, for bytes-only callers within the
    ///     library (the prefetcher, ``ImageManager/data(for:)``).
    init(
        request: ImageRequest,
        onEvent: (@Sendable (Event) -> Void)? = nil,
        onOutcome: (@Sendable (Result<PipelineResponse, ImageError>) -> Void)? = nil,
        onFinish: @escaping @Sendable (ImageTask, Result<PipelineResponse, ImageError>) -> Void
    ) {
        self.request = request
        self.id = Self.counter.withLock { value in
            value += 1
            return value
        }
        self.state = Mutex(State(priority: request.effectivePriority, onEvent: onEvent, onOutcome: onOutcome))
        self.onFinish = onFinish
    }

    /// The priority the task's work runs at; changing it re-orders a download still waiting for
    /// a slot (a shared download runs at the highest priority of its tasks).
    public var priority: ImagePriority {
        get { state.withLock { $0.priority } }
        set {
            let (job, id) = state.withLock { state -> (SharedJob<PipelineResponse>?, Int?) in
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

    /// The task's events from now on, in a stream of their own: any number of consumers may
    /// each ask for one. The outcome is always delivered, even to a stream made after the task
    /// finished; progress and previews reach only the streams made before them, so ask right
    /// after creating the task. A consumer that stops iterating leaves; the others go on.
    public var events: AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let (finished, id) = state.withLock { state -> (Result<PipelineResponse, ImageError>?, Int) in
            defer { state.nextStream += 1 }
            if state.result == nil { state.streams[state.nextStream] = continuation }
            return (state.result, state.nextStream)
        }
        if let finished {
            continuation.yield(.finished(finished.imageResult))
            continuation.finish()
        } else {
            // Set outside the lock: a stream already terminated calls it at once.
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
            }
        }
        return stream
    }

    /// Bytes received so far and expected, as a download reports them.
    public struct Progress: Sendable, Hashable {
        public var received: Int
        /// `nil` when the source announced no length.
        public var expected: Int?

        package init(received: Int, expected: Int?) {
            self.received = received
            self.expected = expected
        }

        /// `received / expected`, when the length is known.
        public var fraction: Double? {
            expected.flatMap { $0 > 0 ? min(1, Double(received) / Double($0)) : nil }
        }
    }

    /// The progress events of ``events`` alone; the stream ends when the task does.
    ///
    /// ```swift
    /// for await progress in task.progress { bar.fraction = progress.fraction ?? 0 }
    /// ```
    public var progress: AsyncStream<Progress> {
        Self.filtering(events) { event in
            if case .progress(let received, let expected) = event { Progress(received: received, expected: expected) } else { nil }
        }
    }

    /// The progressive previews of ``events`` alone (with ``ImageOptions/progressiveLoad``); the
    /// stream ends when the task does.
    ///
    /// ```swift
    /// for await preview in task.previews { view.image = preview.image }
    /// ```
    public var previews: AsyncStream<ImageResponse> {
        Self.filtering(events) { event in
            if case .preview(let response) = event { response } else { nil }
        }
    }

    /// The elements `transform` makes of `events`, in a stream that ends with them.
    private static func filtering<Element: Sendable>(
        _ events: AsyncStream<Event>, _ transform: @escaping @Sendable (Event) -> Element?
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let relay = Task {
            for await event in events {
                if let element = transform(event) { continuation.yield(element) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in relay.cancel() }
        return stream
    }

    /// The image, once loaded.
    ///
    /// - Throws: the load's ``ImageError``; cancelling the awaiting task cancels this one.
    public var response: ImageResponse {
        get async throws {
            try await outcome.imageResult.get()
        }
    }

    /// The outcome as the pipeline made it, once the task completes; cancelling the awaiting
    /// task cancels this one.
    var outcome: Result<PipelineResponse, ImageError> {
        get async {
            do {
                return .success(try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        let result = state.withLock { state -> Result<PipelineResponse, ImageError>? in
                            if state.result == nil { state.waiters.append(continuation) }
                            return state.result
                        }
                        if let result { continuation.resume(with: result.mapError { $0 }) }
                    }
                } onCancel: {
                    cancel()
                })
            } catch {
                return .failure(ImageError(error))
            }
        }
    }

    /// The outcome, once the task has completed.
    public var result: Result<ImageResponse, ImageError>? { state.withLock { $0.result }?.imageResult }

    // MARK: - Driven by the manager

    /// Records the job this task waits on. Returns `false` when the task was cancelled first,
    /// in which case the caller leaves the job again.
    func attach(to job: SharedJob<PipelineResponse>, id: Int?) -> Bool {
        state.withLock { state in
            guard state.result == nil else { return false }
            state.job = job
            state.subscriptionID = id
            return true
        }
    }

    /// Passes on a progress or preview event, unless the task has completed.
    func deliver(_ event: Event) {
        let (handler, streams) = state.withLock { state in
            state.result == nil ? (state.onEvent, Array(state.streams.values)) : (nil, [])
        }
        handler?(event)
        for stream in streams { stream.yield(event) }
    }

    /// Completes the task once; later calls do nothing.
    func complete(_ result: Result<PipelineResponse, ImageError>) {
        let delivery = state.withLock { state -> Delivery? in
            guard state.result == nil else { return nil }
            state.result = result
            defer {
                state.waiters = []
                state.streams = [:]
                state.onEvent = nil
                state.onOutcome = nil
                state.job = nil
            }
            return Delivery(handler: state.onEvent, outcomeHandler: state.onOutcome, streams: Array(state.streams.values), waiters: state.waiters)
        }
        guard let delivery else { return }
        onFinish(self, result)
        delivery.outcomeHandler?(result)
        if delivery.handler != nil || !delivery.streams.isEmpty {
            let finished = Event.finished(result.imageResult)
            delivery.handler?(finished)
            for stream in delivery.streams {
                stream.yield(finished)
                stream.finish()
            }
        }
        for waiter in delivery.waiters { waiter.resume(with: result.mapError { $0 }) }
    }

    /// Who is told of a task's completion.
    private struct Delivery {
        var handler: (@Sendable (Event) -> Void)?
        var outcomeHandler: (@Sendable (Result<PipelineResponse, ImageError>) -> Void)?
        var streams: [AsyncStream<Event>.Continuation]
        var waiters: [CheckedContinuation<PipelineResponse, any Error>]
    }

    public static func == (lhs: ImageTask, rhs: ImageTask) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        "ImageTask #\(id) \(request.url?.absoluteString ?? "<no URL>")"
    }
}
