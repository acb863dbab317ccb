import DequeModule
import Foundation

/// A fixed set of threads for work that blocks (file I/O) or runs long (decoding), so that
/// neither ever occupies the cooperative thread pool, which has only as many threads as cores.
///
/// ```swift
/// let io = BlockingExecutor(name: "disk", width: 2)
/// let bytes = try await io.run { try Data(contentsOf: url) }
/// ```
public final class BlockingExecutor: Sendable {
    /// A pool for file-system work, shared by every ``DiskCache`` that is not given its own.
    /// Two threads: enough to overlap one slow `open` with reads on a 2-core machine without
    /// letting I/O crowd out decoding.
    public static let io = BlockingExecutor(name: "webimage.io", width: 2)

    /// The number of threads.
    package let width: Int
    private let queue: JobQueue

    /// Starts `width` threads named `name.0`, `name.1`, … (Linux keeps the first 15 bytes).
    public init(name: String, width: Int) {
        precondition(width > 0, "a BlockingExecutor needs at least one thread")
        self.width = width
        self.queue = JobQueue()
        for index in 0..<width {
            let queue = self.queue
            let threadName = "\(name).\(index)"
            Thread {
                // Foundation's Thread.name is unreliable on Linux: a name given before start()
                // is never applied, and one set from inside the thread is sometimes lost.
                Platform.nameCurrentThread(threadName)
                queue.serve()
            }.start()
        }
    }

    /// Runs `body` on one of the executor's threads and returns its result to the caller.
    ///
    /// If the calling task is already cancelled, `body` does not run and the call throws
    /// ``ImageError/cancelled``.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        if Task.isCancelled { throw ImageError.cancelled }
        // The caller's work budget is spent on the thread, and the job's checks see the caller
        // leave (see WorkDeadline).
        let budget = WorkDeadline.budget
        let abandonment = WorkDeadline.Abandonment()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                queue.push {
                    continuation.resume(with: Result {
                        try WorkDeadline.$abandonment.withValue(abandonment) { try budget.map { try $0.run(body) } ?? body() }
                    })
                }
            }
        } onCancel: {
            abandonment.set()
        }
    }

    /// Runs `body` as ``run(_:)`` does, but waits for it at most `timeout`, then throws
    /// ``ImageError/timeout(_:)``: for calls that may block for ever (a read from a hung network
    /// file system). A blocked call cannot be interrupted, so `body` keeps its thread until it
    /// returns, and its result is dropped.
    package func run<T: Sendable>(timeout: Duration, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        if Task.isCancelled { throw ImageError.cancelled }
        let waiter = OnceContinuation<T>()
        return try await withCheckedThrowingContinuation { continuation in
            waiter.set(continuation)
            let timer = Task {
                try await Task.sleep(for: timeout)
                waiter.resume(with: .failure(ImageError.timeout("no answer from the file system in \(timeout)")))
            }
            queue.push {
                let result = Result(catching: body)
                timer.cancel()
                waiter.resume(with: result)
            }
        }
    }

    /// Runs `body` on one of the executor's threads without waiting for it: for background
    /// upkeep whose result nobody awaits.
    package func submit(_ body: @escaping @Sendable () -> Void) {
        queue.push(body)
    }

    /// Lets every thread finish its current job and exit once the queue is empty.
    /// Jobs submitted afterwards never run; use only for executors that are no longer needed.
    public func shutdown() {
        queue.close()
    }
}

/// The executor's queue: a deque guarded by a condition variable.
///
/// `@unchecked Sendable` is sound because every stored property is read and written only
/// between `condition.lock()` and `condition.unlock()`; `NSCondition` is itself thread-safe.
private final class JobQueue: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    private let condition = NSCondition()
    private var jobs = Deque<Job>()
    private var isClosed = false

    func push(_ job: @escaping Job) {
        condition.lock()
        jobs.append(job)
        condition.unlock()
        condition.signal()
    }

    func close() {
        condition.lock()
        isClosed = true
        condition.unlock()
        condition.broadcast()
    }

    /// The body of each worker thread.
    func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty && !isClosed {
                condition.wait()
            }
            guard let job = jobs.popFirst() else {
                condition.unlock()
                return
            }
            condition.unlock()
            job()
        }
    }
}
