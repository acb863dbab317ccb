import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// `WebImageView` in a real GTK 4 window under Xvfb, driven through `webimage-gtk-probe` (GLib's
/// main loop on its main thread, Swift's main actor drained by it, as in an application), over
/// images from a loopback origin. What the window shows is read back from GTK's renderer.
@Suite(
    "WebImageView in a GTK window",
    .enabled(if: GTKProbe.executable != nil, "webimage-gtk-probe was not built beside the tests"),
    .enabled(if: Requirement.met(Xvfb.executable != nil), "Xvfb is not installed (make test installs xvfb)"),
    // A view that never shows what a test waits for fails here, at the line that waited.
    .timeLimit(.minutes(2 * Deadlines.stretch))
)
struct WebImageViewTests {
    /// A 32×24 PNG of one colour.
    static func solid(_ red: UInt8, _ green: UInt8, _ blue: UInt8) throws -> Data {
        let pixels: [UInt8] = Array(repeating: [red, green, blue, 255] as [UInt8], count: 32 * 24).flatMap { $0 }
        return try CoderRegistry.system().encode(ImageContainer(image: try Bitmap(width: 32, height: 24, pixelFormat: .rgba8, pixels: pixels)), as: .png)
    }

    /// A 48×36 image whose every pixel differs from its neighbours: red rises from left to
    /// right (right to left `mirrored`), green from top to bottom, blue falls along the
    /// diagonal. Smooth, so that GTK's bilinear scaling and ours agree to a few levels, and
    /// unlike itself anywhere else, so that a flip, a shift, a wrong scale or another image
    /// differs at most pixels.
    static func gradient(mirrored: Bool = false) throws -> Bitmap {
        let width = 48, height = 36
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let red = (mirrored ? width - 1 - x : x) * 255 / (width - 1), green = y * 255 / (height - 1)
                pixels += [UInt8(red), UInt8(green), UInt8(255 - (red + green) / 2), 255]
            }
        }
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    /// The most a shown pixel may differ from the image resampled to the size shown, per
    /// channel: GTK's renderer (pixman) interpolates with 7-bit weights, ours in floating point.
    static let pixelTolerance = 4

    /// The most a region's mean colour on screen may differ from the same region of the whole
    /// image, per channel, for a progressive preview (its early scans carry the coarse content).
    static let previewTolerance = 16.0

    /// "pixel R G B A" as numbers.
    static func rgb(_ line: String?) -> [Int] {
        Array((line ?? "").split(separator: " ").dropFirst().compactMap { Int($0) }.prefix(3))
    }

    @Test("placeholder while the origin holds the answer, the image after; a re-bind cancels; a memory hit shows at once; destroy cancels")
    func bindingInARealWindow() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        let gradient = try CoderRegistry.system().encode(ImageContainer(image: try Self.gradient()), as: .png)
        origin.register("/gradient.png", data: gradient)
        origin.register("/green.png", data: try Self.solid(0, 255, 0))
        origin.register("/held.png", data: try Self.solid(255, 255, 0))
        origin.register("/held-too.png", data: try Self.solid(0, 255, 255))
        let gradientGate = origin.gate("/gradient.png")
        _ = origin.gate("/held.png")
        _ = origin.gate("/held-too.png")

        let display = try await Xvfb.start()
        defer { display.stop() }
        let probe = try GTKProbe.start(origin: origin.baseURL.absoluteString, display: display.name)
        defer { probe.kill() }
        #expect(await probe.waitForLine { $0 == "mapped" } != nil, "\(probe.stderr)")

        // The placeholder (blue) while the origin holds the response, then exactly the image:
        // the window's pixels against the decoded image scaled to the size shown, pixel by pixel.
        #expect(await probe.ask("bind /gradient.png", expecting: "bound /gradient.png") == "bound /gradient.png shown=placeholder spinner=on")
        #expect(await origin.waitForRequests(path: "/gradient.png", count: 1))
        let placeholderShot = try await WidgetSnapshot.take(from: probe)
        #expect(placeholderShot.rgb(placeholderShot.width / 2, placeholderShot.height / 2) == [0, 0, 255])
        gradientGate.open()
        #expect(await probe.waitForLine { $0.hasPrefix("completed /gradient.png") } == "completed /gradient.png ok")
        let decoded = try CoderRegistry.system().decode(gradient).image
        let shot = try await WidgetSnapshot.take(from: probe)
        let shown = shot.shownRect(imageWidth: decoded.width, imageHeight: decoded.height)
        let match = shot.difference(from: decoded, shownIn: shown)
        #expect(match.maximum <= Self.pixelTolerance && match.paintedOutside == 0, "\(match) in \(shown) of \(shot.width)×\(shot.height)")
        // The comparison tells what the view must never show apart: the placeholder, another
        // image (the same one mirrored), the image scaled wrong (stretched over the widget).
        #expect(placeholderShot.difference(from: decoded, shownIn: shown).maximum > Self.pixelTolerance * 4)
        #expect(shot.difference(from: try Self.gradient(mirrored: true), shownIn: shown).maximum > Self.pixelTolerance * 4)
        let stretched = WidgetSnapshot.Rect(x: 0, y: 0, width: Double(shot.width), height: Double(shot.height))
        #expect(shot.difference(from: decoded, shownIn: stretched).maximum > Self.pixelTolerance * 4)

        // Bound again while a download is held: that download is cancelled (its connection
        // closes) and only the new image is ever shown.
        _ = await probe.ask("bind /held.png", expecting: "bound /held.png")
        #expect(await origin.waitForRequests(path: "/held.png", count: 1))
        _ = await probe.ask("bind /green.png", expecting: "bound /green.png")
        #expect(await probe.waitForLine { $0.hasPrefix("completed /green.png") } == "completed /green.png ok")
        #expect(await origin.waitForConnectionClose(path: "/held.png"))
        #expect(Self.rgb(await probe.ask("pixel", expecting: "pixel")) == [0, 255, 0])

        // A memory hit is on the view when setImage returns: no placeholder in between.
        #expect(await probe.ask("bind /gradient.png", expecting: "bound /gradient.png") == "bound /gradient.png shown=image spinner=off")
        #expect(try await WidgetSnapshot.take(from: probe).difference(from: decoded, shownIn: shown).maximum <= Self.pixelTolerance)
        #expect(origin.requestCount(path: "/gradient.png") == 1)

        // Destroying the window destroys the view's widget, which cancels its download.
        _ = await probe.ask("bind /held-too.png", expecting: "bound /held-too.png")
        #expect(await origin.waitForRequests(path: "/held-too.png", count: 1))
        #expect(await probe.ask("destroy", expecting: "destroyed") != nil)
        #expect(await origin.waitForConnectionClose(path: "/held-too.png"))
        // The cancelled loads end as failures (cancelled), never with an image.
        #expect(!probe.stdout.contains { $0.hasPrefix("completed /held") && $0.hasSuffix(" ok") }, "\(probe.stdout)")
        probe.send("quit")
        #expect(await probe.waitForExit() == 0)
    }
}

