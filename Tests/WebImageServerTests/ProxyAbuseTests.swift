import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// What an anonymous client could do to the proxy with one small request, each bounded now.
@Suite struct ProxyAbuseTests {
    /// A 147 KB animated WebP, a 4096×4096 canvas with 3,000 one-pixel frames, asked for as a
    /// 64 px thumbnail: 50 billion canvas pixels to compose. Refused before the first frame
    /// (413), while requests sent beside it are answered.
    @Test func anAnimationBombIsRefusedByItsWorkWhileOtherRequestsAreAnswered() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/bomb.webp", data: AnimatedWebPBuilder.file(width: 4096, height: 4096, frameCount: 3000))
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        async let bomb = harness.get("/bomb.webp", "w=64&h=64")
        async let others = withThrowingTaskGroup(of: Int.self) { group in
            for width in [10, 20, 30, 40] {
                group.addTask { try await harness.get("/e.jpg", "w=\(width)").status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let reply = try await bomb
        #expect(reply.status == 413)
        #expect(reply.text == "source image too large\n")
        #expect(try await others == [200, 200, 200, 200])
        // Asked again, refused again, never cached as anything else.
        #expect(try await harness.get("/bomb.webp", "w=64&h=64").status == 413)
    }

    /// Hundreds of thousands of 1×1 frames (9.6 MB, under the source limit): refused by count
    /// before libwebp is asked for any frame.
    @Test func hundredsOfThousandsOfFramesAreRefused() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/frames.webp", data: AnimatedWebPBuilder.file(width: 1, height: 1, frameCount: 200_000))
        let reply = try await harness.get("/frames.webp", "w=64")
        #expect(reply.status == 413)
    }
}
