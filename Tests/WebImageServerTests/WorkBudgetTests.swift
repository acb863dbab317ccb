import Foundation
import Synchronization
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// Hostile-input finding 5: expensive requests had no time budget (a 15 × 15 `convolution()` on a
/// 4096 px output took 13 s, `format(avif):max_bytes(100)` nine AVIF encodes, a 10,000-frame GIF
/// to WebP 10.7 s). Each variant's decode, processing and encode now share a work budget, the
/// long loops check it, filters check their cost first, and `max_bytes` makes a bounded number
/// of encodes.
@Suite struct WorkBudgetTests {
    /// An encoder that counts its encodes, around the system's.
    final class CountingEncoder: ImageEncoder {
        let base: any ImageEncoder
        let count = Mutex(0)
        init(_ base: any ImageEncoder) { self.base = base }
        var format: ImageFormat { base.format }
        func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data {
            count.withLock { $0 += 1 }
            return try base.encode(image, options: options)
        }
    }

    /// An animation's frames check the budget as they are composed, processed and encoded: with
    /// a budget far below the work, the request ends `503` (not the origin's `504`); with room,
    /// the same request is a `200`.
    @Test func anAnimationPastTheBudgetIsA503() async throws {
        for (budget, status) in [(Duration.milliseconds(1), 503), (.seconds(120 * Deadlines.stretch), 200)] {
            let harness = try await ProxyHarness.start { $0.workBudget = budget }
            defer { Task { await harness.stop() } }
            harness.origin.register("/a.gif", data: try Fixture.animatedGIF)
            let reply = try await harness.request(harness.imagePath("/a.gif", "w=100&format=webp"))
            #expect(reply.status == status, "budget \(budget): \(reply.status) \(reply.text)")
        }
    }

    /// thumbor's `sharpen` on a still image checks the budget between its levels.
    @Test func aFilterPastTheBudgetStops() async throws {
        let harness = try await ThumborServingTests.start { $0.workBudget = .milliseconds(1) }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request(ThumborServingTests.unsafe(harness, "800x0/filters:sharpen(2,1,false)", "/e.jpg"))
        #expect(reply.status == 503, "\(reply.status) \(reply.text)")
    }

    /// A 15 × 15 kernel on a 4096 px output (13 s of one core) is refused from its cost before
    /// any of it runs; the same kernel on a small output runs.
    @Test func aConvolutionTooCostlyIsRefusedBeforeItRuns() async throws {
        let harness = try await ThumborServingTests.start { $0.limits.maximumDimension = 4096 }
        defer { Task { await harness.stop() } }
        let kernel = Array(repeating: "1", count: 225).joined(separator: ";")
        let huge = try await harness.request(ThumborServingTests.unsafe(harness, "4096x4096/filters:convolution(\(kernel),15,true)", "/e.jpg"))
        #expect(huge.status == 413 && huge.text.isEmpty == false, "\(huge.status) \(huge.text)")
        #expect(harness.decodeCount == 1, "the source was decoded, the filter never ran")
        let small = try await harness.request(ThumborServingTests.unsafe(harness, "64x64/filters:convolution(\(kernel),15,true)", "/e.jpg"))
        #expect(small.status == 200)
    }

    /// `max_bytes` that nothing can meet: at most six encodes, then quality 1.
    @Test func maxBytesMakesABoundedNumberOfEncodes() async throws {
        let counting = Mutex<CountingEncoder?>(nil)
        let harness = try await ThumborServingTests.start { configuration in
            let registry = configuration.registry
            let encoder = CountingEncoder(registry.encoder(for: .jpeg)!)
            registry.register(encoder)
            counting.withLock { $0 = encoder }
        }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request(ThumborServingTests.unsafe(harness, "400x0/filters:format(jpeg):max_bytes(100)", "/e.jpg"))
        #expect(reply.status == 200 && reply.format == .jpeg)
        let encodes = counting.withLock { $0!.count.withLock { $0 } }
        #expect(encodes <= 6 && encodes >= 3, "\(encodes) encodes")
    }
}
