import Foundation
import Testing
import WebImage
@_spi(Testing) @testable import WebImageServer
import WebImageTestSupport

/// Watermarks served end to end: imgproxy's `watermark` option as its documentation describes
/// it (positions, offsets, replication, scale, opacity, the configured image), thumbor's filter's
/// refusals and its source going through the origin guard (thumbor's pixels are compared with
/// thumbor itself in `ThumborSideBySideTests`), and the watermark's image loaded once.
@Suite struct WatermarkServingTests {
    typealias Colour = ThumborServingTests.Colour

    /// The proxy with the green square as imgproxy's configured watermark (unless `configure`
    /// says otherwise), serving the quadrants picture (200 × 100: red, green / blue, white).
    static func start(_ configure: @escaping (inout ImageProxy.Configuration) -> Void = { _ in }) async throws -> ProxyHarness {
        let mark = try TestPictures.greenSquare()
        return try await ImgproxyServingTests.start { configuration in
            configuration.imgproxy.watermarkData = mark
            configure(&configuration)
        }
    }

    @Test func imgproxyPositionsOffsetsTilesAndScaleAsDocumented() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let cases: [(String, [(Int, Int, Colour)])] = [
            // Compass positions: the square at that edge or corner.
            ("wm:1:nowe", [(5, 5, .green), (25, 5, .red), (5, 25, .red)]),
            ("wm:1:soea", [(195, 95, .green), (175, 95, .white), (195, 75, .white)]),
            ("wm:1:no", [(95, 5, .green), (105, 5, .green), (85, 5, .red), (115, 5, .green), (125, 5, .green)]),
            ("wm:1:ce", [(95, 45, .green), (105, 55, .green), (85, 45, .red), (115, 55, .white)]),
            ("wm:1", [(95, 45, .green), (85, 45, .red)]),
            // Offsets move it away from the edge the gravity names; under 1 they are fractions.
            ("wm:1:nowe:30:10", [(35, 15, .green), (25, 15, .red), (35, 5, .red)]),
            ("wm:1:soea:30:10", [(155, 75, .green), (175, 95, .white), (145, 75, .white)]),
            ("wm:1:nowe:0.25:0", [(55, 5, .green), (45, 5, .red)]),
            ("wm:1:ce:-50:0", [(45, 45, .green), (65, 45, .red)]),
            // re: copies from the top left, the offsets between them.
            ("wm:1:re:10:10", [(5, 5, .green), (25, 5, .red), (35, 5, .green), (35, 35, .green), (5, 25, .red), (185, 65, .green)]),
            // scale: a share of the image's sides, the aspect ratio kept (a 50 × 50 square here).
            ("wm:1:nowe:0:0:0.5", [(45, 45, .green), (55, 5, .red), (5, 55, .blue)]),
            // The watermark is drawn on the output, after the resize.
            ("rs:fit:100:50/wm:1:soea", [(95, 45, .green), (75, 45, .white)]),
            // Off at 0.
            ("wm:0:nowe", [(5, 5, .red)]),
        ]
        for (options, pixels) in cases {
            let reply = try await harness.request(ImgproxyServingTests.insecure(harness, options))
            #expect(reply.status == 200, "\(options): \(reply.text)")
            guard reply.status == 200 else { continue }
            for (x, y, colour) in pixels {
                #expect(try ThumborServingTests.colour(reply, x, y) == colour, "\(options) at \(x),\(y)")
            }
        }
    }

    /// imgproxy's opacity (times the configured base opacity) mixes the watermark with the image.
    @Test func imgproxyOpacityMixes() async throws {
        for (base, option, expected) in [(1.0, "wm:0.5:nowe", 0.5), (0.5, "wm:1:nowe", 0.5), (0.5, "wm:0.5:nowe", 0.25)] {
            let harness = try await Self.start { $0.imgproxy.watermarkOpacity = base }
            defer { Task { await harness.stop() } }
            let reply = try await harness.request(ImgproxyServingTests.insecure(harness, option + "/f:png"))
            #expect(reply.status == 200)
            let bitmap = try reply.decoded().image
            let pixel = Array(bitmap.pixels[(5 * bitmap.bytesPerRow + 5 * bitmap.pixelFormat.bytesPerPixel)...].prefix(3))
            // Green over red at `expected`: red falls, green rises by that share of 255.
            #expect(abs(Double(pixel[0]) - 255 * (1 - expected)) <= 2 && abs(Double(pixel[1]) - 255 * expected) <= 2,
                    "base \(base), \(option): \(pixel)")
        }
    }

    /// IMGPROXY_WATERMARK_URL: the watermark is fetched as a source is, once (later requests
    /// find it in the caches); without any watermark configured, `wm` is a `400`.
    @Test func imgproxyWatermarkFromAURLAndNone() async throws {
        let plain = try await ImgproxyServingTests.start()
        defer { Task { await plain.stop() } }
        #expect(try await plain.request(ImgproxyServingTests.insecure(plain, "wm:1:nowe")).status == 400)
        #expect(try await plain.request(ImgproxyServingTests.insecure(plain, "wm:0")).status == 200)

        let origin = try await TestOrigin.start()
        origin.register("/mark.png", data: try TestPictures.greenSquare())
        origin.register("/q.png", data: try TestPictures.quadrants())
        let harness = try await ProxyHarness.start(origin: origin) { configuration in
            configuration.imgproxy.watermarkURL = origin.url("/mark.png")
        }
        defer { Task { await harness.stop() } }
        let cases: [(String, Int, Int)] = [("wm:1:nowe", 5, 5), ("wm:1:soea", 195, 95), ("rs:fit:100:50/wm:1:soea", 95, 45)]
        for (options, x, y) in cases {
            let reply = try await harness.request(ImgproxyServingTests.insecure(harness, options))
            #expect(reply.status == 200, "\(options): \(reply.text)")
            #expect(try ThumborServingTests.colour(reply, x, y) == .green, "\(options)")
        }
        #expect(origin.requestCount(path: "/mark.png") == 1)
    }

    /// Bad arguments of both dialects are `400`s naming the filter or option.
    @Test func badArgumentsAreRefused() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        for options in ["wm:2", "wm:1:middle", "wm:1:nowe:x", "wm:1:nowe:0:0:2", "wm:1:nowe:0:0:0:9"] {
            let reply = try await harness.request(ImgproxyServingTests.insecure(harness, options))
            #expect(reply.status == 400, "\(options)")
        }
        let thumbor = try await ThumborServingTests.start()
        defer { Task { await thumbor.stop() } }
        let image = thumbor.origin.url("/q.png").absoluteString.dropFirst("http://".count)
        for filters in [
            "watermark(q.png,0,0)", "watermark(q.png,left,0,0)", "watermark(q.png,0,0,101)", "watermark(q.png,0,0,0,0)",
            "watermark(q.png,0,0,0,50,101)", "focal(1x2)", "focal(ax1:2x3)",
        ] {
            let reply = try await thumbor.request("/thumbor/unsafe/100x50/filters:\(filters)/\(image)")
            #expect(reply.status == 400, "\(filters): \(reply.status)")
        }
    }

    /// thumbor's watermark URL goes through the same origin guard as a source: a private or
    /// loopback address is `403`, and nothing is fetched.
    @Test func thumborWatermarkSourcesPassTheOriginGuard() async throws {
        let harness = try await ThumborServingTests.start()
        defer { Task { await harness.stop() } }
        let image = harness.origin.url("/q.png").absoluteString.dropFirst("http://".count)
        for mark in ["10.0.0.1/w.png", "127.0.0.1:9/w.png", "169.254.169.254/latest/meta-data"] {
            let reply = try await harness.request("/thumbor/unsafe/100x50/filters:watermark(\(mark),0,0,0)/\(image)")
            #expect(reply.status == 403, "\(mark): \(reply.status) \(reply.text)")
        }
        // The same filter with an allowed watermark (the test origin's own) draws it.
        harness.origin.register("/w.png", data: try TestPictures.greenSquare())
        let mark = harness.origin.url("/w.png").absoluteString.dropFirst("http://".count)
        let reply = try await harness.request("/thumbor/unsafe/200x100/filters:watermark(\(mark),0,-0,0)/\(image)")
        #expect(reply.status == 200, "\(reply.text)")
        #expect(try ThumborServingTests.colour(reply, 5, 95) == .green && ThumborServingTests.colour(reply, 5, 75) == .blue)
    }

    /// thumbor's `watermark()` source is fetched once, through the guard: later URLs with the
    /// same watermark (other sizes, another place, another alpha: other variants, rendered
    /// again) find it in the caches.
    @Test func thumborWatermarkSourceIsFetchedOnce() async throws {
        let harness = try await ThumborServingTests.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/w.png", data: try TestPictures.greenSquare())
        let mark = harness.origin.url("/w.png").absoluteString.dropFirst("http://".count)
        let cases: [(options: String, x: Int, y: Int)] = [
            ("200x100/filters:watermark(\(mark),0,0,0)", 5, 5),
            ("100x50/filters:watermark(\(mark),-0,-0,0)", 95, 45),
            ("100x50/filters:watermark(\(mark),0,-0,0)", 5, 45),
        ]
        for (options, x, y) in cases {
            let reply = try await harness.request(ThumborServingTests.unsafe(harness, options))
            #expect(reply.status == 200 && reply.header("X-Cache") == "miss", "\(options): \(reply.text)")
            #expect(try ThumborServingTests.colour(reply, x, y) == .green, "\(options)")
        }
        // Another image under the same watermark.
        let elephants = try await harness.request(ThumborServingTests.unsafe(harness, "100x50/filters:watermark(\(mark),0,0,0)", "/e.jpg"))
        #expect(elephants.status == 200 && elephants.header("X-Cache") == "miss")
        #expect(try ThumborServingTests.colour(elephants, 5, 5) == .green)
        #expect(harness.origin.requestCount(path: "/w.png") == 1)
    }
}
