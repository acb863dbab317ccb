import Foundation
import Synchronization
import Testing
@testable import WebImageCore
import WebImageTestSupport

/// Holds a reservation's body until the test lets it go, so that what the budget grants while
/// something is held is seen without any timing.
private final class Hold: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}


/// The order in which reservations' bodies started.
private final class Log: Sendable {
    private let names = Mutex<[String]>([])
    func append(_ name: String) { names.withLock { $0.append(name) } }
    var all: [String] { names.withLock { $0 } }
}

@Suite("MemoryBudget")
struct MemoryBudgetTests {
    /// Starts a reservation of `amount` whose body waits for `hold`; returns its task.
    private func reserve(_ budget: MemoryBudget, _ amount: Int, until hold: Hold, log: Log? = nil, name: String = "") -> Task<Void, any Error> {
        Task {
            try await budget.withReservation(amount) {
                log?.append(name)
                await hold.wait()
            }
        }
    }

    @Test("reservations that fit together are held together")
    func fitTogether() async throws {
        let budget = MemoryBudget(limit: 100)
        let hold = Hold()
        let a = reserve(budget, 40, until: hold), b = reserve(budget, 60, until: hold)
        #expect(await yieldUntil { budget.held == 100 })
        #expect(budget.waiting == 0)
        hold.open()
        try await a.value
        try await b.value
        #expect(budget.held == 0)
    }

    @Test("a reservation that does not fit waits until memory is released")
    func waitsForRelease() async throws {
        let budget = MemoryBudget(limit: 100)
        let first = Hold(), second = Hold()
        let log = Log()
        let a = reserve(budget, 60, until: first, log: log, name: "a")
        #expect(await yieldUntil { budget.held == 60 })
        let b = reserve(budget, 60, until: second, log: log, name: "b")
        #expect(await yieldUntil { budget.waiting == 1 })
        #expect(log.all == ["a"])
        first.open()
        try await a.value
        #expect(await yieldUntil { log.all == ["a", "b"] })
        #expect(budget.held == 60)
        second.open()
        try await b.value
        #expect(budget.held == 0)
    }

    @Test("one reservation larger than the whole budget runs alone, not never")
    func oversizeRunsAlone() async throws {
        let budget = MemoryBudget(limit: 100)
        let first = Hold(), second = Hold()
        let a = reserve(budget, 10, until: first)
        #expect(await yieldUntil { budget.held == 10 })
        let huge = reserve(budget, 1_000_000, until: second)
        #expect(await yieldUntil { budget.waiting == 1 })
        first.open()
        try await a.value
        // Granted once alone, counted at the whole budget.
        #expect(await yieldUntil { budget.held == 100 })
        second.open()
        try await huge.value
        #expect(budget.held == 0)
    }

    @Test("grants follow arrival: a small reservation does not pass a large one that waits")
    func arrivalOrder() async throws {
        let budget = MemoryBudget(limit: 100)
        let first = Hold(), rest = Hold()
        let log = Log()
        let a = reserve(budget, 60, until: first, log: log, name: "a")
        #expect(await yieldUntil { budget.held == 60 })
        let b = reserve(budget, 60, until: rest, log: log, name: "b")
        #expect(await yieldUntil { budget.waiting == 1 })
        let c = reserve(budget, 10, until: rest, log: log, name: "c")
        #expect(await yieldUntil { budget.waiting == 2 })
        #expect(log.all == ["a"])
        first.open()
        try await a.value
        #expect(await yieldUntil { budget.held == 70 })
        #expect(Set(log.all) == ["a", "b", "c"])
        rest.open()
        try await b.value
        try await c.value
    }

    @Test("a waiter cancelled leaves at once, holds nothing, and lets those behind it in")
    func cancellationWhileWaiting() async throws {
        let budget = MemoryBudget(limit: 100)
        let first = Hold(), rest = Hold()
        let a = reserve(budget, 60, until: first)
        #expect(await yieldUntil { budget.held == 60 })
        let b = reserve(budget, 60, until: rest)
        #expect(await yieldUntil { budget.waiting == 1 })
        let c = reserve(budget, 10, until: rest)
        #expect(await yieldUntil { budget.waiting == 2 })
        b.cancel()
        await #expect(throws: ImageError.cancelled) { try await b.value }
        // c no longer waits behind b, and fits beside a.
        #expect(await yieldUntil { budget.held == 70 })
        #expect(budget.waiting == 0)
        first.open()
        rest.open()
        try await a.value
        try await c.value
        #expect(budget.held == 0)
    }
}

@Suite("Decode memory estimates")
struct DecodeMemoryEstimateTests {
    private func header(_ name: String) throws -> ImageHeader {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent(name)
        return try #require(ImageHeader(sniffing: try Data(contentsOf: url)))
    }

    @Test("JPEG frames say whether they are progressive")
    func progressiveFlag() throws {
        #expect(try header("hopper-progressive-32.jpg").isProgressive == true)
        #expect(try header("hopper.jpg").isProgressive == false)
        #expect(try header("hopper.png").isProgressive == nil)
    }

    @Test("a progressive JPEG's estimate keeps its coefficients, whatever the thumbnail; a baseline one shrinks with it")
    func jpegEstimates() throws {
        var thumbnail = ImageDecodingOptions()
        thumbnail.thumbnail = .maxPixelSize(8)
        let progressive = try header("hopper-progressive-32.jpg")
        let progressivePixels = try #require(progressive.pixelCount)
        #expect(try #require(progressive.estimatedDecodeMemory(options: thumbnail)) >= progressivePixels * 6)
        let baseline = try header("hopper.jpg")
        let full = try #require(baseline.estimatedDecodeMemory(options: .init()))
        let pixels = try #require(baseline.pixelCount)
        #expect(full == pixels * 4)
        #expect(try #require(baseline.estimatedDecodeMemory(options: thumbnail)) < full)
    }

    @Test("a lying header's estimate saturates instead of overflowing; no size, no estimate")
    func saturation() {
        let huge = ImageHeader(format: .png, pixelWidth: Int.max / 2, pixelHeight: 4)
        #expect(huge.estimatedDecodeMemory(options: .init()) == .max)
        #expect(ImageHeader(format: .gif).estimatedDecodeMemory(options: .init()) == nil)
    }
}