extension WebImageViewTests {
    /// A progressive preview while the origin holds the rest of the file, the spinner until the
    /// load ends (in success or failure), a fade that starts transparent and ends opaque, and the
    /// button variant.
    @Test("progressive previews, the spinner, the fade, and WebImageButton")
    func previewsSpinnerFadeAndButton() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        let progressive = try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Demo/images/elephants-1920x1080-progressive.jpg"))
        origin.register("/progressive.jpg", data: progressive)
        origin.register("/green.png", data: try Self.solid(0, 255, 0))
        origin.register("/red.png", data: try Self.solid(255, 0, 0))
        // The first half of the file (its early scans) goes out, then the origin holds.
        let gate = origin.gate("/progressive.jpg", mode: .sendHeadersThenHold(bytes: progressive.count / 2))

        let display = try await Xvfb.start()
        defer { display.stop() }
        let probe = try GTKProbe.start(origin: origin.baseURL.absoluteString, display: display.name)
        defer { probe.kill() }
        #expect(await probe.waitForLine { $0 == "mapped" } != nil, "\(probe.stderr)")

        let seen = probe.stdout.count
        #expect(await probe.ask("bind /progressive.jpg progressive", expecting: "bound /progressive.jpg") == "bound /progressive.jpg shown=placeholder spinner=on")
        #expect(await probe.waitForLine(skipping: seen) { $0.hasPrefix("display preview") } != nil, "\(probe.stdout)")
        #expect(await probe.ask("spinner", expecting: "spinner") == "spinner on")
        // On screen while the origin still holds the rest of the file: the preview. (Compared
        // once the origin has let the rest go: the download times out after 15 s without it.)
        let preview = try await WidgetSnapshot.take(from: probe)
        #expect(!probe.stdout.contains { $0.hasPrefix("completed /progressive.jpg") })
        #expect(gate.heldCount == 1)
        gate.open()
        #expect(await probe.waitForLine { $0.hasPrefix("completed /progressive.jpg") } == "completed /progressive.jpg ok")
        #expect(probe.stdout.dropFirst(seen).contains { $0.hasPrefix("display image") })
        #expect(await probe.ask("spinner", expecting: "spinner") == "spinner off")
        let whole = try await WidgetSnapshot.take(from: probe)

