import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// imgproxy's own variables for its source limits and its watermark, read by `webimage serve`.
extension ServeCommandTests {
    /// imgproxy's source limits in its units (megapixels, possibly fractional; bytes, 0 for
    /// none) limit every dialect alike when ours are not given; ours win over them. The demo
    /// images: Spring.png (77 KB, 1.92 megapixels), iss634-animated.webp (208 KB, 60 kilopixels
    /// a frame), flower.webp (30 KB, 0.17 megapixels).
    @Test(arguments: [
        (["IMGPROXY_MAX_SRC_RESOLUTION": "1", "IMGPROXY_MAX_SRC_FILE_SIZE": "200000"], [413, 413, 200]),
        (["IMGPROXY_MAX_SRC_RESOLUTION": "1.95", "IMGPROXY_MAX_SRC_FILE_SIZE": "0"], [200, 200, 200]),
        (["IMGPROXY_MAX_SRC_RESOLUTION": "1.9", "IMGPROXY_MAX_SRC_FILE_SIZE": "0"], [413, 200, 200]),
        ([
            "IMGPROXY_MAX_SRC_RESOLUTION": "1", "IMGPROXY_MAX_SRC_FILE_SIZE": "200000",
            "WEBIMAGE_MAX_SOURCE_PIXELS": "2000000", "WEBIMAGE_MAX_SOURCE_BYTES": "300000",
        ], [200, 200, 200]),
    ])
    func imgproxySourceLimitsFromTheEnvironment(_ environment: [String: String], _ statuses: [Int]) async throws {
        // The defaults would serve all three: a refusal is the variables' doing.
        let defaults = ImageProxy.Configuration()
        #expect(defaults.limits.maximumSourcePixels > 2_000_000 && defaults.limits.maximumSourceBytes > 300_000)
        let cache = TemporaryDirectory("serve-imgproxy-limits")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning",
            "--origin-dir", Fixture.demoImages.path, "--thumbor-allow-unsafe",
        ], environment: environment)
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(try await server.port())"
        for (name, status) in zip(["Spring.png", "iss634-animated.webp", "flower.webp"], statuses) {
            for path in [
                "/image?url=local%3A%2F%2F%2F\(name)&w=50", "/imgproxy/insecure/w:50/plain/local:///\(name)", "/thumbor/unsafe/50x0/\(name)",
            ] {
                #expect(try await get(base + path).status == status, "\(environment): \(path)")
            }
        }
    }

    /// A value imgproxy would not take stops the server at once, naming the variable.
    @Test(arguments: [
        ("IMGPROXY_MAX_SRC_RESOLUTION", "lots", "IMGPROXY_MAX_SRC_RESOLUTION must be"),
        ("IMGPROXY_MAX_SRC_RESOLUTION", "0", "IMGPROXY_MAX_SRC_RESOLUTION must be"),
        ("IMGPROXY_MAX_SRC_FILE_SIZE", "-1", "IMGPROXY_MAX_SRC_FILE_SIZE must be"),
        ("IMGPROXY_WATERMARK_DATA", "not base64!", "IMGPROXY_WATERMARK_DATA must be Base64"),
        ("IMGPROXY_WATERMARK_PATH", "/nonexistent/mark.png", "watermark /nonexistent/mark.png must be a readable file"),
        ("IMGPROXY_WATERMARK_URL", "ftp://example.com/w.png", "watermark URL must be http or https"),
        ("IMGPROXY_WATERMARK_OPACITY", "1.5", "IMGPROXY_WATERMARK_OPACITY must be from 0 to 1"),
    ])
    func badImgproxyVariablesFailAtOnce(_ name: String, _ value: String, _ message: String) async throws {
        let server = try ServeProcess(try #require(WebImageExecutable.url), ["serve", "--port", "0"], environment: [name: value])
        #expect(await server.waitForExit() != 0)
        #expect(server.stderr.joined(separator: "\n").contains(message), "\(server.stderr)")
    }

    /// imgproxy's watermark variables: the image from `IMGPROXY_WATERMARK_DATA` (Base64),
    /// `_PATH` (a file) or `_URL` (fetched once, through the origin checks), and every `wm`'s
    /// opacity scaled by `IMGPROXY_WATERMARK_OPACITY`; without any, `wm` is a `400`. The
    /// watermark is a green square over the quadrants picture's red corner.
    @Test(arguments: ["DATA", "PATH", "URL", "OPACITY", "none"])
    func imgproxyWatermarkFromTheEnvironment(_ variable: String) async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try await origin.shutdown() } }
        let mark = try TestPictures.greenSquare()
        origin.register("/q.png", data: try TestPictures.quadrants())
        origin.register("/mark.png", data: mark)
        let folder = TemporaryDirectory("serve-imgproxy-watermark")
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("mark.png")
        try mark.write(to: file)
        let environment: [String: String] = switch variable {
        case "DATA": ["IMGPROXY_WATERMARK_DATA": mark.base64EncodedString()]
        case "PATH": ["IMGPROXY_WATERMARK_PATH": file.path]
        case "URL": ["IMGPROXY_WATERMARK_URL": origin.url("/mark.png").absoluteString]
        case "OPACITY": ["IMGPROXY_WATERMARK_DATA": mark.base64EncodedString(), "IMGPROXY_WATERMARK_OPACITY": "0.5"]
        default: [:]
        }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", folder.url.appendingPathComponent("cache").path, "--log-level", "warning", "--allow-loopback",
        ], environment: environment)
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(try await server.port())/imgproxy/insecure/"
        let source = "/plain/" + origin.url("/q.png").absoluteString
        guard variable != "none" else {
            #expect(try await get(base + "wm:1:nowe/f:png" + source).status == 400)
            return
        }
        for options in ["wm:1:nowe/f:png", "rs:fit:100:50/wm:1:nowe/f:png"] {
            let reply = try await get(base + options + source)
            #expect(reply.status == 200, "\(options)")
            let bitmap = try CoderRegistry.system().decode(reply.body).image
            let pixel = Array(bitmap.pixels[(5 * bitmap.bytesPerRow + 5 * bitmap.pixelFormat.bytesPerPixel)...].prefix(3))
            // Green over red at the opacity: red falls, green rises by that share of 255.
            let opacity = variable == "OPACITY" ? 0.5 : 1
            #expect(abs(Double(pixel[0]) - 255 * (1 - opacity)) <= 2 && abs(Double(pixel[1]) - 255 * opacity) <= 2, "\(options): \(pixel)")
        }
        #expect(origin.requestCount(path: "/mark.png") == (variable == "URL" ? 1 : 0))
    }
}
