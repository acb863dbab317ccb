import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// thumbor's `max_bytes(n)` and imgproxy's `max_bytes:n`/`mb:n`: a lossy output's quality is
/// lowered until it fits in n bytes.
@Suite struct MaxBytesServingTests {
    @Test func thumborMaxBytesLowersTheQualityUntilTheImageFits() async throws {
        let harness = try await ThumborServingTests.start()
        defer { Task { await harness.stop() } }
        let plain = try await harness.request(ThumborServingTests.unsafe(harness, "400x0/filters:format(jpeg)", "/e.jpg"))
        let capped = try await harness.request(ThumborServingTests.unsafe(harness, "400x0/filters:format(jpeg):max_bytes(8000)", "/e.jpg"))
        let roomy = try await harness.request(ThumborServingTests.unsafe(harness, "400x0/filters:format(jpeg):max_bytes(10000000)", "/e.jpg"))
        #expect(plain.status == 200 && capped.status == 200 && roomy.status == 200)
        #expect(plain.body.count > 8000, "the test needs an image over the cap: \(plain.body.count) bytes")
        #expect(capped.body.count <= 8000 && capped.format == .jpeg)
        #expect(try capped.decoded().image.width == 400)
        // Under the cap already: the same bytes as without it.
        #expect(roomy.body == plain.body)
        #expect(try await harness.request(ThumborServingTests.unsafe(harness, "400x0/filters:max_bytes(0)", "/e.jpg")).status == 400)
    }

    @Test func imgproxyMaxBytesLowersTheQualityUntilTheImageFits() async throws {
        let harness = try await ImgproxyServingTests.start()
        defer { Task { await harness.stop() } }
        let plain = try await harness.request(ImgproxyServingTests.insecure(harness, "w:400/f:webp", "/e.jpg"))
        let capped = try await harness.request(ImgproxyServingTests.insecure(harness, "w:400/f:webp/mb:6000", "/e.jpg"))
        let off = try await harness.request(ImgproxyServingTests.insecure(harness, "w:400/f:webp/max_bytes:0", "/e.jpg"))
        #expect(plain.body.count > 6000, "the test needs an image over the cap: \(plain.body.count) bytes")
        #expect(capped.status == 200 && capped.body.count <= 6000 && capped.format == .webp)
        #expect(off.body == plain.body)
    }
}
