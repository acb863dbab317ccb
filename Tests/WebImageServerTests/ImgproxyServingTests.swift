import Foundation
import Testing
import WebImage
@_spi(Testing) @testable import WebImageServer
import WebImageTestSupport

/// imgproxy URLs served end to end: each resizing type, gravity, crop, `extend`, `padding`, `dpr`,
/// turns and flips as imgproxy's documentation describes them, on a picture whose quadrants show
/// where each part went; signatures, refusals, the SSRF guard, the shared cache, presets, the
/// root prefix and local files.
@Suite struct ImgproxyServingTests {
    typealias Colour = ThumborServingTests.Colour
    static let key = "736563726574", salt = "68656C6C6F"

    static func start(_ configure: @escaping (inout ImageProxy.Configuration) -> Void = { _ in }) async throws -> ProxyHarness {
        let harness = try await ProxyHarness.start(configure: configure)
        harness.origin.register("/q.png", data: try TestPictures.quadrants())
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        harness.origin.register("/s.png", data: try Fixture.png)
        return harness
    }

    /// `/imgproxy/insecure/OPTIONS/plain/` + the origin's URL of `path`.
    static func insecure(_ harness: ProxyHarness, _ options: String, _ path: String = "/q.png") -> String {
        "/imgproxy/insecure/" + (options.isEmpty ? "" : options + "/") + "plain/" + harness.origin.url(path).absoluteString
    }

    /// The alpha at `x`, `y` of a decoded reply (255 without an alpha channel).
    static func alpha(_ reply: Reply, _ x: Int, _ y: Int) throws -> Int {
        let bitmap = try reply.decoded().image
        guard bitmap.pixelFormat.hasAlpha else { return 255 }
        let bytes = bitmap.pixelFormat.bytesPerPixel
        return Int(bitmap.pixels[y * bitmap.bytesPerRow + x * bytes + bytes - 1])
    }

