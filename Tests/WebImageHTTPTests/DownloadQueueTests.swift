import Foundation
import Testing
@testable import WebImageHTTP
import WebImageCore
import WebImageTestSupport

/// Concurrency limits, priority order, FIFO/LIFO and cancellation, as the server sees them.
@Suite("Download queue")
struct DownloadQueueTests {
    /// With one slot held at a gate, queues downloads one by one (so their arrival order is
    /// known), re-prioritises one while it waits, opens the gate, and returns the order in
    /// which the server saw the queued paths.
    func serverOrder(_ order: HTTPImageLoader.QueueOrder) async throws -> [String] {
        var result: [String] = []
        try await withLoader({
            $0.maximumConcurrentDownloads = 1
            $0.order = order
        }) { origin, loader in
            for path in ["/first", "/low", "/normal-1", "/normal-2", "/high", "/bumped"] {
                origin.register(path, data: Data(path.utf8))
            }
            let gate = origin.gate("/first")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { _ = try await loader.load(origin.url("/first")) }
                #expect(await origin.waitForRequests(path: "/first", count: 1))

                let bumped = ImageLoadContext(priority: .veryLow)
                let queued: [(String, ImageLoadContext)] = [
                    ("/low", ImageLoadContext(priority: .low)),
                    ("/normal-1", ImageLoadContext(priority: .normal)),
                    ("/bumped", bumped),
                    ("/normal-2", ImageLoadContext(priority: .normal)),
                    ("/high", ImageLoadContext(priority: .high)),
                ]
                for (index, (path, context)) in queued.enumerated() {
                    group.addTask { _ = try await loader.load(ImageLoadRequest(url: origin.url(path)), context: context) }
                    await loader.waitUntilQueued(index + 1)
                }
                bumped.priority = .veryHigh
                #expect(origin.allRequests.count == 1)
                gate.open()
                try await group.waitForAll()
            }
            #expect(origin.maxConcurrentRequests == 1)
            result = origin.allRequests.map(\.path)
        }
        return result
    }

    @Test func fifoOrderByPriorityAtTheServer() async throws {
        let order = try await serverOrder(.fifo)
        #expect(order == ["/first", "/bumped", "/high", "/normal-1", "/normal-2", "/low"])
    }

    @Test func lifoOrderByPriorityAtTheServer() async throws {
        let order = try await serverOrder(.lifo)
        #expect(order == ["/first", "/bumped", "/high", "/normal-2", "/normal-1", "/low"])
    }

    @Test func neverRunsMoreThanTheLimit() async throws {
        try await withLoader({ $0.maximumConcurrentDownloads = 3 }) { origin, loader in
            origin.register("/c", data: Data("c".utf8))
            let gate = origin.gate("/c")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<10 {
                    group.addTask { _ = try await loader.load(origin.url("/c?n=\(index)")) }
                }
                #expect(await origin.waitForRequests(path: "/c", count: 3))
                await loader.waitUntilQueued(7)
                #expect(origin.requestCount(path: "/c") == 3)
                // Let them through one at a time: each finished download lets exactly one more in.
                for arrived in 4...10 {
                    #expect(gate.releaseOne())
                    #expect(await origin.waitForRequests(path: "/c", count: arrived))
                    #expect(loader.queue.runningCount <= 3)
                }
                gate.open()
                try await group.waitForAll()
            }
            #expect(origin.maxConcurrentRequests == 3)
            #expect(loader.queue.runningCount == 0)
            #expect(loader.queue.waitingCount == 0)
        }
    }

    @Test func aCancelledQueuedDownloadNeverReachesTheServer() async throws {
        try await withLoader({ $0.maximumConcurrentDownloads = 1 }) { origin, loader in
            origin.register("/first", data: Data("1".utf8))
            origin.register("/queued", data: Data("2".utf8))
            origin.register("/after", data: Data("3".utf8))
            let gate = origin.gate("/first")
            let first = Task { try await loader.load(origin.url("/first")) }
            #expect(await origin.waitForRequests(path: "/first", count: 1))
            let queued = Task { try await loader.load(origin.url("/queued")) }
            await loader.waitUntilQueued(1)
            queued.cancel()
            #expect(await imageError { try await queued.value } == .cancelled)
            // It left the queue at once, while the only slot was still taken.
            #expect(loader.queue.waitingCount == 0)
            #expect(loader.queue.runningCount == 1)
            gate.open()
            _ = try await first.value
            _ = try await loader.load(origin.url("/after"))
            #expect(origin.allRequests.map(\.path) == ["/first", "/after"])
            #expect(loader.queue.runningCount == 0)
        }
    }

    @Test(arguments: [TestOrigin.Gate.Mode.holdHeaders, .sendHeadersThenHold(bytes: 1000)])
    func cancellingARunningDownloadClosesItsConnection(mode: TestOrigin.Gate.Mode) async throws {
        try await withLoader { origin, loader in
            origin.register("/running/x", data: TestOrigin.generatedBody(size: 50000))
            let gate = origin.gate("/running/x", mode: mode)
            let progress = Collected<Int>()
            let task = Task {
                try await loader.load(ImageLoadRequest(url: origin.url("/running/x")), context: ImageLoadContext { progress.append($0.received) })
            }
            #expect(await origin.waitForRequests(path: "/running/x", count: 1))
            if mode != .holdHeaders {
                while progress.values.isEmpty { await Task.yield() }  // the body is streaming
            }
            task.cancel()
            #expect(await imageError { try await task.value } == .cancelled)
            #expect(await origin.waitForConnectionClose(path: "/running/x"))
            #expect(origin.requests(path: "/running/x").first?.outcome == .aborted)
            #expect(loader.queue.runningCount == 0)
            gate.open()
        }
    }

    @Test func anAlreadyCancelledTaskNeverStarts() async throws {
        try await withLoader { origin, loader in
            origin.register("/never", data: Data("n".utf8))
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await loader.load(origin.url("/never"))
            }
            #expect(await imageError { try await task.value } == .cancelled)
            #expect(origin.requestCount(path: "/never") == 0)
            #expect(loader.queue.runningCount == 0)
        }
    }
}
