import Foundation
import Synchronization
import Testing
import WebImageTestSupport
@_spi(Testing) @testable import WebImageCore

private final class Counters: Sendable {
    let running = Atomic<Int>(0)
    let peak = Atomic<Int>(0)
    /// Set when a job stopped waiting for a second one to overlap it (see the width test).
    let gaveUp = Atomic<Bool>(false)
}

@Suite struct BlockingExecutorTests {
    @Test func runsWorkOnItsOwnNamedThreads() async throws {
        let executor = BlockingExecutor(name: "test.io", width: 2)
        defer { executor.shutdown() }
        let name = try await executor.run { currentThreadName() }
        #expect(name.hasPrefix("test.io."))
    }

    /// The job blocks until the caller has given up on it: the timeout, not the job, ends the call.
    @Test(.timeLimit(.minutes(1 * Deadlines.stretch))) func aJobThatDoesNotReturnInTimeFailsWithTimeout() async throws {
        let executor = BlockingExecutor(name: "test.timeout", width: 1)
        defer { executor.shutdown() }
        let release = DispatchSemaphore(value: 0)
        let error = await #expect(throws: ImageError.self) {
            try await executor.run(timeout: .milliseconds(50)) { release.wait() }
        }
        release.signal()
        if case .timeout = error {} else { Issue.record("not a timeout: \(String(describing: error))") }
        // The thread is free again, and a job that returns in time gives its result (a time as
        // long as the test's limit: on a loaded machine the thread may wait to be scheduled).
        #expect(try await executor.run(timeout: .seconds(60 * Deadlines.stretch)) { 42 } == 42)
    }

    @Test func neverRunsMoreJobsAtOnceThanItsWidth() async throws {
        let executor = BlockingExecutor(name: "test.width", width: 3)
        defer { executor.shutdown() }
        let counters = Counters()
        let overlapped = DispatchSemaphore(value: 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<24 {
                group.addTask {
                    try await executor.run {
                        let now = counters.running.add(1, ordering: .sequentiallyConsistent).newValue
                        counters.peak.max(now, ordering: .sequentiallyConsistent)
                        if now >= 2 { overlapped.signal() }
                        // A job alone waits for a second to start beside it: on a loaded machine the
                        // jobs can be submitted further apart than a job's few milliseconds. The
                        // wait is bounded only against a broken pool, which reaches it once.
                        if counters.peak.load(ordering: .sequentiallyConsistent) < 2, !counters.gaveUp.load(ordering: .sequentiallyConsistent),
                           overlapped.wait(timeout: .now() + .seconds(60 * Deadlines.stretch)) == .timedOut {
                            counters.gaveUp.store(true, ordering: .sequentiallyConsistent)
                        }
                        // Busy for a moment so that jobs overlap if the pool lets them.
                        let end = DispatchTime.now().uptimeNanoseconds + 2_000_000
                        while DispatchTime.now().uptimeNanoseconds < end {}
                        counters.running.subtract(1, ordering: .sequentiallyConsistent)
                    }
                }
            }
            try await group.waitForAll()
        }
        let mostAtOnce = counters.peak.load(ordering: .sequentiallyConsistent)
        #expect(mostAtOnce <= 3)
        #expect(mostAtOnce >= 2)
    }

    @Test func workForAnAlreadyCancelledTaskDoesNotRun() async {
        let executor = BlockingExecutor(name: "test.cancel", width: 1)
        defer { executor.shutdown() }
        let counters = Counters()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await executor.run { counters.running.add(1, ordering: .relaxed) }
        }
        await #expect(throws: ImageError.cancelled) { try await task.value }
        let runs = counters.running.load(ordering: .relaxed)
        #expect(runs == 0)
    }

    @Test func theDiskCachesAsyncAPIDoesItsFileIOOnItsExecutor() async throws {
        let directory = TemporaryDirectory("executor")
        defer { directory.remove() }
        let executor = BlockingExecutor(name: "test.disk", width: 1)
        defer { executor.shutdown() }
        let threads = Mutex<Set<String>>([])
        var configuration = DiskCache.Configuration()
        configuration.executor = executor
        configuration.sweepsOnOpen = false
        // The partial-write hook runs in the middle of the file write: where it runs, the I/O runs.
        configuration.afterPartialWrite = { threads.withLock { _ = $0.insert(currentThreadName()) } }
        let cache = try DiskCache(directory: directory.url, configuration: configuration)
        try await cache.store(Data(count: 100), forKey: "k")
        #expect(threads.withLock { $0 } == ["test.disk.0"])
    }
}