    /// The smallest alpha of a decoded reply (255 without an alpha channel).
    static func smallestAlpha(_ reply: Reply) throws -> Int {
        let bitmap = try reply.decoded().image
        guard bitmap.pixelFormat.hasAlpha else { return 255 }
        let bytes = bitmap.pixelFormat.bytesPerPixel
        var smallest = 255
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width { smallest = min(smallest, Int(bitmap.pixels[y * bitmap.bytesPerRow + x * bytes + bytes - 1])) }
        }
        return smallest
    }

    /// The quadrants picture is 200×100: red (top left), green (top right), blue (bottom left),
    /// white (bottom right). Each case: the options, the output size, and colours at points.
    @Test func geometryAsImgproxyDocumentsIt() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let cases: [(String, String, [(Int, Int, Colour)])] = [
            // fit: inside the box, never enlarged unless asked.
            ("rs:fit:100:100", "100x50", [(10, 10, .red), (90, 40, .white)]),
            ("rs:fit:400:400", "200x100", []),
            ("rs:fit:400:400:1", "400x200", [(390, 10, .green)]),
            ("w:50", "50x25", [(5, 5, .red)]),
            ("h:50", "100x50", [(90, 5, .green)]),
            // fill: covers the box, cropped at the gravity (centre by default).
            ("rs:fill:100:100", "100x100", [(10, 10, .red), (90, 10, .green), (10, 90, .blue), (90, 90, .white)]),
            ("rs:fill:100:100/g:we", "100x100", [(10, 10, .red), (90, 10, .red), (90, 90, .blue)]),
            ("rs:fill:100:100/g:ea", "100x100", [(10, 10, .green), (90, 90, .white)]),
            ("rs:fill:100:100/g:nowe", "100x100", [(90, 10, .red)]),
            ("rs:fill:100:100/g:soea", "100x100", [(10, 10, .green)]),
            ("rs:fill:200:20/g:no", "200x20", [(10, 10, .red), (190, 10, .green)]),
            ("rs:fill:200:20/g:so", "200x20", [(10, 10, .blue), (190, 10, .white)]),
            // A focus point: the window is centred on it as far as the image allows.
            ("rs:fill:50:50/g:fp:0.9:0.1", "50x50", [(5, 5, .green), (45, 45, .white)]),
            ("rs:fill:50:50/g:fp:0.1:0.5", "50x50", [(5, 5, .red), (45, 45, .blue)]),
            // Without enlarging, fill keeps what there is; fill-down keeps the box's shape.
            ("rs:fill:400:400", "200x100", []),
            ("rs:fill-down:400:400", "100x100", [(10, 10, .red), (90, 10, .green)]),
            ("rs:fill-down:400:400/g:we", "100x100", [(90, 10, .red)]),
            ("rs:fill-down:100:50", "100x50", [(10, 10, .red)]),
            // force: exactly the box.
            ("rs:force:50:100", "50x100", [(10, 10, .red), (40, 10, .green), (10, 90, .blue)]),
            // auto: fill when image and box are both landscape, else fit.
            ("rs:auto:100:40", "100x40", [(10, 10, .red), (90, 30, .white)]),
            ("rs:auto:100:100", "100x50", []),
            ("rs:auto:50:100", "50x25", []),
            // dpr multiplies the box (and never enlarges without el).
            ("rs:fit:50:50/dpr:2", "100x50", [(10, 10, .red)]),
            ("w:150/dpr:2", "200x100", []),
            ("w:150/dpr:2/el:1", "300x150", []),
            ("z:0.5", "100x50", []),
            // extend: the box, the image placed at the extend gravity, the rest background.
            ("rs:fit:100:100/ex:1:no/bg:255:255:255", "100x100", [(10, 10, .red), (10, 40, .blue), (10, 75, .white), (90, 10, .green)]),
            ("rs:fit:100:100/ex:1:so/bg:255:255:255", "100x100", [(10, 10, .white), (10, 60, .red), (10, 90, .blue)]),
            ("rs:fit:100:100:0:1", "100x100", [(10, 30, .red), (10, 70, .blue)]),
            ("rs:fill:300:300:0:1", "300x300", []),
            // padding, CSS order, in CSS pixels (times dpr).
            ("rs:fit:100:100/pd:10:20/bg:255:255:255", "140x70", [(25, 15, .red), (115, 15, .green), (5, 5, .white), (135, 65, .white)]),
            ("rs:fit:50:50/dpr:2/pd:5", "120x70", [(15, 15, .red)]),
            ("pd:0:0:10:0/bg:255:0:0", "200x110", [(10, 105, .red), (10, 95, .blue)]),
            // rotate (clockwise) before the box, which is of the turned image; then flip.
            ("rot:90", "100x200", [(10, 10, .blue), (90, 10, .red), (90, 190, .green), (10, 190, .white)]),
            ("rot:270", "100x200", [(10, 10, .green), (10, 190, .red)]),
            ("rot:180", "200x100", [(10, 10, .white)]),
            ("rs:fill:100:100/g:no/rot:90", "100x100", [(10, 10, .blue), (90, 10, .red), (90, 90, .red)]),
            ("rs:fill:100:100/g:so/rot:90", "100x100", [(10, 10, .white), (90, 90, .green)]),
            ("rs:fit:50:50/rot:90", "25x50", []),
            ("fl:1:0", "200x100", [(10, 10, .green), (190, 90, .blue)]),
            ("fl:0:1", "200x100", [(10, 10, .blue)]),
            ("fl:1:1", "200x100", [(10, 10, .white)]),
            ("rot:90/fl:1:0", "100x200", [(10, 10, .red), (90, 10, .blue)]),
            // crop: before the resize, of the size given (fractions at most 1), at its gravity.
            ("c:100:50:nowe", "100x50", [(10, 10, .red), (90, 40, .red)]),
            ("c:0.5:0.5:soea", "100x50", [(10, 10, .white)]),
            ("c:100:100", "100x100", [(10, 10, .red), (90, 10, .green)]),
            ("c:100:100/g:ea", "100x100", [(10, 10, .green)]),
            ("c:100:50:nowe/rs:fit:50:50", "50x25", [(10, 10, .red)]),
        ]
        for (options, size, pixels) in cases {
            let reply = try await harness.request(Self.insecure(harness, options))
            #expect(reply.status == 200, "\(options): \(reply.text)")
            guard reply.status == 200 else { continue }
            #expect(try ThumborServingTests.size(reply) == size, "\(options)")
            for (x, y, colour) in pixels {
                #expect(try ThumborServingTests.colour(reply, x, y) == colour, "\(options) at \(x),\(y)")
            }
        }
        // Extended or padded without a background: the new area is transparent.
        let extended = try await harness.request(Self.insecure(harness, "rs:fit:100:100/ex:1"))
        #expect(try Self.alpha(extended, 10, 10) == 0 && Self.alpha(extended, 10, 40) == 255)
        #expect(try ThumborServingTests.colour(extended, 10, 40) == .red)
        let padded = try await harness.request(Self.insecure(harness, "pd:4"))
        #expect(try ThumborServingTests.size(padded) == "208x108" && Self.alpha(padded, 1, 1) == 0)
    }

    /// A photo of the corpus at imgproxy's documented resizing types: the sizes its rules give.
    @Test func aPhotoAtEachResizingType() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        // The elephants are 1920×1080.
        let cases = [
            ("rs:fit:300:300", "300x169"), ("rs:fill:300:300", "300x300"), ("rs:fill-down:300:300", "300x300"),
            ("rs:force:300:300", "300x300"), ("rs:auto:300:300", "300x169"), ("rs:auto:300:200", "300x200"),
            ("rs:fill:3000:3000", "1920x1080"), ("rs:fill-down:3000:3000", "1080x1080"), ("rs:fill-down:3000:2000", "1620x1080"), ("rs:fit:300:0", "300x169"),
            ("rs:fit:0:100/dpr:3", "533x300"), ("rs:fill:100:100/pd:10/bg:0:0:0", "120x120"), ("rs:fit:300:300/ex:1", "300x300"),
        ]
        for (options, size) in cases {
            let reply = try await harness.request(Self.insecure(harness, options, "/e.jpg"))
            #expect(reply.status == 200, "\(options): \(reply.text)")
            guard reply.status == 200 else { continue }
            #expect(try ThumborServingTests.size(reply) == size, "\(options)")
            #expect(reply.format == .jpeg, "\(options)")
        }
    }

    @Test func formatsQualityBackgroundAndBlur() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        // The source's own format unless the URL says otherwise: imgproxy does not negotiate.
        let png = try await harness.request(Self.insecure(harness, "w:50"), headers: [("Accept", "image/webp")])
        #expect(png.format == .png && png.header("Vary") == nil)
        for (option, format) in [("f:webp", ImageFormat.webp), ("format:jpg", .jpeg), ("ext:gif", .gif), ("f:png", .png)] {
            #expect(try await harness.request(Self.insecure(harness, "w:50/" + option)).format == format, "\(option)")
        }
        let plainExtension = try await harness.request("/imgproxy/insecure/w:50/plain/" + harness.origin.url("/q.png").absoluteString + "@webp")
        #expect(plainExtension.format == .webp)
        let base64 = ImgproxyURLTests.base64(harness.origin.url("/q.png").absoluteString)
        let split = base64.prefix(10) + "/" + base64.dropFirst(10)
        let encoded = try await harness.request("/imgproxy/insecure/w:50/" + split + ".jpg")
        #expect(encoded.status == 200 && encoded.format == .jpeg)
        let low = try await harness.request(Self.insecure(harness, "w:300/q:10/f:jpg", "/e.jpg"))
        let high = try await harness.request(Self.insecure(harness, "w:300/q:95/f:jpg", "/e.jpg"))
        #expect(low.body.count < high.body.count)
        // format_quality picks the quality of the format the output ends up in.
        let lowFQ = try await harness.request(Self.insecure(harness, "w:300/fq:jpg:10:webp:95", "/e.jpg"))
        #expect(lowFQ.format == .jpeg && lowFQ.body.count == low.body.count)
        // A background flattens transparency: the output has no alpha left.
        let transparent = try await harness.request(Self.insecure(harness, "w:100/f:png", "/s.png"))
        let flattened = try await harness.request(Self.insecure(harness, "w:100/f:png/bg:ff0000", "/s.png"))
        #expect(try Self.smallestAlpha(transparent) < 255)
        #expect(try Self.smallestAlpha(flattened) == 255)
        let sharp = try await harness.request(Self.insecure(harness, "w:100"))
        let blurred = try await harness.request(Self.insecure(harness, "w:100/bl:4"))
        #expect(blurred.status == 200 && blurred.body != sharp.body)
        // The colour at the middle of the border between red and green is a mix once blurred.
        #expect(try ThumborServingTests.colour(blurred, 50, 10) == .other && ThumborServingTests.colour(sharp, 40, 10) == .red)
        #expect(try await harness.request(Self.insecure(harness, "w:100/scp:1/sm:1/cb:123")).status == 200)
    }

    @Test func signaturesAndRefusals() async throws {
        let harness = try await Self.start {
            $0.imgproxy.key = Self.key
            $0.imgproxy.salt = Self.salt
            // imgproxy's key closes /image too; opened by name, to compare its statuses below.
            $0.allowsUnsignedImageURLs = true
        }
        defer { Task { await harness.stop() } }
        let signer = try #require(ImgproxySigner(key: Self.key, salt: Self.salt))
        let path = "/rs:fit:100:100/plain/" + harness.origin.url("/q.png").absoluteString
        let good = try await harness.request("/imgproxy" + signer.sign(path))
        #expect(good.status == 200)
        #expect(try ThumborServingTests.size(good) == "100x50")
        // Another key's signature, the same signature on other options, and none: all 403.
        #expect(try await harness.request("/imgproxy" + ImgproxySigner(key: "00ff", salt: Self.salt)!.sign(path)).status == 403)
        let tampered = signer.sign(path).replacingOccurrences(of: "rs:fit:100:100", with: "rs:fit:100:101")
        #expect(try await harness.request("/imgproxy" + tampered).status == 403)
        for unsigned in ["insecure", "_", "unsafe"] {
            #expect(try await harness.request("/imgproxy/\(unsigned)" + path).status == 403)
        }
        // The signature is checked before the options are read: a bad one tells nothing more.
        let refused = try await harness.request("/imgproxy/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/nope:1/x")
        #expect(refused.status == 403 && refused.text == "missing or invalid signature\n")
        // The same statuses as /image for what is wrong with a signed URL.
        let unknown = try await harness.request("/imgproxy" + signer.sign("/ar:1/plain/" + harness.origin.url("/q.png").absoluteString))
        #expect(unknown.status == 400 && unknown.text == "option ar is not supported\n")
        #expect(try await harness.request("/imgproxy" + signer.sign("/w:99999/plain/http://a.com/b.jpg")).status == 400)
        #expect(try await harness.request("/imgproxy" + signer.sign("/aHR0cDovL2V4YW1wbGUuY29tL2Eua")).status == 400)
        #expect(try await harness.request("/imgproxy" + signer.sign("/plain/local:///x.jpg")).status
            == harness.request(ProxyHarness.imagePath(url: "local:///x.jpg")).status)
    }

    /// `IMGPROXY_SIGNATURE_SIZE`: a truncated signature, and only it, passes.
    @Test func truncatedSignatures() async throws {
        let harness = try await Self.start {
            $0.imgproxy.key = Self.key
            $0.imgproxy.salt = Self.salt
            $0.imgproxy.signatureSize = 8
        }
        defer { Task { await harness.stop() } }
        let path = "/w:40/plain/" + harness.origin.url("/q.png").absoluteString
        let short = try #require(ImgproxySigner(key: Self.key, salt: Self.salt, signatureSize: 8)).sign(path)
        #expect(try await harness.request("/imgproxy" + short).status == 200)
        #expect(try await harness.request("/imgproxy" + ImgproxySigner(key: Self.key, salt: Self.salt)!.sign(path)).status == 403)
    }

    /// Without a key, any signature segment is accepted, as imgproxy does.
    @Test func withoutAKeyAnySignatureIsAccepted() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        for signature in ["insecure", "_", "whatever", "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8"] {
            let reply = try await harness.request("/imgproxy/\(signature)/w:40/plain/" + harness.origin.url("/q.png").absoluteString)
            #expect(reply.status == 200, "\(signature)")
        }
        #expect(try await harness.request("/imgproxy/health").text == "imgproxy is running")
        #expect(try await harness.request("/imgproxy/insecure").status == 400)
        // A key with a salt that is not hex: nothing validates, rather than everything.
        let broken = try await Self.start { $0.imgproxy.key = "not hex" }
        defer { Task { await broken.stop() } }
        #expect(try await broken.request("/imgproxy/insecure/w:40/plain/" + broken.origin.url("/q.png").absoluteString).status == 403)
    }

    @Test func filenamesAttachmentsAndExpiry() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let named = try await harness.request(Self.insecure(harness, "w:40/fn:holiday/f:webp"))
        #expect(named.header("Content-Disposition") == #"inline; filename="holiday.webp""#)
        let attached = try await harness.request(Self.insecure(harness, "w:40/att:1"))
        #expect(attached.header("Content-Disposition") == #"attachment; filename="q.png""#)
        let encodedName = try await harness.request(Self.insecure(harness, "w:40/fn:\(ImgproxyURLTests.base64("a b")):1/att:t/f:jpg"))
        #expect(encodedName.header("Content-Disposition") == #"attachment; filename="a b.jpg""#)
        // Always there, as imgproxy sends it: the source's name and the output's extension.
        #expect(try await harness.request(Self.insecure(harness, "w:40/f:webp")).header("Content-Disposition") == #"inline; filename="q.webp""#)
        #expect(try await harness.request("/imgproxy/insecure/w:40/" + ImgproxyURLTests.base64(harness.origin.url("/q.png").absoluteString)).header("Content-Disposition")
            == #"inline; filename="q.png""#)
        #expect(try await harness.request(Self.insecure(harness, "w:40/fn:a%22b")).status == 400)
        // Expired: 404, as imgproxy answers; not yet: served, and not kept past the expiry.
        let past = Int(Date().timeIntervalSince1970) - 10, soon = Int(Date().timeIntervalSince1970) + 600
        #expect(try await harness.request(Self.insecure(harness, "w:40/exp:\(past)")).status == 404)
        let expiring = try await harness.request(Self.insecure(harness, "w:40/exp:\(soon)"))
        // What remains at the proxy's reading of its clock, which lies between the test's
        // readings before and after the request, however long that took.
        let after = Int(Date().timeIntervalSince1970)
        #expect(expiring.status == 200)
        let maxAge = try #require(expiring.header("Cache-Control")?.split(separator: "=").last.flatMap { Int($0) })
        #expect(maxAge <= 600 && maxAge >= soon - after, "max-age \(maxAge), \(after - (soon - 600)) s after the URL was made")
    }

    /// The SSRF guard is the one `/image` has: loopback (other than the trusted test origin),
    /// private and link-local sources are refused, plain or base64.
    @Test func theOriginGuardApplies() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        for source in ["http://127.0.0.1:9/a.jpg", "http://10.0.0.1/a.jpg", "http://169.254.169.254/latest/meta-data", "http://[::1]:9/a.jpg"] {
            for path in ["/imgproxy/insecure/w:50/plain/" + ProxyHarness.encoded(source), "/imgproxy/insecure/w:50/" + ImgproxyURLTests.base64(source)] {
                let reply = try await harness.request(path)
                #expect(reply.status == 403, "\(path)")
                #expect(reply.text == "forbidden origin\n", "\(path)")
                #expect(try await harness.request(ProxyHarness.imagePath(url: source, "w=50")).status == reply.status, "\(source)")
            }
        }
    }

    /// The same pixels through `/image`, thumbor and imgproxy are one variant: the later ones come
    /// from memory, nothing is decoded again; metrics count the dialect.
    @Test func oneCacheForEveryDialect() async throws {
        let harness = try await Self.start { $0.thumbor.allowsUnsafe = true }
        defer { Task { await harness.stop() } }
        let first = try await harness.get("/e.jpg", "w=300&h=200&format=jpeg")
        #expect(first.status == 200 && first.header("X-Cache") == "miss")
        let decodes = harness.decodeCount
        let second = try await harness.request(Self.insecure(harness, "rs:fit:300:200/f:jpg", "/e.jpg"))
        #expect(second.status == 200 && second.header("X-Cache") == "memory")
        #expect(second.body == first.body && harness.decodeCount == decodes)
        let third = try await harness.request(Self.insecure(harness, "rs:fill:100:100/dpr:2/f:webp", "/e.jpg"))
        #expect(third.header("X-Cache") == "miss")
        let fourth = try await harness.get("/e.jpg", "w=200&h=200&fit=cover&format=webp")
        #expect(fourth.header("X-Cache") == "memory" && fourth.body == third.body)
        let thumbor = try await harness.request("/thumbor/unsafe/200x200/filters:no_upscale():format(webp)/" + ProxyHarness.encoded(harness.origin.url("/e.jpg").absoluteString))
        #expect(thumbor.header("X-Cache") == "memory" && thumbor.body == third.body)
        let metrics = try await harness.request("/metrics").text
        #expect(metrics.contains(#"webimage_proxy_requests_total{route="imgproxy",status="200"} 2"#), "\(metrics)")
    }

    /// Under the prefix `/`, imgproxy's URLs are at the root; the proxy's own routes and
    /// thumbor (under its prefix) keep working.
    @Test func theRootPrefixIsADropIn() async throws {
        let harness = try await Self.start {
            $0.imgproxy.prefix = "/"
            $0.thumbor.allowsUnsafe = true
        }
        defer { Task { await harness.stop() } }
        let source = harness.origin.url("/q.png").absoluteString
        let imgproxy = try await harness.request("/insecure/rs:fit:100:100/plain/" + source)
        #expect(imgproxy.status == 200)
        #expect(try ThumborServingTests.size(imgproxy) == "100x50")
        #expect(try await harness.request("/health").text == "imgproxy is running")
        #expect(try await harness.request("/healthz").text == "ok\n")
        #expect(try await harness.get("/q.png", "w=20").status == 200)
        #expect(try await harness.request("/metrics").status == 200)
        #expect(try await harness.request("/").status == 200)
        #expect(try await harness.request("/insecure/w:20/plain/" + source, method: .HEAD).status == 200)
        let thumbor = try await harness.request("/thumbor/unsafe/fit-in/50x50/" + ProxyHarness.encoded(source))
        #expect(thumbor.status == 200)
        #expect(try ThumborServingTests.size(thumbor) == "50x25")
        // And the other way round: thumbor at the root, imgproxy under its prefix.
        let other = try await Self.start {
            $0.thumbor.prefix = "/"
            $0.thumbor.allowsUnsafe = true
        }
        defer { Task { await other.stop() } }
        let otherSource = other.origin.url("/q.png").absoluteString
        #expect(try await other.request("/imgproxy/insecure/w:20/plain/" + otherSource).status == 200)
        #expect(try await other.request("/imgproxy/health").status == 200)
        #expect(try await other.request("/unsafe/20x0/" + ProxyHarness.encoded(otherSource)).status == 200)
        let metrics = try await other.request("/metrics").text
        #expect(metrics.contains(#"webimage_proxy_requests_total{route="imgproxy",status="200"} 2"#), "\(metrics)")
    }

    /// With an origin folder, `local:///` sources are files in it, and nothing outside it.
    @Test func localFiles() async throws {
        let harness = try await Self.start { $0.originDirectory = Fixture.demoImages }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request("/imgproxy/insecure/rs:fit:160:160/plain/local:///Spring.png")
        #expect(reply.status == 200)
        #expect(try ThumborServingTests.size(reply) == "160x120")
        let encoded = try await harness.request("/imgproxy/insecure/rs:fit:160:160/" + ImgproxyURLTests.base64("local:///Spring.png") + ".webp")
        #expect(encoded.status == 200 && encoded.format == .webp)
        for (source, status) in [("local:///missing.png", 404), ("local:///../Package.swift", 400), ("local:///a/../../x.png", 400), ("local:////etc/passwd", 404)] {
            let plain = try await harness.request("/imgproxy/insecure/w:10/plain/" + source)
            let image = try await harness.request(ProxyHarness.imagePath(url: source, "w=10"))
            #expect(plain.status == status, "\(source): \(plain.text)")
            #expect(image.status == plain.status, "\(source)")
        }
        #expect(try await harness.request("/imgproxy/insecure/w:10/plain/local%3A%2F%2F%2F..%2F..%2Fetc%2Fpasswd").status == 400)
    }

    /// Presets from the configuration, the `default` one first.
    @Test func presets() async throws {
        let harness = try await Self.start {
            $0.imgproxy.presets = ["default": "f:webp", "thumb": "rs:fill:40:40/g:we", "wide": "rs:fit:100:0"]
        }
        defer { Task { await harness.stop() } }
        let thumb = try await harness.request(Self.insecure(harness, "pr:thumb"))
        #expect(thumb.format == .webp)
        #expect(try ThumborServingTests.size(thumb) == "40x40" && ThumborServingTests.colour(thumb, 35, 5) == .red)
        let overridden = try await harness.request(Self.insecure(harness, "pr:wide/f:png"))
        #expect(overridden.format == .png)
        #expect(try ThumborServingTests.size(overridden) == "100x50")
        #expect(try await harness.request(Self.insecure(harness, "pr:nope")).status == 400)
    }
}