        // The preview is, region by region, close to the whole image's coarse content (the
        // spinner's square left out), as the whole image on screen is; the blue placeholder in
        // its place would be far from it.
        let final = try CoderRegistry.system().decode(progressive).image
        let regions = final.regionMeans(columns: 8, rows: 4)
        let shown = preview.shownRect(imageWidth: final.width, imageHeight: final.height)
        let previewDifference = preview.regionDifference(from: regions, shownIn: shown)
        #expect(!preview.covered.isEmpty && previewDifference <= Self.previewTolerance, "\(previewDifference), covered \(preview.covered)")
        #expect(whole.regionDifference(from: regions, shownIn: shown) <= Self.previewTolerance)
        let placeholder = WidgetSnapshot(
            width: preview.width, height: preview.height,
            rgba: Array(repeating: [0, 0, 255, 255] as [UInt8], count: preview.width * preview.height).flatMap { $0 },
            covered: preview.covered)
        #expect(placeholder.regionDifference(from: regions, shownIn: shown) > Self.previewTolerance * 3)

        // A failed load ends the spinner too.
        _ = await probe.ask("bind /missing.png", expecting: "bound /missing.png")
        #expect(await probe.waitForLine { $0.hasPrefix("completed /missing.png") } == "completed /missing.png failed")
        #expect(await probe.ask("spinner", expecting: "spinner") == "spinner off")

        // The fade: the image arrives fully transparent, and the frames take it to opaque.
        let beforeFade = probe.stdout.count
        _ = await probe.ask("bind /green.png fade", expecting: "bound /green.png")
        #expect(await probe.waitForLine(skipping: beforeFade) { $0.hasPrefix("display image") } == "display image opacity=0.00")
        #expect(await probe.ask("waitopaque", expecting: "opaque") == "opaque")
        #expect(Self.rgb(await probe.ask("pixel", expecting: "pixel")) == [0, 255, 0])

        // The button shows its own image.
        _ = await probe.ask("bindbutton /red.png", expecting: "bound button")
        #expect(await probe.waitForLine { $0.hasPrefix("completed button /red.png") } == "completed button /red.png ok")
        #expect(Self.rgb(await probe.ask("pixel button", expecting: "pixel")) == [255, 0, 0])
        probe.send("quit")
        #expect(await probe.waitForExit() == 0)
    }

    /// Unmapped for a moment (a cell scrolled out and back), the load goes on; unmapped for
    /// longer than the grace period (200 ms here), it is cancelled and its connection closed,
    /// and mapped again, it loads again.
    @Test("a load survives a brief unmap and is cancelled after the grace period")
    func unmappingCancelsAfterTheGracePeriod() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/kept.png", data: try Self.solid(255, 0, 255))
        origin.register("/held.png", data: try Self.solid(255, 255, 0))
        let keptGate = origin.gate("/kept.png")
        let heldGate = origin.gate("/held.png")

        let display = try await Xvfb.start()
        defer { display.stop() }
        let probe = try GTKProbe.start(origin: origin.baseURL.absoluteString, display: display.name, unmappedCancellationMilliseconds: 200)
        defer { probe.kill() }
        #expect(await probe.waitForLine { $0 == "mapped" } != nil, "\(probe.stderr)")

        _ = await probe.ask("bind /kept.png", expecting: "bound /kept.png")
        #expect(await origin.waitForRequests(path: "/kept.png", count: 1))
        #expect(await probe.ask("blink", expecting: "blinked") != nil)
        keptGate.open()
        #expect(await probe.waitForLine { $0.hasPrefix("completed /kept.png") } == "completed /kept.png ok")
        #expect(Self.rgb(await probe.ask("pixel", expecting: "pixel")) == [255, 0, 255])

        _ = await probe.ask("bind /held.png", expecting: "bound /held.png")
        #expect(await origin.waitForRequests(path: "/held.png", count: 1))
        #expect(await probe.ask("hide", expecting: "hidden") != nil)
        #expect(await origin.waitForConnectionClose(path: "/held.png"))
        #expect(await probe.waitForLine { $0.hasPrefix("completed /held.png") } == "completed /held.png failed")
        #expect(await probe.ask("spinner", expecting: "spinner") == "spinner off")

        // Mapped again, the view binds the same URL again: a second request, and the image.
        let seen = probe.stdout.count
        #expect(await probe.ask("show", expecting: "visible") != nil)
        #expect(await origin.waitForRequests(path: "/held.png", count: 2))
        heldGate.open()
        #expect(await probe.waitForLine(skipping: seen) { $0.hasPrefix("completed /held.png") } == "completed /held.png ok")
        #expect(Self.rgb(await probe.ask("pixel", expecting: "pixel")) == [255, 255, 0])
        probe.send("quit")
        #expect(await probe.waitForExit() == 0)
    }
}

