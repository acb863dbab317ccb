import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// HTTP caching (ETag, 304, Cache-Control) and caching through the library: a repeated
/// variant touches neither the origin nor the decoder, and variants share the original.
@Suite struct ProxyCachingTests {
    @Test func aRepeatedVariantTouchesNeitherOriginNorDecoder() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let first = try await harness.get("/e.jpg", "w=100")
        #expect(first.status == 200 && first.header("X-Cache") == "miss")
        #expect(harness.origin.requestCount(path: "/e.jpg") == 1)
        #expect(harness.decodeCount == 1)

        let second = try await harness.get("/e.jpg", "w=100")
        #expect(second.status == 200 && second.header("X-Cache") == "memory")
        #expect(second.body == first.body)
        #expect(harness.origin.requestCount(path: "/e.jpg") == 1)
        #expect(harness.decodeCount == 1)
    }

    @Test func variantsShareTheOriginal() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        for width in [50, 100, 150] {
            #expect(try await harness.get("/e.jpg", "w=\(width)").status == 200)
        }
        #expect(try await harness.get("/e.jpg", "w=100&blur=2").status == 200)
        // One download for four variants; each variant decodes (at its own reduced size).
        #expect(harness.origin.requestCount(path: "/e.jpg") == 1)
        #expect(harness.decodeCount == 4)
        // A second format of an existing variant reuses the processed image in memory.
        #expect(try await harness.get("/e.jpg", "w=100&format=png").status == 200)
        #expect(harness.decodeCount == 4)
    }

    /// Decoded images leave memory after ``ImageProxy/Configuration/imageMemoryLifetime``:
    /// `reclaimMemory()` (the server's every five seconds) drops them, and a second format of the
    /// variant asked after that decodes again.
    @Test func decodedImagesLeaveMemoryAfterTheirLifetime() async throws {
        let harness = try await ProxyHarness.start { $0.imageMemoryLifetime = .milliseconds(50) }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let memory = harness.proxy.manager.configuration.cache.memory

        #expect(try await harness.get("/e.jpg", "w=100").status == 200)
        #expect(memory.count == 1 && harness.decodeCount == 1)
        // An age, not a race: the entry is older than its lifetime once this has passed.
        try await Task.sleep(for: .milliseconds(100))
        harness.proxy.reclaimMemory()
        #expect(memory.count == 0 && memory.totalCost == 0)
        #expect(try await harness.get("/e.jpg", "w=100&format=png").status == 200)
        #expect(harness.decodeCount == 2)
    }

    /// A new proxy over the same cache folder (a restart) answers from disk.
    @Test func variantsSurviveARestartOnDisk() async throws {
        let first = try await ProxyHarness.start()
        first.origin.register("/e.jpg", data: try Fixture.elephants)
        let made = try await first.get("/e.jpg", "w=100")
        #expect(made.header("X-Cache") == "miss")
        await first.stop(keepOrigin: true, keepCache: true)

        let second = try await ProxyHarness.start(origin: first.origin, cacheDirectory: first.cacheDirectory)
        defer { Task { await second.stop() } }
        let again = try await second.get("/e.jpg", "w=100")
        #expect(again.header("X-Cache") == "disk")
        #expect(again.body == made.body)
        #expect(again.header("ETag") == made.header("ETag"))
        #expect(second.decodeCount == 0)
        #expect(second.origin.requestCount(path: "/e.jpg") == 1)
        // Another variant: the original comes from disk, not the origin.
        #expect(try await second.get("/e.jpg", "w=60").header("X-Cache") == "miss")
        #expect(second.origin.requestCount(path: "/e.jpg") == 1)
        #expect(second.decodeCount == 1)
    }

    @Test func withCachesOffEveryRequestDoesTheWork() async throws {
        let harness = try await ProxyHarness.start { $0.cachesDisabled = true }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        #expect(try await harness.get("/e.jpg", "w=100").header("X-Cache") == "miss")
        #expect(try await harness.get("/e.jpg", "w=100").header("X-Cache") == "miss")
        #expect(harness.origin.requestCount(path: "/e.jpg") == 2)
        #expect(harness.decodeCount == 2)
    }

    @Test func conditionalRequestsGet304() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let first = try await harness.get("/e.jpg", "w=100")
        let etag = try #require(first.header("ETag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
        #expect(first.header("Cache-Control") == "public, max-age=86400")

        for tag in [etag, "W/" + etag, "\"other\", " + etag, "*"] {
            let revalidated = try await harness.get("/e.jpg", "w=100", headers: [("If-None-Match", tag)])
            #expect(revalidated.status == 304, "\(tag)")
            #expect(revalidated.body.isEmpty)
            #expect(revalidated.header("ETag") == etag)
            #expect(revalidated.header("Cache-Control") == "public, max-age=86400")
            #expect(revalidated.header("Vary") == "Accept")
        }
        let changed = try await harness.get("/e.jpg", "w=100", headers: [("If-None-Match", "\"stale\"")])
        #expect(changed.status == 200 && changed.body == first.body)
        // Another variant has another tag.
        #expect(try await harness.get("/e.jpg", "w=101").header("ETag") != etag)
    }

    @Test func maxAgeIsConfigurable() async throws {
        let harness = try await ProxyHarness.start { $0.maxAge = 60 }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        #expect(try await harness.get("/e.jpg", "w=10").header("Cache-Control") == "public, max-age=60")
    }

    /// Requests for one variant at the same time make it once.
    @Test func simultaneousRequestsShareTheWork() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let gate = harness.origin.gate("/e.jpg")

        async let first = harness.get("/e.jpg", "w=100")
        #expect(await harness.origin.waitForRequests(path: "/e.jpg", count: 1))
        async let second = harness.get("/e.jpg", "w=100")
        async let third = harness.get("/e.jpg", "w=100")
        // Both later requests are in the proxy once the limiter counts them.
        #expect(await waitUntil { harness.proxy.limiter.current == 3 })
        gate.open()
        let replies = try await [first, second, third]
        #expect(replies.allSatisfy { $0.status == 200 && $0.body == replies[0].body })
        #expect(harness.origin.requestCount(path: "/e.jpg") == 1)
        #expect(harness.decodeCount == 1)
    }
}

/// Polls `condition` with yields (no sleeping), up to a generous bound that only a broken
/// test reaches: as long as a request's deadline, since what it waits for is requests reaching
/// the proxy (20 s fixed was less than a loaded two-core machine can take).
func waitUntil(_ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(60 * Deadlines.stretch)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
