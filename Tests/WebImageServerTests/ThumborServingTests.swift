import Foundation
import Testing
import WebImage
@_spi(Testing) @testable import WebImageServer
import WebImageTestSupport

/// thumbor URLs served end to end: geometry and pixels, signatures, refusals, the shared
/// cache, and the prefix `/`.
@Suite struct ThumborServingTests {
    typealias Colour = TestPictures.Colour

    /// The named colour at `x`, `y` of a decoded reply.
    static func colour(_ reply: Reply, _ x: Int, _ y: Int) throws -> Colour {
        let bitmap = try reply.decoded().image
        let bytes = bitmap.pixelFormat.bytesPerPixel
        let offset = y * bitmap.bytesPerRow + x * bytes
        let p = bitmap.pixels
        return bytes >= 3 ? .named(p[offset], p[offset + 1], p[offset + 2]) : .named(p[offset], p[offset], p[offset])
    }

    static func size(_ reply: Reply) throws -> String {
        let bitmap = try reply.decoded().image
        return "\(bitmap.width)x\(bitmap.height)"
    }

    static func start(_ configure: @escaping (inout ImageProxy.Configuration) -> Void = { _ in }) async throws -> ProxyHarness {
        let harness = try await ProxyHarness.start { configuration in
            configuration.thumbor.allowsUnsafe = true
            configuration.thumbor.key = "my-security-key"
            // thumbor's key closes the dialects without one; these tests compare /image's answers.
            configuration.allowsUnsignedImageURLs = true
            configure(&configuration)
        }
        harness.origin.register("/q.png", data: try TestPictures.quadrants())
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        return harness
    }

    /// `/thumbor/unsafe/OPTIONS/` + the origin's URL of `path`, percent-encoded.
    static func unsafe(_ harness: ProxyHarness, _ options: String, _ path: String = "/q.png") -> String {
        "/thumbor/unsafe/" + (options.isEmpty ? "" : options + "/") + ProxyHarness.encoded(harness.origin.url(path).absoluteString)
    }