extension WebImageViewTests {
    /// Three 32×24 frames, red, green and blue, 150 ms each, looping for ever.
    static func animatedGIF() throws -> Data {
        let colours: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]]
        let frames = try colours.map { colour in
            AnimatedImage.Frame(bitmap: try Bitmap(width: 32, height: 24, pixelFormat: .rgba8, pixels: Array(Array(repeating: colour, count: 32 * 24).joined())), duration: .milliseconds(150))
        }
        let animation = AnimatedImage(frames: frames, loopCount: 0)
        return try CoderRegistry.system().encode(ImageContainer(image: frames[0].bitmap, animation: animation), as: .gif)
    }

    /// The next `count` "frame N" lines after line `seen`, waiting for them.
    static func frameLines(of probe: ChildProcess, after seen: Int, count: Int) async -> [String] {
        var skip = seen, lines: [String] = []
        while lines.count < count, let line = await probe.waitForLine(skipping: skip, where: { $0.hasPrefix("frame ") }) {
            lines.append(line)
            skip = (probe.stdout.indices.dropFirst(skip).first { probe.stdout[$0].hasPrefix("frame ") } ?? skip) + 1
        }
        return lines
    }

    @Test("an animated GIF plays in the view: frame order, pause, stopped while hidden, frames from the bytes within the memory limit")
    func animationPlays() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        let gif = try Self.animatedGIF()
        origin.register("/anim.gif", data: gif)
        origin.register("/streamed.gif", data: gif)

        let display = try await Xvfb.start()
        defer { display.stop() }
        let probe = try GTKProbe.start(origin: origin.baseURL.absoluteString, display: display.name)
        defer { probe.kill() }
        #expect(await probe.waitForLine { $0 == "mapped" } != nil, "\(probe.stderr)")
        #expect(await probe.ask("watchframes", expecting: "watching") == "watching")

        // Decoded in full: the frames play in order, and the second play starts over.
        var seen = probe.stdout.count
        _ = await probe.ask("bind /anim.gif", expecting: "bound /anim.gif")
        #expect(await probe.waitForLine { $0.hasPrefix("completed /anim.gif") } == "completed /anim.gif ok")
        let played = await Self.frameLines(of: probe, after: seen, count: 4)
        #expect(played == ["frame 0", "frame 1", "frame 2", "frame 0"])

        // Paused, the frame on screen is the one the player says.
        let paused = try #require(await probe.ask("pause", expecting: "paused"))
        let index = try #require(Int(paused.dropFirst("paused ".count)))
        let colours = [[255, 0, 0], [0, 255, 0], [0, 0, 255]]
        #expect(Self.rgb(await probe.ask("pixel", expecting: "pixel")) == colours[index])
        #expect(await probe.ask("resume", expecting: "resumed") == "resumed")

        // Hidden, the player keeps only the frame on screen; shown again, it plays on.
        #expect(await probe.ask("hide", expecting: "hidden") != nil)
        #expect(await probe.ask("anim", expecting: "anim")?.contains(" buffered=\(32 * 24 * 4) ") == true)
        seen = probe.stdout.count
        #expect(await probe.ask("show", expecting: "visible") != nil)
        #expect(await Self.frameLines(of: probe, after: seen, count: 2).count == 2)

        // Decoded first frame only: the view plays the rest from the bytes, holding at most
        // two frames when its limit is smaller than that.
        #expect(await probe.ask("memlimit 1", expecting: "memlimit") == "memlimit 1")
        seen = probe.stdout.count
        _ = await probe.ask("bind /streamed.gif firstframe", expecting: "bound /streamed.gif")
        // Frames that the previous animation showed before the bind (its lines can arrive after
        // `seen` was counted) are not this one's: count from the bind's answer.
        seen = (probe.stdout.lastIndex { $0.hasPrefix("bound /streamed.gif") } ?? seen - 1) + 1
        #expect(await probe.waitForLine { $0.hasPrefix("completed /streamed.gif") } == "completed /streamed.gif ok")
        let streamed = await Self.frameLines(of: probe, after: seen, count: 4)
        #expect(streamed == ["frame 0", "frame 1", "frame 2", "frame 0"], "\(probe.stdout.suffix(12))")
        let anim = try #require(await probe.ask("anim", expecting: "anim"))
        let peak = anim.split(separator: " ").first { $0.hasPrefix("peak=") }.flatMap { Int($0.dropFirst(5)) }
        #expect(peak.map { $0 > 0 && $0 <= 2 * 32 * 24 * 4 } == true, "\(anim)")
        probe.send("quit")
        #expect(await probe.waitForExit() == 0)
    }
}

