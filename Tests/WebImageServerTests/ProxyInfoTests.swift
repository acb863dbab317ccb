import Foundation
import Synchronization
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// `GET /info?url=…` (issue 30) against the real proxy on loopback: every field of the JSON
/// held to the file (Pillow and exiftool read the same bytes, where they are installed), the
/// signature, the origin guard, the limits, the caches.
@Suite struct ProxyInfoTests {
    /// The JSON object of an `/info` answer.
    static func object(_ reply: Reply, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        try #require(reply.status == 200, "\(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        #expect(reply.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
        return try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any], sourceLocation: sourceLocation)
    }

    /// `/info?url=<origin path>` with `parameters`.
    static func infoPath(_ harness: ProxyHarness, _ originPath: String, _ parameters: String = "") -> String {
        "/info?url=" + ProxyHarness.encoded(harness.origin.url(originPath).absoluteString) + (parameters.isEmpty ? "" : "&" + parameters)
    }

    /// A 64×32 JPEG (a gradient) stored with EXIF orientation 6: 32×64 as displayed.
    static func turnedJPEG() throws -> Data {
        var pixels: [UInt8] = []
        for y in 0..<32 {
            for x in 0..<64 { pixels += [UInt8(x * 4), UInt8(y * 8), 128] }
        }
        let bitmap = try Bitmap(width: 64, height: 32, pixelFormat: .rgb8, pixels: pixels)
        let jpeg = try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .jpeg, options: ImageEncodingOptions())
        return JPEGMarkers.insertingOrientation(6, into: jpeg)
    }

    /// Whether a ThumbHash's aspect ratio is the one of a `width` × `height` image (ThumbHash
    /// stores the shorter side as a count out of 7, or 5 with alpha, of the longer).
    static func aspectMatches(_ base64: String?, width: Int, height: Int) throws -> Bool {
        let hash = try ThumbHash(try #require(base64))
        let expected = Double(width) / Double(height)
        let shortToLong = { (ratio: Double) in min(ratio, 1 / ratio) }
        return abs(shortToLong(hash.aspectRatio) - shortToLong(expected)) <= 0.12
            && (abs(expected - 1) < 0.25 || (hash.aspectRatio > 1) == (expected > 1))
    }

    // MARK: The fields

    /// A JPEG stored turned: its size as displayed, its orientation, its format, one frame, no
    /// alpha, no profile (sRGB), its bytes, and placeholders of the upright picture.
    @Test func aTurnedJPEGIsDescribedAsDisplayed() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let jpeg = try Self.turnedJPEG()
        harness.origin.register("/turned.jpg", data: jpeg)
        let object = try Self.object(try await harness.request(Self.infoPath(harness, "/turned.jpg")))
        #expect(object["width"] as? Int == 32 && object["height"] as? Int == 64)
        #expect(object["orientation"] as? Int == 6)
        #expect(object["format"] as? String == "jpeg" && object["mimeType"] as? String == "image/jpeg")
        #expect(object["frames"] as? Int == 1 && object["duration"] == nil)
        #expect(object["hasAlpha"] as? Bool == false)
        #expect(object["colorSpace"] as? String == "sRGB")
        #expect(object["bytes"] as? Int == jpeg.count)
        #expect(try Self.aspectMatches(object["thumbHash"] as? String, width: 32, height: 64), "\(object)")
        let blurHash = try BlurHash(try #require(object["blurHash"] as? String))
        #expect(blurHash.components == BlurHash.Components(x: 4, y: 3))
        let colour = try #require(object["dominantColor"] as? String)
        #expect(colour.range(of: "^#[0-9a-f]{6}$", options: .regularExpression) != nil, "\(colour)")
        #expect(Set(object.keys) == ["width", "height", "orientation", "format", "mimeType", "frames", "hasAlpha", "colorSpace", "bytes", "thumbHash", "blurHash", "dominantColor"])
    }

    /// Size, orientation, format, frames, duration and alpha as Pillow reads the same files: a
    /// turned JPEG, an animated GIF and WebP, a PNG with alpha.
    @Test(.enabled(if: Requirement.met(InfoReference.hasPillow), "Pillow is not installed (make test installs thumbor, which brings it)"))
    func theFactsAreThoseOfTheFile() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let folder = TemporaryDirectory("info")
        defer { folder.remove() }
        let files: [(String, Data)] = [
            ("turned.jpg", try Self.turnedJPEG()),
            ("chi-animated.gif", try Fixture.animatedGIF),
            ("hopper-animated-16.webp", try Data(contentsOf: Fixture.fixtures.appendingPathComponent("hopper-animated-16.webp"))),
            ("hopper-rgba-32.png", try Data(contentsOf: Fixture.fixtures.appendingPathComponent("hopper-rgba-32.png"))),
            ("elephants.jpg", try Fixture.elephants),
        ]
        for (name, data) in files {
            let path = folder.url.appendingPathComponent(name)
            try data.write(to: path)
            harness.origin.register("/" + name, data: data)
            let object = try Self.object(try await harness.request(Self.infoPath(harness, "/" + name)))
            let pillow = try await InfoReference.pillow(path.path)
            #expect(object["width"] as? Int == pillow.width && object["height"] as? Int == pillow.height, "\(name): \(object)")
            #expect(object["orientation"] as? Int == pillow.orientation, "\(name)")
            #expect(object["format"] as? String == pillow.format, "\(name)")
            #expect(object["frames"] as? Int == pillow.frames, "\(name)")
            if pillow.frames > 1 {
                let duration = try #require(object["duration"] as? Double, "\(name)")
                #expect(abs(duration - pillow.duration) < 0.0005, "\(name): \(duration) against \(pillow.duration)")
            } else {
                #expect(object["duration"] == nil, "\(name)")
            }
            #expect(object["hasAlpha"] as? Bool == pillow.hasAlpha, "\(name)")
            #expect(object["bytes"] as? Int == data.count, "\(name)")
            #expect(try Self.aspectMatches(object["thumbHash"] as? String, width: pillow.width, height: pillow.height), "\(name)")
        }
    }

    /// An ICC-tagged JPEG's colour space is its profile's description, as exiftool reads it.
    @Test(.enabled(if: Requirement.met(InfoReference.hasExiftool), "exiftool is not installed (make test installs libimage-exiftool-perl)"))
    func theColourSpaceIsTheProfilesDescription() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let path = Fixture.fixtures.appendingPathComponent("color/gradient-adobergb.jpg")
        harness.origin.register("/adobe.jpg", data: try Data(contentsOf: path))
        let object = try Self.object(try await harness.request(Self.infoPath(harness, "/adobe.jpg")))
        let expected = try await InfoReference.exiftool("ProfileDescription", path.path)
        #expect(!expected.isEmpty)
        #expect(object["colorSpace"] as? String == expected)
    }

    /// A solid-colour PNG's dominant colour is the colour, exactly; `bh` sets the BlurHash's
    /// components, and is a key of its own.
    @Test func theDominantColourIsExactAndTheComponentsAreSettable() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let bitmap = try SolidColours.bitmap(SolidColours.RGB(red: 0x3C, green: 0x8A, blue: 0xD2), size: 40)
        harness.origin.register("/solid.png", data: try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .png, options: ImageEncodingOptions()))
        let object = try Self.object(try await harness.request(Self.infoPath(harness, "/solid.png")))
        #expect(object["dominantColor"] as? String == "#3c8ad2")
        #expect(object["hasAlpha"] as? Bool == false)

        let other = try Self.object(try await harness.request(Self.infoPath(harness, "/solid.png", "bh=3x2")))
        #expect(try BlurHash(try #require(other["blurHash"] as? String)).components == BlurHash.Components(x: 3, y: 2))
        for bad in ["bh=0x3", "bh=10x3", "bh=4", "bh=4x3x1", "w=100", "bh=4x3&bh=4x3"] {
            let reply = try await harness.request(Self.infoPath(harness, "/solid.png", bad))
            #expect(reply.status == 400, "\(bad): \(reply.status)")
        }
        #expect(try await harness.request("/info").status == 400)
    }

    /// The small decode: the first frame at most 100 px a side, colour kept for its profile; a
    /// 1920×1080 JPEG is decoded by libjpeg at 1/8 scale (240×135, which the registry then
    /// shrinks to 100×56), never at full size.
    @Test func theDecodeIsSmall() async throws {
        let recorder = DecodeRecorder()
        let harness = try await ProxyHarness.start { configuration in
            if let jpeg = configuration.registry.decoder(for: .jpeg) { configuration.registry.register(RecordingDecoder(jpeg, recorder: recorder)) }
        }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        #expect(try await harness.request(Self.infoPath(harness, "/e.jpg")).status == 200)
        let decodes = recorder.decodes
        try #require(decodes.count == 1)
        #expect(decodes[0].options.thumbnail == .maxPixelSize(100))
        #expect(decodes[0].options.firstFrameOnly && decodes[0].options.colorSpace == .preserve)
        #expect(decodes[0].width <= 240 && decodes[0].height <= 135, "\(decodes[0].width)×\(decodes[0].height)")
    }

    // MARK: Signatures, origins, failures

    /// Signed as `/image` is: with a key, unsigned and tampered targets are `403`, and a signed
    /// `/image` target is no `/info` target (the path is signed). Another dialect's key closes
    /// `/info` as it closes `/image`, unless unsigned `/image` URLs are allowed.
    @Test func signedLikeImage() async throws {
        let harness = try await ProxyHarness.start { $0.signingKey = "test-key" }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let signer = URLSigner(key: "test-key")
        let target = Self.infoPath(harness, "/e.jpg")
        let unsigned = try await harness.request(target)
        #expect(unsigned.status == 403 && unsigned.text == "missing or invalid signature\n")
        let signed = try await harness.request(signer.sign(target))
        #expect(signed.status == 200)
        #expect(signed.header("Cache-Control") == "public, max-age=86400, immutable")
        #expect(try await harness.request(signer.sign(target).replacingOccurrences(of: "/info?", with: "/info?bh=3x3&")).status == 403)
        #expect(try await harness.request(URLSigner(key: "other").sign(target)).status == 403)
        let image = signer.sign(harness.imagePath("/e.jpg"))
        #expect(try await harness.request(image).status == 200)
        #expect(try await harness.request(image.replacingOccurrences(of: "/image?", with: "/info?")).status == 403)
        // The signature is checked before the parameters.
        #expect(try await harness.request("/info?bh=nonsense").status == 403)

        let thumborKeyed = try await ProxyHarness.start(origin: harness.origin) { $0.thumbor.key = "k" }
        defer { Task { await thumborKeyed.stop(keepOrigin: true) } }
        #expect(try await thumborKeyed.request(Self.infoPath(thumborKeyed, "/e.jpg")).status == 403)
        let opened = try await ProxyHarness.start(origin: harness.origin) { configuration in
            configuration.thumbor.key = "k"
            configuration.allowsUnsignedImageURLs = true
        }
        defer { Task { await opened.stop(keepOrigin: true) } }
        #expect(try await opened.request(Self.infoPath(opened, "/e.jpg")).status == 200)
    }

    /// The origin guard is `/image`'s: loopback targets (other than the trusted test origin)
    /// and redirects to them are refused, before any connection.
    @Test func theOriginGuardApplies() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        var targets = ProxySecurityTests.loopbackTargets(port: harness.origin.port)
        targets.append("http://127.0.0.1:\(harness.port)/metrics")
        for target in targets {
            let reply = try await harness.request("/info?url=" + ProxyHarness.encoded(target))
            #expect(reply.status == 403 && reply.text == "forbidden origin\n", "\(target)")
        }
        #expect(harness.origin.allRequests.isEmpty)
        let redirect = harness.origin.url("/redirect-to?location=" + ProxyHarness.encoded("http://[::1]:\(harness.origin.port)/e.jpg")).absoluteString
        let reply = try await harness.request("/info?url=" + ProxyHarness.encoded(redirect))
        #expect(reply.status == 403 && reply.text == "forbidden origin\n")
        #expect(Set(harness.origin.allRequests.map(\.path)) == ["/redirect-to"])
    }

    /// Bytes in no image format are a `415`, whether the origin says so (`text/html`) or not.
    @Test func notAnImageIs415() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/notes.txt", data: Data("these are notes, not an image\n".utf8), contentType: "application/octet-stream")
        for path in ["/html", "/notes.txt"] {
            let reply = try await harness.request(Self.infoPath(harness, path))
            #expect(reply.status == 415 && reply.text == "unsupported source format\n", "\(path): \(reply.status) \(reply.text)")
            #expect(reply.header("ETag") == nil)
        }
    }

    /// A source `/image` refuses as too large, `/info` refuses with the same answer: too many
    /// pixels, an animation whose composing work passes the limit (4096×4096, 3,000 frames),
    /// more frames than any decode composes (200,000).
    @Test func aBombIsRefusedAsImageRefusesIt() async throws {
        let harness = try await ProxyHarness.start { $0.limits.maximumSourcePixels = 1_000_000 }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)   // 2 megapixels
        harness.origin.register("/bomb.webp", data: AnimatedWebPBuilder.file(width: 1000, height: 1000, frameCount: 3000))
        harness.origin.register("/frames.webp", data: AnimatedWebPBuilder.file(width: 1, height: 1, frameCount: 200_000))
        for path in ["/e.jpg", "/bomb.webp", "/frames.webp"] {
            let image = try await harness.get(path, "w=64&h=64")
            let info = try await harness.request(Self.infoPath(harness, path))
            #expect(image.status == 413, "\(path)")
            #expect(info.status == image.status && info.text == image.text, "\(path): \(info.status) \(info.text)")
        }
    }

    // MARK: Caching

    /// An answer is a variant: `ETag`, a memory hit (on the event loop) that decodes nothing,
    /// `304` for its tag, a key of its own per `bh`; and the original is `/image`'s too.
    @Test func anAnswerIsCachedLikeAVariant() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let path = Self.infoPath(harness, "/e.jpg")
        let first = try await harness.request(path)
        #expect(first.status == 200 && first.header("X-Cache") == "miss")
        let etag = try #require(first.header("ETag"))
        #expect(harness.decodeCount == 1)

        let second = try await harness.request(path)
        #expect(second.header("X-Cache") == "memory" && second.body == first.body && second.header("ETag") == etag)
        #expect(harness.decodeCount == 1)
        #expect(try await harness.eventLoopAnswers() >= 1)

        let revalidated = try await harness.request(path, headers: [("If-None-Match", etag)])
        #expect(revalidated.status == 304 && revalidated.body.isEmpty)
        let other = try await harness.request(Self.infoPath(harness, "/e.jpg", "bh=5x5"))
        #expect(other.header("X-Cache") == "miss" && other.header("ETag") != etag)

        #expect(try await harness.get("/e.jpg", "w=100").status == 200)
        #expect(harness.origin.requestCount(path: "/e.jpg") == 1)
    }

    /// After a restart over the same cache folder, the answer comes from disk.
    @Test func anAnswerSurvivesARestart() async throws {
        let first = try await ProxyHarness.start()
        first.origin.register("/e.jpg", data: try Fixture.elephants)
        let made = try await first.request(Self.infoPath(first, "/e.jpg"))
        #expect(made.header("X-Cache") == "miss")
        await first.stop(keepOrigin: true, keepCache: true)

        let second = try await ProxyHarness.start(origin: first.origin, cacheDirectory: first.cacheDirectory)
        defer { Task { await second.stop() } }
        let again = try await second.request(Self.infoPath(second, "/e.jpg"))
        #expect(again.header("X-Cache") == "disk" && again.body == made.body && again.header("ETag") == made.header("ETag"))
        #expect(second.decodeCount == 0 && second.origin.requestCount(path: "/e.jpg") == 1)
    }

    /// With a fleet's result store, an answer made by one instance is another's.
    @Test(.enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"))
    func anAnswerIsSharedThroughTheResultStore() async throws {
        let bucket = try await ProxyS3Tests.Bucket.make(.seaweedFS)
        defer { Task { await bucket.shutdown() } }
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/e.jpg", data: try Fixture.elephants)

        let first = try await ProxyS3Tests().instance(bucket, origin: origin)
        let made = try await first.request(Self.infoPath(first, "/e.jpg"))
        #expect(made.status == 200 && made.header("X-Cache") == "miss")
        await first.proxy.resultStore?.waitForWrites()
        #expect(try await bucket.variantKeys(prefix: "fleet").count == 1)
        await first.stop(keepOrigin: true)

        let second = try await ProxyS3Tests().instance(bucket, origin: origin)
        defer { Task { await second.stop(keepOrigin: true) } }
        let shared = try await second.request(Self.infoPath(second, "/e.jpg"))
        #expect(shared.header("X-Cache") == "store" && shared.body == made.body && shared.header("ETag") == made.header("ETag"))
        #expect(origin.allRequests.count == 1 && second.decodeCount == 0)
    }
}

