import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// YYWebImage's progressive blur (``ImageBindingOptions/progressiveBlur``) in `WebImageView`, in
/// a real GTK window under Xvfb, over a progressive JPEG the origin sends in part and then holds.
///
/// How blurred a preview is, is measured, not looked at: the mean absolute Laplacian of the
/// pixels on screen (``Sharpness``), against the same measure of the preview the library's own
/// incremental decoder makes from the same bytes, un-blurred.
///
/// Which preview the view was shown must not depend on how the socket split the bytes, so each
/// held prefix ends just after the file's first scan and the next scan's header (which tells
/// the decoder the first is complete): whatever the reads, the only preview there can be is that
/// scan's, and its pixels are the same. Two files carry that same scan: the JPEG as encoded, held after about a tenth of its
/// bytes, and the same JPEG behind 195 KB of comment segments, held after nearly all of its
/// bytes. Their previews are the same pixels, made at very different fractions of the file: the
/// blur, which shrinks as bytes arrive, must be smaller on the second.
@Suite(
    "Progressive blur in WebImageView",
    .enabled(if: GTKProbe.executable != nil, "webimage-gtk-probe was not built beside the tests"),
    .enabled(if: Requirement.met(Xvfb.executable != nil), "Xvfb is not installed (make test installs xvfb)"),
    .timeLimit(.minutes(2 * Deadlines.stretch))
)
struct ProgressiveBlurViewTests {
    /// 16 px blocks of colours from a fixed sequence, under a 2 px checker of ±24: edges at
    /// every scale, so that the first scan's preview (the blocks' means, smoothed) has some to
    /// blur, and the whole image many more.
    static func blocks(width: Int, height: Int) throws -> Bitmap {
        var state: UInt32 = 0x2545_F491
        var colours: [Int: [Int]] = [:]
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let block = (y / 16) << 16 | x / 16
                if colours[block] == nil {
                    colours[block] = (0..<3).map { _ in
                        state = state &* 1_664_525 &+ 1_013_904_223
                        return Int(state >> 24)
                    }
                }
                let detail = (x / 2 + y / 2) % 2 == 0 ? 24 : -24
                pixels += colours[block]!.map { UInt8(clamping: $0 + detail) } + [255]
            }
        }
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    static func progressiveJPEG(_ bitmap: Bitmap) throws -> Data {
        var options = ImageEncodingOptions()
        options.progressive = true
        options.quality = 90
        return try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .jpeg, options: options)
    }

    /// The length of `jpeg` up to its first scan and the header of the second, none of that
    /// scan's data: the decoder then knows the first scan is complete (a scan ends where the
    /// next begins), and has nothing of any other.
    static func firstScanPrefix(of jpeg: Data) throws -> Int {
        let bytes = [UInt8](jpeg)
        // Entropy-coded data stuffs every 0xFF with a 0x00: FF DA is a start of scan.
        let starts = bytes.indices.dropLast(3).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }
        try #require(starts.count >= 3, "a progressive JPEG has several scans")
        let header = Int(bytes[starts[1] + 2]) << 8 | Int(bytes[starts[1] + 3])
        return starts[1] + 2 + header
    }

    /// `jpeg` with `count` comment segments of 65,000 spaces after SOI: the same image, its
    /// scans that much further into the file.
    static func padded(_ jpeg: Data, segments count: Int) -> Data {
        (0..<count).reduce(jpeg) { padded, _ in
            JPEGMarkers.insertingSegment(marker: 0xFE, payload: [UInt8](repeating: 0x20, count: 65_000), into: padded)
        }
    }

    /// The preview the library's progressive decoder makes of `prefix`, as the pipeline's would.
    static func preview(of prefix: Data) throws -> Bitmap {
        let incremental = try #require(JPEGDecoder().makeIncrementalDecoder(options: ImageDecodingOptions()))
        try incremental.append(prefix)
        return try #require(try incremental.preview(), "no preview of \(prefix.count) bytes").image
    }

    /// Binds `path` with progressive, blurred previews and returns the view once it shows one.
    static func shownPreview(of path: String, probe: ChildProcess) async throws -> WidgetSnapshot {
        let seen = probe.stdout.count
        #expect(await probe.ask("bind \(path) progressive blur", expecting: "bound \(path)") == "bound \(path) shown=placeholder spinner=on")
        #expect(await probe.waitForLine(skipping: seen) { $0.hasPrefix("display preview") } != nil, "\(probe.stdout.suffix(6))")
        return try await WidgetSnapshot.take(from: probe)
    }

    @Test("a held progressive JPEG's preview is blurred, less so further into the file; the final image is sharp")
    func previewsAreBlurred() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        let display = try await Xvfb.start()
        defer { display.stop() }
        let probe = try GTKProbe.start(origin: origin.baseURL.absoluteString, display: display.name)
        defer { probe.kill() }
        #expect(await probe.waitForLine { $0 == "mapped" } != nil, "\(probe.stderr)")

        // The picture has the view's size: GTK draws it, and every preview, pixel for pixel.
        let empty = try await WidgetSnapshot.take(from: probe)
        let picture = try Self.blocks(width: empty.width, height: empty.height)
        let early = try Self.progressiveJPEG(picture)
        let late = Self.padded(early, segments: 3)
        let earlyPrefix = try Self.firstScanPrefix(of: early)
        let latePrefix = earlyPrefix + late.count - early.count
        origin.register("/early.jpg", data: early, contentType: "image/jpeg")
        origin.register("/late.jpg", data: late, contentType: "image/jpeg")
        _ = origin.gate("/early.jpg", mode: .sendHeadersThenHold(bytes: earlyPrefix))
        let lateGate = origin.gate("/late.jpg", mode: .sendHeadersThenHold(bytes: latePrefix))
        #expect(Double(earlyPrefix) / Double(early.count) < 0.25 && Double(latePrefix) / Double(late.count) > 0.95)

        // Both held prefixes end on the same complete scan: one un-blurred preview for both.
        let unblurred = try Self.preview(of: early.prefix(earlyPrefix))
        #expect(try Self.preview(of: late.prefix(latePrefix)).pixels == unblurred.pixels)

        let earlyShot = try await Self.shownPreview(of: "/early.jpg", probe: probe)
        let lateShot = try await Self.shownPreview(of: "/late.jpg", probe: probe)
        let shown = earlyShot.shownRect(imageWidth: picture.width, imageHeight: picture.height)
        let reference = earlyShot.sharpness(of: unblurred, shownIn: shown)
        let (earlySharpness, lateSharpness) = (earlyShot.sharpness(in: shown), lateShot.sharpness(in: shown))
        // The first scan has edges to blur; a tenth of the way in, the blur takes at least half
        // of their energy away; nearly all the way in, it takes less (by a fifth at least).
        #expect(reference > 3, "the un-blurred preview is already flat: \(reference)")
        #expect(earlySharpness <= reference * 0.5, "early preview \(earlySharpness), un-blurred \(reference)")
        #expect(lateSharpness > earlySharpness * 1.2, "late preview \(lateSharpness), early \(earlySharpness), un-blurred \(reference)")
        // Blurred, not replaced: the colours are the preview's, region by region.
        let regions = unblurred.regionMeans(columns: 2, rows: 2)
        #expect(earlyShot.regionDifference(from: regions, shownIn: shown) <= WebImageViewTests.previewTolerance * 3)
        #expect(lateShot.regionDifference(from: regions, shownIn: shown) <= WebImageViewTests.previewTolerance)

        // Released: the final image is never blurred, exactly the full decode on screen.
        lateGate.open()
        #expect(await probe.waitForLine { $0.hasPrefix("completed /late.jpg") } == "completed /late.jpg ok")
        let final = try await WidgetSnapshot.take(from: probe)
        let decoded = try CoderRegistry.system().decode(late).image
        let match = final.difference(from: decoded, shownIn: shown)
        #expect(match.maximum <= WebImageViewTests.pixelTolerance, "\(match)")
        #expect(abs(final.sharpness(in: shown) - final.sharpness(of: decoded, shownIn: shown)) <= 1)
        #expect(final.sharpness(in: shown) > lateSharpness)
        probe.send("quit")
        #expect(await probe.waitForExit() == 0)
    }
}