    @Test func cropsFlipsAlignmentsAndTurnsPutThePixelsWhereThumborDoes() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        // (options, size, [(x, y, colour)])
        let cases: [(String, String, [(Int, Int, Colour)])] = [
            ("0x0:100x50", "100x50", [(50, 25, .red)]),
            ("100x50:200x100", "100x50", [(50, 25, .white)]),
            // A crop past the image is clamped to it, as thumbor does.
            ("100x0:500x50", "100x50", [(50, 25, .green)]),
            ("-0x0", "200x100", [(10, 10, .green), (190, 90, .blue)]),
            ("0x-0", "200x100", [(10, 10, .blue), (190, 10, .white)]),
            ("-x-", "200x100", [(10, 10, .white)]),
            ("100x100/left", "100x100", [(90, 10, .red), (90, 90, .blue)]),
            ("100x100/right", "100x100", [(10, 10, .green), (10, 90, .white)]),
            ("100x100", "100x100", [(10, 10, .red), (90, 10, .green)]),
            ("200x50/top", "200x50", [(10, 25, .red), (190, 25, .green)]),
            ("200x50/center/bottom", "200x50", [(10, 25, .blue), (190, 25, .white)]),
            // smart places the window by attention (SmartCropServingTests), the size as asked.
            ("100x100/right/smart", "100x100", []),
            ("0x0:100x100/50x0", "50x50", [(25, 10, .red), (25, 40, .blue)]),
            ("fit-in/50x100", "50x25", [(10, 5, .red)]),
            ("adaptive-fit-in/50x100", "100x50", [(10, 10, .red)]),
            ("full-fit-in/50x50", "100x50", [(10, 10, .red)]),
            ("fit-in/400x400", "200x100", []),
            ("fit-in/400x400/filters:upscale()", "400x200", [(390, 10, .green)]),
            ("400x400", "400x400", [(10, 10, .red)]),
            ("400x400/filters:no_upscale()", "200x100", []),
            ("origx50", "200x50", [(10, 10, .red), (190, 10, .green), (10, 40, .blue)]),
            ("0x50", "100x50", [(10, 10, .red)]),
            ("filters:rotate(90)", "100x200", [(10, 10, .green), (90, 190, .blue)]),
            ("filters:rotate(270)", "100x200", [(10, 10, .blue)]),
            ("filters:rotate(180)", "200x100", [(10, 10, .white)]),
            ("filters:proportion(0.5)", "100x50", [(10, 10, .red)]),
            ("fit-in/400x400/filters:stretch():upscale()", "400x400", [(390, 10, .green)]),
        ]
        for (options, size, pixels) in cases {
            let reply = try await harness.request(Self.unsafe(harness, options))
            #expect(reply.status == 200, "\(options): \(reply.text)")
            guard reply.status == 200 else { continue }
            #expect(try Self.size(reply) == size, "\(options)")
            for (x, y, colour) in pixels {
                #expect(try Self.colour(reply, x, y) == colour, "\(options) at \(x),\(y)")
            }
        }
    }

    @Test func grayscaleFormatsQualityAndMaxAge() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let gray = try await harness.request(Self.unsafe(harness, "filters:grayscale()"))
        let bitmap = try gray.decoded().image
        let p = bitmap.pixels, offset = 10 * bitmap.bytesPerRow + 10 * bitmap.pixelFormat.bytesPerPixel
        #expect(bitmap.pixelFormat.bytesPerPixel < 3 || (p[offset] == p[offset + 1] && p[offset + 1] == p[offset + 2]))
        #expect(try Self.colour(gray, 10, 10) == .other)
        // The source's own format unless format() says otherwise: thumbor does not negotiate.
        let png = try await harness.request(Self.unsafe(harness, "50x0"), headers: [("Accept", "image/webp")])
        #expect(png.format == .png && png.header("Vary") == nil)
        for (name, format) in [("webp", ImageFormat.webp), ("jpeg", .jpeg), ("gif", .gif), ("png", .png)] {
            let reply = try await harness.request(Self.unsafe(harness, "50x0/filters:format(\(name))"))
            #expect(reply.format == format, "\(name)")
        }
        let low = try await harness.request(Self.unsafe(harness, "300x0/filters:quality(10):format(jpeg)", "/e.jpg"))
        let high = try await harness.request(Self.unsafe(harness, "300x0/filters:quality(95):format(jpeg)", "/e.jpg"))
        #expect(low.body.count < high.body.count)
        let aged = try await harness.request(Self.unsafe(harness, "50x0/filters:max_age(60)"))
        #expect(aged.header("Cache-Control") == "public, max-age=60")
        #expect(try await harness.request(Self.unsafe(harness, "50x0")).header("Cache-Control") == "public, max-age=86400")
    }

    @Test func signaturesAndRefusals() async throws {
        let harness = try await Self.start { $0.thumbor.allowsUnsafe = false }
        defer { Task { await harness.stop() } }
        let signer = ThumborSigner(key: "my-security-key")
        let signed = "fit-in/100x100/" + ProxyHarness.encoded(harness.origin.url("/q.png").absoluteString)
        let good = try await harness.request("/thumbor" + signer.sign(signed))
        #expect(good.status == 200)
        #expect(try Self.size(good) == "100x50")
        // Another key's signature, the same signature on other options, and unsafe: all 403.
        #expect(try await harness.request("/thumbor" + ThumborSigner(key: "other").sign(signed)).status == 403)
        let tampered = signer.sign(signed).replacingOccurrences(of: "fit-in/100x100", with: "fit-in/100x101")
        #expect(try await harness.request("/thumbor" + tampered).status == 403)
        let unsafe = try await harness.request("/thumbor/unsafe/" + signed)
        #expect(unsafe.status == 403 && unsafe.text == "unsafe URLs are not allowed\n")
        // The signature is checked before the options are read: a bad one tells nothing more.
        #expect(try await harness.request("/thumbor/AAAAAAAAAAAAAAAAAAAAAAAAAAA=/filters:nope()/x.jpg").status == 403)
        // The same statuses as /image for what is wrong with a signed URL.
        let unknown = try await harness.request("/thumbor" + signer.sign("filters:red_eye()/" + ProxyHarness.encoded(harness.origin.url("/q.png").absoluteString)))
        #expect(unknown.status == 400 && unknown.text == "filter red_eye is not supported\n")
        let outOfRange = try await harness.request("/thumbor" + signer.sign("filters:noise(500)/" + ProxyHarness.encoded(harness.origin.url("/q.png").absoluteString)))
        #expect(outOfRange.status == 400 && outOfRange.text == "noise() takes an integer from 0 to 100\n")
        #expect(try await harness.request("/thumbor" + signer.sign("9999x10/a.com/b.jpg")).status == 400)
        #expect(try await harness.request("/thumbor" + signer.sign("10x10:5x5/a.com/b.jpg")).status == 400)
    }

    /// `meta/` describes the source, the operations in thumbor's names and the target size.
    @Test func metaDescribesTheWork() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let reply = try await harness.request(Self.unsafe(harness, "meta/0x0:100x50/-50x0/filters:rotate(90)"))
        #expect(reply.status == 200 && reply.header("Content-Type") == "application/json")
        let document = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
        let thumbor = try #require(document["thumbor"] as? [String: Any])
        let source = try #require(thumbor["source"] as? [String: Any])
        #expect(source["width"] as? Int == 200 && source["height"] as? Int == 100 && source["frameCount"] as? Int == 1)
        // As the URL gives it, as thumbor reports it.
        #expect(source["url"] as? String == ProxyHarness.encoded(harness.origin.url("/q.png").absoluteString))
        let operations = try #require(thumbor["operations"] as? [[String: Any]])
        #expect(operations.compactMap { $0["type"] as? String } == ["crop", "resize", "flip_horizontally", "rotate"])
        try #require(operations.count == 4)
        #expect(operations.first?["right"] as? Int == 100 && operations.first?["bottom"] as? Int == 50)
        #expect(operations[1]["width"] as? Int == 50 && operations[1]["height"] as? Int == 25)
        #expect(operations[3]["angle"] as? Int == 90)
        let target = try #require(thumbor["target"] as? [String: Any])
        #expect(target["width"] as? Int == 25 && target["height"] as? Int == 50)
        // The origin guard applies to meta/ as to images.
        #expect(try await harness.request("/thumbor/unsafe/meta/127.0.0.1:9/a.jpg").status == 403)
    }

    /// Without a key, signed URLs are refused too; with no flag, unsafe ones.
    @Test func nothingIsServedByDefault() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/q.png", data: try TestPictures.quadrants())
        let image = ProxyHarness.encoded(harness.origin.url("/q.png").absoluteString)
        #expect(try await harness.request("/thumbor/unsafe/50x0/" + image).status == 403)
        #expect(try await harness.request("/thumbor" + ThumborSigner(key: "k").sign("50x0/" + image)).status == 403)
        #expect(try await harness.request("/thumbor/healthcheck").text == "WORKING")
        #expect(try await harness.request("/unsafe/50x0/" + image).status == 404)
    }

    /// The SSRF guard is the one `/image` has: loopback (other than the trusted test origin),
    /// private and link-local sources are refused.
    @Test func theOriginGuardApplies() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        for image in ["127.0.0.1:9/a.jpg", "http%3A%2F%2F10.0.0.1%2Fa.jpg", "169.254.169.254/latest/meta-data", "http%3A%2F%2F%5B%3A%3A1%5D%3A9%2Fa.jpg"] {
            let reply = try await harness.request("/thumbor/unsafe/50x0/" + image)
            #expect(reply.status == 403, "\(image)")
            #expect(reply.text == "forbidden origin\n", "\(image)")
        }
    }

    /// The same pixels through `/image` and through a thumbor URL are one variant: the second
    /// comes from memory and nothing is decoded again.
    @Test func oneCacheForBothDialects() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let first = try await harness.get("/e.jpg", "w=300&h=200&format=jpeg")
        #expect(first.status == 200 && first.header("X-Cache") == "miss")
        let decodes = harness.decodeCount
        let second = try await harness.request(Self.unsafe(harness, "fit-in/300x200/filters:format(jpeg)", "/e.jpg"))
        #expect(second.status == 200 && second.header("X-Cache") == "memory")
        #expect(second.body == first.body)
        #expect(harness.decodeCount == decodes)
        // And the other way round, for a thumbor fill without enlarging and /image's cover.
        let third = try await harness.request(Self.unsafe(harness, "200x200/filters:no_upscale():format(webp)", "/e.jpg"))
        #expect(third.header("X-Cache") == "miss")
        let fourth = try await harness.get("/e.jpg", "w=200&h=200&fit=cover&format=webp")
        #expect(fourth.header("X-Cache") == "memory" && fourth.body == third.body)
        let metrics = try await harness.request("/metrics").text
        #expect(metrics.contains(#"webimage_proxy_requests_total{route="thumbor",status="200"} 2"#))
    }

    /// Under the prefix `/`, thumbor's URLs are at the root and the proxy's own routes keep working.
    @Test func theRootPrefixIsADropIn() async throws {
        let harness = try await Self.start { $0.thumbor.prefix = "/" }
        defer { Task { await harness.stop() } }
        let image = ProxyHarness.encoded(harness.origin.url("/q.png").absoluteString)
        let thumbor = try await harness.request("/unsafe/fit-in/100x100/" + image)
        #expect(thumbor.status == 200)
        #expect(try Self.size(thumbor) == "100x50")
        let signed = try await harness.request(ThumborSigner(key: "my-security-key").sign("50x0/" + image))
        #expect(signed.status == 200)
        #expect(try await harness.request("/healthcheck").text == "WORKING")
        #expect(try await harness.request("/healthz").text == "ok\n")
        #expect(try await harness.get("/q.png", "w=20").status == 200)
        #expect(try await harness.request("/metrics").status == 200)
        #expect(try await harness.request("/").status == 200)
        #expect(try await harness.request("/unsafe/50x0/" + image, method: .HEAD).status == 200)
        // "thumbor" is then taken as a signature, and a wrong one.
        #expect(try await harness.request("/thumbor/unsafe/50x0/" + image).status == 403)
    }

    /// With an origin folder, a bare path is a file in it (thumbor's file loader).
    @Test func theFileLoader() async throws {
        let harness = try await Self.start { $0.originDirectory = Fixture.demoImages }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request("/thumbor/unsafe/fit-in/160x160/Spring.png")
        #expect(reply.status == 200)
        #expect(try Self.size(reply) == "160x120")
        #expect(try await harness.request("/thumbor/unsafe/fit-in/160x160/missing.png").status == 404)
        #expect(try await harness.request("/thumbor/unsafe/fit-in/160x160/..%2F..%2Fetc%2Fpasswd").status == 400)
    }
}