/// What the decoder it wraps was asked, and the size it made.
final class DecodeRecorder: Sendable {
    private let recorded = Mutex<[(options: ImageDecodingOptions, width: Int, height: Int)]>([])

    var decodes: [(options: ImageDecodingOptions, width: Int, height: Int)] { recorded.withLock { $0 } }

    func record(_ options: ImageDecodingOptions, _ container: ImageContainer) {
        recorded.withLock { $0.append((options, container.image.width, container.image.height)) }
    }
}

/// A decoder that tells a ``DecodeRecorder`` about each decode; decoding itself is `base`'s.
final class RecordingDecoder: ImageDecoder {
    let base: any ImageDecoder
    let recorder: DecodeRecorder

    init(_ base: any ImageDecoder, recorder: DecodeRecorder) {
        self.base = base
        self.recorder = recorder
    }

    var formats: Set<ImageFormat> { base.formats }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        let container = try base.decode(data, options: options)
        recorder.record(options, container)
        return container
    }
}

/// What other tools read of a file: Pillow (size after orientation, frames and their delays,
/// alpha) and exiftool (an ICC profile's description).
enum InfoReference {
    static let hasPillow = installed(["python3", "-c", "import PIL"])
    static let hasExiftool = installed(["exiftool", "-ver"])

    private static func installed(_ arguments: [String]) -> Bool {
        (try? CommandRun(URL(fileURLWithPath: "/usr/bin/env"), arguments).status == 0) ?? false
    }

