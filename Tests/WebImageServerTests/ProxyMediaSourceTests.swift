import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageS3
import WebImageTestSupport

/// A video and a PDF through the proxy from each kind of origin (`--origin-dir`, an HTTP origin
/// on loopback, S3): a poster or a page at the size asked, cached, revalidated with a `304`,
/// another time or page another variant, and refused past the source limits; a video's clip.
@Suite(.enabled(if: Requirement.met(VideoClips.ffmpeg != nil), "ffmpeg is not installed (make deps)"))
struct ProxyMediaSourceTests {
    /// A source of one kind: its bytes, its name, what `w=80` makes of it and the variant
    /// parameter that picks another still.
    struct Source: Sendable, CustomTestStringConvertible {
        var name: String
        var contentType: String
        var size: (width: Int, height: Int)
        var otherStill: String
        var testDescription: String { name }

        /// A 160 × 120 H.264 clip (`VideoClips.h264`): 80 × 60 at `w=80`.
        static let video = Source(name: "clip.mp4", contentType: "video/mp4", size: (80, 60), otherStill: "t=1.5")
        /// Two pages, 200 × 100 pt and 100 × 200 pt: 80 × 40 at `w=80`.
        static let pdf = Source(name: "pages.pdf", contentType: "application/pdf", size: (80, 40), otherStill: "page=2")

        func bytes() throws -> Data {
            name == Self.video.name ? try VideoClips.h264() : PDFBuilder.pages([(200, 100), (100, 200)])
        }
    }

    enum Origin: String, CaseIterable, Sendable { case folder, http, s3 }

    /// A proxy that accepts videos and PDFs, serving `source` from `origin`; its `/image` path
    /// for `parameters`; and what to stop afterwards.
    func proxy(for source: Source, from origin: Origin, configure: @escaping (inout ImageProxy.Configuration) -> Void = { _ in })
        async throws -> (harness: ProxyHarness, path: @Sendable (String) -> String, cleanup: @Sendable () async -> Void) {
        let data = try source.bytes()
        func allowing(_ configuration: inout ImageProxy.Configuration) {
            configuration.allowsVideo = true
            configuration.allowsPDF = true
            configure(&configuration)
        }
        switch origin {
        case .folder:
            let folder = TemporaryDirectory("media-origin")
            try data.write(to: folder.url.appendingPathComponent(source.name))
            let harness = try await ProxyHarness.start { configuration in
                configuration.originDirectory = folder.url
                allowing(&configuration)
            }
            return (harness, { ProxyHarness.imagePath(url: "local:///\(source.name)", $0) }, { await harness.stop(); folder.remove() })
        case .http:
            let harness = try await ProxyHarness.start(configure: allowing)
            harness.origin.register("/\(source.name)", data: data, contentType: source.contentType)
            return (harness, { harness.imagePath("/\(source.name)", $0) }, { await harness.stop() })
        case .s3:
            let bucket = try await ProxyS3Tests.Bucket.make(.seaweedFS)
            try await bucket.client.putObject(bucket: bucket.name, key: source.name, data: data, contentType: source.contentType)
            let harness = try await ProxyHarness.start { configuration in
                configuration.s3 = bucket.configuration
                configuration.allowedBuckets = [bucket.name]
                allowing(&configuration)
            }
            return (harness, { ProxyHarness.imagePath(url: "s3://\(bucket.name)/\(source.name)", $0) }, { await harness.stop(); await bucket.shutdown() })
        }
    }

    static let allCases: [(Source, Origin)] = [Source.video, .pdf].flatMap { source in Origin.allCases.map { (source, $0) } }
    static let cases = allCases.filter { $0.1 != .s3 }
    /// Apart, so that they are skipped, not failed, where SeaweedFS is missing (outside CI).
    static let s3Cases = allCases.filter { $0.1 == .s3 }

