import Foundation
import Synchronization
import Testing
@_spi(Testing) import WebImageCore
@testable import WebImageServer
import WebImageTestSupport

@Suite struct VariantCacheTests {
    /// A variant on disk lives as long as the proxy's max-age: the disk cache's clock is moved
    /// past it, nothing waits.
    @Test func variantsExpireAfterTheirLifetime() async throws {
        let directory = TemporaryDirectory("variants")
        defer { directory.remove() }
        // One fake clock for both: real time never enters the test.
        let clock = FakeClock()
        var configuration = DiskCache.Configuration()
        configuration.now = { clock.milliseconds }
        let disk = try DiskCache(directory: directory.url, configuration: configuration)
        let cache = VariantCache(memoryLimit: 0, disk: disk, lifetime: .seconds(60), now: { clock.date })
        let image = EncodedImage(data: Data("bytes".utf8), contentType: "image/webp")

        await cache.store(image, forKey: "k")
        let (found, source) = try #require(await cache.image(forKey: "k"))
        #expect(found == image && source == .disk)

        clock.advance(milliseconds: 59_000)
        #expect(await cache.image(forKey: "k") != nil)
        clock.advance(milliseconds: 2_000)
        #expect(await cache.image(forKey: "k") == nil)
    }

    @Test func withoutALifetimeVariantsStay() async throws {
        let directory = TemporaryDirectory("variants")
        defer { directory.remove() }
        let cache = VariantCache(memoryLimit: 1 << 20, disk: try DiskCache(directory: directory.url), lifetime: nil)
        let image = EncodedImage(data: Data("bytes".utf8), contentType: "image/png")
        await cache.store(image, forKey: "k")
        #expect(await cache.image(forKey: "k")?.1 == .memory)
    }

    /// A burst of variants asked for once fills only the probation eighth of the memory limit,
    /// and a variant asked for twice before it stays in memory through it.
    @Test func variantsAskedOnceDoNotPushOutVariantsAskedAgain() async throws {
        let cache = VariantCache(memoryLimit: 8 << 20, disk: nil, lifetime: nil)
        let bytes = { (seed: Int) in Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }) }
        let hot = EncodedImage(data: bytes(-1), contentType: "image/webp")
        await cache.store(hot, forKey: "hot")
        #expect(await cache.image(forKey: "hot")?.1 == .memory)
        for index in 0..<200 {
            await cache.store(EncodedImage(data: bytes(index), contentType: "image/webp"), forKey: "burst-\(index)")
        }
        let probation = try #require(cache.probation), protected = try #require(cache.protected)
        #expect(probation.totalCost <= 1 << 20 && probation.totalCost >= 900_000)
        #expect(protected.totalCost == 100_000)
        #expect(await cache.image(forKey: "hot")?.0 == hot)
        // The burst's last variants are still there, once each: a second request finds them.
        #expect(await cache.image(forKey: "burst-199")?.1 == .memory)
        #expect(await cache.image(forKey: "burst-0") == nil)
    }

    /// Strong tags from the bytes alone: equal bytes, equal tags, in any process.
    @Test func etagsAreDigestsOfTheBytes() {
        let image = EncodedImage(data: Data("bytes".utf8), contentType: "image/png")
        // `printf bytes | sha256sum`, first 16 bytes, quoted.
        #expect(image.etag == "\"277089d91c0bdf4f2e6862ba7e4a0760\"")
        #expect(EncodedImage(data: Data("bytes".utf8), contentType: "image/webp").etag == image.etag)
        #expect(EncodedImage(data: Data("byteS".utf8), contentType: "image/png").etag != image.etag)
    }
}

/// Time that moves only when the test says so.
final class FakeClock: Sendable {
    private let current = Atomic<Int64>(1_800_000_000_000)

    var milliseconds: Int64 { current.load(ordering: .relaxed) }
    var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
    func advance(milliseconds: Int64) { current.add(milliseconds, ordering: .relaxed) }
}