    struct Facts: Decodable {
        var width: Int
        var height: Int
        var orientation: Int
        var format: String
        var frames: Int
        /// The frames' delays added up, in seconds.
        var duration: Double
        var hasAlpha: Bool
    }

    /// Pillow's reading of the file at `path`: the EXIF orientation's turn applied to the size,
    /// every frame's `duration`, and alpha as an alpha band or a transparent colour.
    static func pillow(_ path: String) async throws -> Facts {
        let script = """
        import json, sys
        from PIL import Image
        im = Image.open(sys.argv[1])
        frames = getattr(im, "n_frames", 1)
        delays = []
        for index in range(frames):
            im.seek(index)
            im.load()  # WebP's frame delay is read with the frame
            delays.append(im.info.get("duration", 0))
        im.seek(0)
        im.load()
        orientation = im.getexif().get(0x0112, 1)
        width, height = im.size
        if orientation >= 5:
            width, height = height, width
        alpha = im.mode in ("RGBA", "LA", "PA", "La", "RGBa") or "transparency" in im.info
        print(json.dumps({"width": width, "height": height, "orientation": orientation, "format": im.format.lower(),
                          "frames": frames, "duration": sum(delays) / 1000, "hasAlpha": alpha}))
        """
        let run = try await Task.detached { try CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, path]) }.value
        try #require(run.status == 0, "Pillow: \(run.stderr)")
        return try JSONDecoder().decode(Facts.self, from: Data(run.stdout.utf8))
    }

    /// exiftool's first value of `tag` for the file at `path`, as it prints it (`-s3`): of every
    /// occurrence (`-a`), the first, which for colord's many-language profile descriptions is
    /// the US English one (without `-a`, exiftool prints the last).
    static func exiftool(_ tag: String, _ path: String) async throws -> String {
        let run = try await Task.detached { try CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["exiftool", "-s3", "-a", "-" + tag, path]) }.value
        try #require(run.status == 0, "exiftool: \(run.stderr)")
        return run.stdout.split(separator: "\n").first.map(String.init) ?? ""
    }
}
