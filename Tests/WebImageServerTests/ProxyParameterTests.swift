import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// Each `/image` parameter over real HTTP: a proxy on loopback in front of a `TestOrigin`.
@Suite struct ProxyParameterTests {
    @Test func widthKeepsTheAspectRatio() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let reply = try await harness.get("/e.jpg", "w=160")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "image/jpeg")
        #expect(reply.header("Content-Length") == String(reply.body.count))
        #expect(reply.header("X-Content-Type-Options") == "nosniff")
        let image = try reply.decoded().image
        #expect(image.width == 160 && image.height == 90)
    }

    @Test func heightAlone() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let image = try await harness.get("/e.jpg", "h=90").decoded().image
        #expect(image.width == 160 && image.height == 90)
    }

    @Test func fitModes() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let contain = try await harness.get("/e.jpg", "w=100&h=100&fit=contain").decoded().image
        #expect(contain.width == 100 && contain.height == 56)
        let cover = try await harness.get("/e.jpg", "w=100&h=100&fit=cover").decoded().image
        #expect(cover.width == 100 && cover.height == 100)
        let fill = try await harness.get("/e.jpg", "w=100&h=100&fit=fill").decoded().image
        #expect(fill.width == 100 && fill.height == 100)
        // cover crops the middle, fill squeezes the whole width in: different pixels.
        #expect(cover.pixels != fill.pixels)
        // Without fit, the box is contained.
        let standard = try await harness.get("/e.jpg", "w=100&h=100")
        #expect(try standard.decoded().image.width == 100 && standard.decoded().image.height == 56)
    }

    @Test func neverUpscales() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/a.gif", data: try Fixture.animatedGIF)

        let image = try await harness.get("/a.gif", "w=1000&format=png").decoded().image
        #expect(image.width == 320 && image.height == 240)
    }

    @Test func dprMultipliesTheSize() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let doubled = try await harness.get("/e.jpg", "w=80&dpr=2")
        #expect(try doubled.decoded().image.width == 160)
        let plain = try await harness.get("/e.jpg", "w=160")
        // The same output, so the same variant (served from the cache) and the same tag.
        #expect(plain.header("ETag") == doubled.header("ETag"))
        #expect(plain.header("X-Cache") == "memory")
        let fractional = try await harness.get("/e.jpg", "w=100&dpr=1.5")
        #expect(try fractional.decoded().image.width == 150)
    }

    @Test("explicit formats", arguments: [
        ("jpeg", ImageFormat.jpeg, "image/jpeg"), ("png", .png, "image/png"),
        ("webp", .webp, "image/webp"), ("gif", .gif, "image/gif"), ("jpg", .jpeg, "image/jpeg"),
        ("avif", .avif, "image/avif"),
    ])
    func explicitFormat(_ name: String, format: ImageFormat, contentType: String) async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        // Accept would pick WebP; an explicit format wins and does not vary on Accept.
        let reply = try await harness.get("/e.jpg", "w=64&format=\(name)", headers: [("Accept", "image/webp,*/*")])
        #expect(reply.status == 200)
        #expect(reply.format == format)
        #expect(reply.header("Content-Type") == contentType)
        #expect(reply.header("Vary") == nil)
        #expect(try reply.decoded().image.width == 64)
    }

    @Test func qualityChangesTheBytes() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let low = try await harness.get("/e.jpg", "w=400&format=jpeg&q=10")
        let high = try await harness.get("/e.jpg", "w=400&format=jpeg&q=95")
        #expect(low.status == 200 && high.status == 200)
        #expect(low.body.count * 2 < high.body.count)
    }

    @Test func blurSmoothsThePixels() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let sharp = try await harness.get("/e.jpg", "w=200&format=png").decoded().image
        let blurred = try await harness.get("/e.jpg", "w=200&format=png&blur=4").decoded().image
        #expect(blurred.width == sharp.width && blurred.height == sharp.height)
        #expect(Self.roughness(blurred) * 2 < Self.roughness(sharp))
    }

    /// The mean absolute difference between horizontal neighbours' green values.
    static func roughness(_ bitmap: Bitmap) -> Double {
        var total = 0, count = 0
        for y in 0..<bitmap.height {
            let row = y * bitmap.bytesPerRow
            for x in 1..<bitmap.width {
                total += abs(Int(bitmap.pixels[row + x * 4 + 1]) - Int(bitmap.pixels[row + (x - 1) * 4 + 1]))
                count += 1
            }
        }
        return Double(total) / Double(max(count, 1))
    }

    @Test func acceptNegotiatesAVIFThenWebP() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let browser = try await harness.get("/e.jpg", "w=64", headers: [("Accept", "image/avif,image/webp,*/*;q=0.8")])
        #expect(browser.format == .avif && browser.header("Content-Type") == "image/avif")
        #expect(browser.header("Vary") == "Accept")
        #expect(try browser.decoded().image.width == 64)
        let webpOnly = try await harness.get("/e.jpg", "w=64", headers: [("Accept", "image/webp,*/*")])
        #expect(webpOnly.format == .webp && webpOnly.header("Content-Type") == "image/webp")
        let tool = try await harness.get("/e.jpg", "w=64", headers: [("Accept", "*/*")])
        #expect(tool.format == .jpeg && tool.header("Content-Type") == "image/jpeg")
        #expect(tool.header("Vary") == "Accept")
        let refusing = try await harness.get("/e.jpg", "w=64", headers: [("Accept", "image/avif;q=0, image/webp;q=0, image/*")])
        #expect(refusing.format == .jpeg)
        // Three formats of one size, one download.
        #expect(harness.origin.requestCount(path: "/e.jpg") == 1)
    }

    /// The preference order is the configuration's (`--auto-formats`): WebP alone, a browser
    /// that takes AVIF gets WebP.
    @Test func theAutoFormatsAreConfigured() async throws {
        let harness = try await ProxyHarness.start { $0.autoFormats = [.webp] }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let browser = try await harness.get("/e.jpg", "w=64", headers: [("Accept", "image/avif,image/webp,*/*;q=0.8")])
        #expect(browser.format == .webp && browser.header("Vary") == "Accept")
    }

    /// A source in a format not every client shows, to a client that names none of the auto
    /// formats: JPEG, PNG where transparency needs it, GIF for an animation.
    @Test(arguments: [("avif-gradient.avif", ImageFormat.jpeg), ("avif-alpha.avif", .png), ("avif-animated.avif", .gif), ("heic-gradient.heic", .jpeg)])
    func sourcesOnlySomeClientsShowBecomeOnesAllDo(_ fixture: String, expected: ImageFormat) async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/\(fixture)", data: try Data(contentsOf: Fixture.fixtures.appendingPathComponent(fixture)))
        let reply = try await harness.get("/\(fixture)", "w=16", headers: [("Accept", "*/*")])
        #expect(reply.status == 200)
        #expect(reply.format == expected, "\(fixture)")
        #expect(try reply.decoded().image.width == 16)
    }

    @Test func animationsStayAnimatedWhereTheFormatCan() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/a.gif", data: try Fixture.animatedGIF)

        let webp = try await harness.get("/a.gif", "w=160", headers: [("Accept", "image/webp")])
        #expect(webp.format == .webp)
        let webpImage = try webp.decoded()
        #expect(webpImage.isAnimated && webpImage.image.width == 160)

        let gif = try await harness.get("/a.gif", "w=160")
        #expect(gif.format == .gif)
        #expect(try gif.decoded().isAnimated)

        let png = try await harness.get("/a.gif", "w=160&format=png")
        #expect(png.format == .apng || png.format == .png)
        #expect(try png.decoded().isAnimated)
        #expect(png.header("Content-Type") == "image/png")

        let jpeg = try await harness.get("/a.gif", "w=160&format=jpeg")
        #expect(jpeg.format == .jpeg)
        #expect(try !jpeg.decoded().isAnimated)
    }

    @Test func localOriginFolder() async throws {
        let harness = try await ProxyHarness.start { $0.originDirectory = Fixture.demoImages }
        defer { Task { await harness.stop() } }

        let reply = try await harness.request("/image?url=local%3A%2F%2F%2Fflower.webp&w=50&format=png")
        #expect(reply.status == 200)
        #expect(try reply.decoded().image.width == 50)
        #expect(try await harness.request("/image?url=local%3A%2F%2F%2Fmissing.png").status == 404)
        #expect(try await harness.request("/image?url=local%3A%2F%2F%2F..%2FLICENSES.md").status == 400)
        #expect(try await harness.request("/image?url=local%3A%2F%2F%2F..%2F..%2FPackage.swift").status == 400)
    }

    @Test func headAnswersLikeGetWithoutTheBody() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let path = harness.imagePath("/e.jpg", "w=120")
        let head = try await harness.request(path, method: .HEAD)
        let get = try await harness.request(path)
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("Content-Length") == String(get.body.count))
        #expect(head.header("Content-Type") == "image/jpeg")
        #expect(head.header("ETag") == get.header("ETag"))
        #expect(try await harness.request(harness.imagePath("/e.jpg", "w=0"), method: .HEAD).status == 400)
    }
}