extension WebImageViewTests {
    /// The numbers of a "pressure" answer: `before=1 after=2 … cache=3->4` as a dictionary,
    /// the cache's two costs as `cacheBefore` and `cacheAfter`.
    static func pressureFields(_ line: String?) -> [String: Int] {
        var fields: [String: Int] = [:]
        for word in (line ?? "").split(separator: " ").dropFirst() {
            let pair = word.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "cache" {
                let costs = pair[1].components(separatedBy: "->").compactMap { Int($0) }
                fields["cacheBefore"] = costs.first
                fields["cacheAfter"] = costs.count == 2 ? costs[1] : nil
            } else {
                fields[pair[0]] = Int(pair[1])
            }
        }
        return fields
    }

    /// GIO's memory monitor warns: the view's player keeps only the frame on screen (and decodes
    /// ahead again afterwards), and the memory cache sheds half its cost at the low level, all of
    /// it at the critical one. The warning is the real `low-memory-warning` signal on GIO's
    /// default monitor, emitted by the probe: the kernel's memory pressure, which makes the
    /// monitor emit it, cannot be produced in a test.
    @Test("a low-memory warning from GIO's memory monitor trims the view's animation player and the memory cache")
    func memoryWarningTrims() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/anim.gif", data: try Self.animatedGIF())
        let solids = ["/red.png": try Self.solid(255, 0, 0), "/green.png": try Self.solid(0, 255, 0), "/yellow.png": try Self.solid(255, 255, 0), "/cyan.png": try Self.solid(0, 255, 255)]
        for (path, data) in solids { origin.register(path, data: data) }

        let display = try await Xvfb.start()
        defer { display.stop() }
        let probe = try GTKProbe.start(origin: origin.baseURL.absoluteString, display: display.name)
        defer { probe.kill() }
        #expect(await probe.waitForLine { $0 == "mapped" } != nil, "\(probe.stderr)")
        #expect(await probe.ask("pressure low", expecting: "pressure") == "pressure none")

        // Four stills, then the animation, which takes less than half of the memory cache's
        // cost: the low level keeps it and evicts the stills, the critical level evicts all.
        for path in ["/red.png", "/green.png", "/yellow.png", "/cyan.png", "/anim.gif"] {
            _ = await probe.ask("bind \(path)", expecting: "bound \(path)")
            #expect(await probe.waitForLine { $0.hasPrefix("completed \(path)") } == "completed \(path) ok")
        }
        let low = Self.pressureFields(await probe.ask("pressure low", expecting: "pressure"))
        let frame = try #require(low["frame"])
        #expect(frame == 32 * 24 * 4)
        #expect(low["before"].map { $0 > frame } == true, "\(low)")
        #expect(low["after"] == frame, "\(low)")
        #expect(low["refilled"].map { $0 > frame } == true, "\(low)")
        let cacheBefore = try #require(low["cacheBefore"]), cacheAfter = try #require(low["cacheAfter"])
        #expect(cacheAfter > 0 && cacheAfter <= cacheBefore / 2, "\(low)")

        let critical = Self.pressureFields(await probe.ask("pressure critical", expecting: "pressure"))
        #expect(critical["before"].map { $0 > frame } == true, "\(critical)")
        #expect(critical["after"] == frame, "\(critical)")
        #expect(critical["cacheAfter"] == 0, "\(critical)")
        probe.send("quit")
        #expect(await probe.waitForExit() == 0)
    }
}
