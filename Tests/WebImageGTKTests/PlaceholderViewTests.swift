import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The ThumbHash placeholder in `WebImageView`, in a real GTK window under Xvfb (through
/// `webimage-gtk-probe`, as WebImageViewTests): while the origin holds the image, the view
/// shows the decoded hash (the one the manager remembers from an earlier decode, or the one the
/// request carries), then the image, cross-faded from the placeholder.
///
/// The pictures have the view's own size, so that GTK draws an image pixel for pixel; the
/// 32 px placeholder is scaled up, and compared with its bilinear resampling as
/// WebImageViewTests compares its gradient.
@Suite(
    "ThumbHash placeholders in WebImageView",
    .enabled(if: GTKProbe.executable != nil, "webimage-gtk-probe was not built beside the tests"),
    .enabled(if: Requirement.met(Xvfb.executable != nil), "Xvfb is not installed (make test installs xvfb)"),
    .timeLimit(.minutes(2 * Deadlines.stretch))
)
struct PlaceholderViewTests {
    /// Four quadrants of strong colours, each under a 2 px checker of ±40: a picture its
    /// ThumbHash (smooth, low-frequency) is far from, pixel by pixel, yet close to in colour.
    static func quadrants(width: Int, height: Int, colours: [[Int]] = [[220, 40, 40], [40, 200, 60], [40, 70, 220], [230, 210, 40]]) throws -> Bitmap {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let colour = colours[(y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)]
                let detail = (x / 2 + y / 2) % 2 == 0 ? 40 : -40
                pixels += colour.map { UInt8(clamping: $0 + detail) } + [255]
            }
        }
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    /// A probe in a window of its own, mapped, and the size of its view.
    static func startProbe(origin: TestOrigin, display: Xvfb) async throws -> (ChildProcess, width: Int, height: Int) {
        let probe = try GTKProbe.start(origin: origin.baseURL.absoluteString, display: display.name)
        #expect(await probe.waitForLine { $0 == "mapped" } != nil, "\(probe.stderr)")
        let empty = try await WidgetSnapshot.take(from: probe)
        return (probe, empty.width, empty.height)
    }

    /// How far `shot` is from `placeholder` scaled up into the view as GTK draws it.
    static func difference(of shot: WidgetSnapshot, from placeholder: Bitmap) -> (maximum: Int, mean: Double, paintedOutside: Int) {
        shot.difference(from: placeholder, shownIn: shot.shownRect(imageWidth: placeholder.width, imageHeight: placeholder.height))
    }

    @Test("the remembered ThumbHash shows while the origin holds an image decoded before, then the image, cross-faded from it")
    func rememberedPlaceholder() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        let display = try await Xvfb.start()
        defer { display.stop() }
        let (probe, width, height) = try await Self.startProbe(origin: origin, display: display)
        defer { probe.kill() }
        let picture = try Self.quadrants(width: width, height: height)
        origin.register("/photo.png", data: try CoderRegistry.system().encode(ImageContainer(image: picture), as: .png))

        // Never decoded: nothing is remembered, and a bind without a placeholder shows none.
        #expect(await probe.ask("remembered /photo.png", expecting: "remembered") == "remembered /photo.png none")
        #expect(await probe.ask("bind /photo.png noplaceholder", expecting: "bound /photo.png") == "bound /photo.png shown=none spinner=on")
        #expect(await probe.waitForLine { $0.hasPrefix("completed /photo.png") } == "completed /photo.png ok")

        // Decoded once: the manager remembers its ThumbHash, a small blurred picture of it.
        let answer = try #require(await probe.ask("remembered /photo.png", expecting: "remembered"))
        let hash = String(answer.split(separator: " ").last ?? "")
        let placeholder = try ImagePlaceholder.thumbHash(hash).bitmap()
        let ours = try ImagePlaceholder.thumbHash(ThumbHash(encoding: picture).base64).bitmap()
        #expect(placeholder.width == ours.width && placeholder.height == ours.height)
        let agreement = placeholder.meanDifference(from: ours)
        #expect(agreement <= 6, "the remembered hash \(hash) decodes \(agreement) levels away from the picture's own")

        // Out of memory, held at the origin: the view shows the placeholder under its spinner,
        // not the blue a caller's placeholder would be, and far from the picture itself.
        #expect(await probe.ask("clearmemory", expecting: "cleared") == "cleared")
        let gate = origin.gate("/photo.png")
        #expect(await probe.ask("bind /photo.png noplaceholder fadelong", expecting: "bound /photo.png") == "bound /photo.png shown=placeholder spinner=on")
        #expect(await origin.waitForRequests(path: "/photo.png", count: 2))
        let held = try await WidgetSnapshot.take(from: probe)
        let heldMatch = Self.difference(of: held, from: placeholder)
        #expect(heldMatch.maximum <= WebImageViewTests.pixelTolerance, "\(heldMatch)")
        let full = WidgetSnapshot.Rect(x: 0, y: 0, width: Double(width), height: Double(height))
        #expect(held.difference(from: picture, shownIn: full).maximum > 30)

        // Released: the image arrives transparent over the placeholder (an hour-long fade, seen
        // at its start), never over an empty view.
        let seen = probe.stdout.count
        gate.open()
        #expect(await probe.waitForLine(skipping: seen) { $0.hasPrefix("display image") } == "display image opacity=0.00")
        let fading = try await WidgetSnapshot.take(from: probe)
        let fadingMatch = Self.difference(of: fading, from: placeholder)
        #expect(fadingMatch.maximum <= WebImageViewTests.pixelTolerance + 1, "\(fadingMatch)")
        #expect(await probe.waitForLine { $0.hasPrefix("completed /photo.png") } == "completed /photo.png ok")

        // A fade that runs its course ends on exactly the image.
        #expect(await probe.ask("clearmemory", expecting: "cleared") == "cleared")
        let again = probe.stdout.count
        #expect(await probe.ask("bind /photo.png noplaceholder fade", expecting: "bound /photo.png") == "bound /photo.png shown=placeholder spinner=on")
        #expect(await probe.waitForLine(skipping: again) { $0.hasPrefix("completed /photo.png") } == "completed /photo.png ok")
        #expect(await probe.ask("waitopaque", expecting: "opaque") == "opaque")
        let shot = try await WidgetSnapshot.take(from: probe)
        let match = shot.difference(from: picture, shownIn: full)
        #expect(match.maximum <= WebImageViewTests.pixelTolerance, "\(match)")
        probe.send("quit")
        #expect(await probe.waitForExit() == 0)
    }

    @Test("a request's own ThumbHash shows before its image was ever decoded; a caller's placeholder wins over it")
    func requestPlaceholder() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        let display = try await Xvfb.start()
        defer { display.stop() }
        let (probe, width, height) = try await Self.startProbe(origin: origin, display: display)
        defer { probe.kill() }
        let picture = try Self.quadrants(width: width, height: height)
        origin.register("/fresh.png", data: try CoderRegistry.system().encode(ImageContainer(image: picture), as: .png))
        origin.register("/covered.png", data: try CoderRegistry.system().encode(ImageContainer(image: picture), as: .png))
        let gate = origin.gate("/fresh.png")
        _ = origin.gate("/covered.png")
        // The hash of another picture (the quadrants turned around): what the view shows is the
        // request's, not one made from the image.
        let other = try Self.quadrants(width: width, height: height, colours: [[230, 210, 40], [40, 70, 220], [40, 200, 60], [220, 40, 40]])
        let hash = ThumbHash(encoding: other).base64
        let placeholder = try ImagePlaceholder.thumbHash(hash).bitmap()

        #expect(await probe.ask("bind /fresh.png noplaceholder thumbhash=\(hash)", expecting: "bound /fresh.png") == "bound /fresh.png shown=placeholder spinner=on")
        #expect(await origin.waitForRequests(path: "/fresh.png", count: 1))
        let held = try await WidgetSnapshot.take(from: probe)
        let heldMatch = Self.difference(of: held, from: placeholder)
        #expect(heldMatch.maximum <= WebImageViewTests.pixelTolerance, "\(heldMatch)")
        let ownHash = try ImagePlaceholder.thumbHash(ThumbHash(encoding: picture).base64).bitmap()
        #expect(Self.difference(of: held, from: ownHash).maximum > 30)

        gate.open()
        #expect(await probe.waitForLine { $0.hasPrefix("completed /fresh.png") } == "completed /fresh.png ok")
        let shot = try await WidgetSnapshot.take(from: probe)
        let match = shot.difference(from: picture, shownIn: WidgetSnapshot.Rect(x: 0, y: 0, width: Double(width), height: Double(height)))
        #expect(match.maximum <= WebImageViewTests.pixelTolerance, "\(match)")

        // With the caller's placeholder (the probe's blue), the request's hash is not shown.
        #expect(await probe.ask("bind /covered.png thumbhash=\(hash)", expecting: "bound /covered.png") == "bound /covered.png shown=placeholder spinner=on")
        let covered = try await WidgetSnapshot.take(from: probe)
        // A quarter of the way in: clear of the spinner in the middle.
        #expect(covered.rgb(width / 4, height / 4) == [0, 0, 255])
        probe.send("quit")
        #expect(await probe.waitForExit() == 0)
    }
}

extension Bitmap {
    /// The mean absolute difference of R, G, B from `other`, a bitmap of the same size.
    func meanDifference(from other: Bitmap) -> Double {
        var total = 0.0
        for y in 0..<height {
            for x in 0..<width {
                let (mine, theirs) = (rgb(x, y), other.rgb(x, y))
                for channel in 0..<3 { total += abs(mine[channel] - theirs[channel]) }
            }
        }
        return total / Double(max(1, width * height * 3))
    }
}