    @Test(arguments: cases)
    func servedCachedAndRevalidated(_ source: Source, _ origin: Origin) async throws {
        try await servesCachesAndRevalidates(source, from: origin)
    }

    @Test(.enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS is not installed (scripts/deps.sh --test)"), arguments: s3Cases)
    func servedCachedAndRevalidatedFromS3(_ source: Source, _ origin: Origin) async throws {
        try await servesCachesAndRevalidates(source, from: origin)
    }

    private func servesCachesAndRevalidates(_ source: Source, from origin: Origin) async throws {
        let (harness, path, cleanup) = try await proxy(for: source, from: origin)
        defer { Task { await cleanup() } }

        let first = try await harness.request(path("w=80"))
        #expect(first.status == 200, "\(first.text)")
        #expect(first.header("X-Cache") == "miss")
        // format=auto never answers a video or a document: a poster or page on white is a JPEG.
        #expect(first.format == .jpeg && first.header("Content-Type") == "image/jpeg")
        let image = try first.decoded().image
        #expect(image.width == source.size.width && image.height == source.size.height)

        let again = try await harness.request(path("w=80"))
        #expect(again.status == 200 && again.header("X-Cache") == "memory" && again.body == first.body)
        let etag = try #require(first.header("ETag"))
        let revalidated = try await harness.request(path("w=80"), headers: [("If-None-Match", etag)])
        #expect(revalidated.status == 304 && revalidated.body.isEmpty)

        // Another time or page is another variant of the same original, fetched once.
        let other = try await harness.request(path("w=80&" + source.otherStill))
        #expect(other.status == 200 && other.header("ETag") != etag && other.body != first.body)
        if origin == .http { #expect(harness.origin.requestCount(path: "/\(source.name)") == 1) }
    }

    /// `clip` (with `fps`, 10 unless given) makes an animated preview from `t`: another variant,
    /// animated WebP or GIF (`format=auto` for a client that names no format: an animation is a
    /// GIF), each frame the library's; refused when malformed (`400`) or past the animation
    /// limits (`413`).
    @Test func aClipIsAnAnimatedVariant() async throws {
        let (harness, path, cleanup) = try await proxy(for: .video, from: .http) { $0.limits.maximumAnimationPixels = 19_200 * 10 }
        defer { Task { await cleanup() } }
        var options = ImageDecodingOptions()
        options.videoTime = 0.4
        options.videoClip = VideoClip(duration: 1, framesPerSecond: 5)
        options.thumbnail = .size(width: 80, height: 80, contentMode: .fit)
        let library = try #require(try CoderRegistry.system().decode(try Source.video.bytes(), options: options).animation)

        let poster = try await harness.request(path("w=80&h=80&t=0.4&format=webp"))
        for (parameters, format) in [("format=webp", ImageFormat.webp), ("format=auto", .gif)] {
            let reply = try await harness.request(path("w=80&h=80&t=0.4&clip=1&fps=5&" + parameters))
            #expect(reply.status == 200 && reply.format == format, "\(parameters): \(reply.status) \(reply.text)")
            let animation = try #require(try reply.decoded().animation, "\(parameters)")
            #expect(animation.frames.count == 5 && animation.loopCount == 0)
            #expect(animation.frames.allSatisfy { $0.bitmap.width == 80 && $0.bitmap.height == 60 })
            // Lossy WebP and GIF's palette keep each frame close to the library's, and far from the others.
            for (index, frame) in animation.frames.enumerated() {
                let distances = library.frames.map { Self.meanDifference(frame.bitmap, $0.bitmap) }
                #expect(distances.firstIndex(of: distances.min()!) == index, "\(parameters): frame \(index): \(distances)")
            }
            #expect(reply.body != poster.body)
        }
        let again = try await harness.request(path("w=80&h=80&t=0.4&clip=1&fps=5&format=webp"))
        #expect(again.header("X-Cache") == "memory")

        for bad in ["clip=0", "fps=5", "clip=61", "clip=1&fps=0"] {
            let reply = try await harness.request(path("w=80&" + bad))
            #expect(reply.status == 400, "\(bad): \(reply.status) \(reply.text)")
        }
        // 20 frames of 160 × 120 compose twice the 10 frames' pixels allowed.
        let over = try await harness.request(path("w=80&clip=1&fps=20&format=webp"))
        #expect(over.status == 413, "\(over.status) \(over.text)")
    }

    /// The mean absolute difference of two bitmaps' colour channels, same size.
    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        var total = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let i = y * a.bytesPerRow + x * 4, j = y * b.bytesPerRow + x * 4
                for channel in 0..<3 { total += abs(Int(a.pixels[i + channel]) - Int(b.pixels[j + channel])) }
            }
        }
        return Double(total) / Double(a.width * a.height * 3)
    }

    /// `/info` gives a video's size, frames and duration, a PDF's page count and first page's size.
    @Test func infoDescribesVideosAndDocuments() async throws {
        let (harness, path, cleanup) = try await proxy(for: .video, from: .http)
        defer { Task { await cleanup() } }
        harness.origin.register("/pages.pdf", data: try Source.pdf.bytes(), contentType: "application/pdf")
        let videoPath = path("").replacingOccurrences(of: "/image?", with: "/info?"), pdfPath = harness.imagePath("/pages.pdf").replacingOccurrences(of: "/image?", with: "/info?")
        // Compared as JSON writes them.
        for (target, expected) in [(videoPath, ["format": "mp4", "width": "160", "height": "120", "frames": "50", "duration": "2"]),
                                   (pdfPath, ["format": "pdf", "width": "200", "height": "100", "pages": "2"])] {
            let reply = try await harness.request(target)
            #expect(reply.status == 200, "\(target): \(reply.text)")
            let object = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
            for (key, value) in expected {
                #expect(object[key].map { "\($0)" } == value, "\(target): \(key) is \(object[key] ?? "absent")")
            }
            #expect(object["thumbHash"] is String)
        }
    }

    @Test(arguments: cases)
    func refusedPastTheLimits(_ source: Source, _ origin: Origin) async throws {
        try await refusesPastTheLimits(source, from: origin)
    }

    @Test(.enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS is not installed (scripts/deps.sh --test)"), arguments: s3Cases)
    func refusedPastTheLimitsFromS3(_ source: Source, _ origin: Origin) async throws {
        try await refusesPastTheLimits(source, from: origin)
    }

    private func refusesPastTheLimits(_ source: Source, from origin: Origin) async throws {
        // The clip's frames and the page are 19,200 and 20,000 pixels.
        let (harness, path, cleanup) = try await proxy(for: source, from: origin) { $0.limits.maximumSourcePixels = 10_000 }
        defer { Task { await cleanup() } }
        let reply = try await harness.request(path("w=80"))
        #expect(reply.status == 413, "\(reply.status) \(reply.text)")
    }

    /// Off by default: a video source is refused as an unsupported format (a PDF's refusal is in
    /// ProxyPDFTests), and the gallery of the origin folder leaves out what is refused.
    @Test func videoSourcesAreRefusedByDefault() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/clip.mp4", data: try VideoClips.h264(), contentType: "video/mp4")
        let reply = try await harness.get("/clip.mp4", "w=80")
        #expect(reply.status == 415)

        let folder = TemporaryDirectory("media-gallery")
        defer { folder.remove() }
        try VideoClips.h264().write(to: folder.url.appendingPathComponent("clip.mp4"))
        try PDFBuilder.pages([(20, 10)]).write(to: folder.url.appendingPathComponent("page.pdf"))
        try Fixture.png.write(to: folder.url.appendingPathComponent("photo.png"))
        #expect(Gallery(directory: folder.url, formats: harness.proxy.decodableFormats).names == ["photo.png"])
        #expect(Gallery(directory: folder.url).names == ["clip.mp4", "page.pdf", "photo.png"])
    }
}
