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
    .enabled(if: Xvfb.executable != nil, "Xvfb is not installed (make test installs xvfb)"),
    // A view that never shows what a test waits for fails here, at the line that waited.
    .timeLimit(.minutes(2 * Sanitizers.slowdown))
)
struct WebImageViewTests {
    /// A 32×24 PNG of one colour.
    static func solid(_ red: UInt8, _ green: UInt8, _ blue: UInt8) throws -> Data {
        let pixels: [UInt8] = Array(repeating: [red, green, blue, 255] as [UInt8], count: 32 * 24).flatMap { $0 }
        return try CoderRegistry.system().encode(ImageContainer(image: try Bitmap(width: 32, height: 24, pixelFormat: .rgba8, pixels: pixels)), as: .png)
    }

    /// "pixel R G B A" as numbers.
    static func rgb(_ line: String?) -> [Int] {
        Array((line ?? "").split(separator: " ").dropFirst().compactMap { Int($0) }.prefix(3))
    }

    @Test("placeholder while the origin holds the answer, the image after; a re-bind cancels; a memory hit shows at once; destroy cancels")
    func bindingInARealWindow() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/red.png", data: try Self.solid(255, 0, 0))
        origin.register("/green.png", data: try Self.solid(0, 255, 0))
        origin.register("/held.png", data: try Self.solid(255, 255, 0))
        origin.register("/held-too.png", data: try Self.solid(0, 255, 255))
        let redGate = origin.gate("/red.png")
        _ = origin.gate("/held.png")
        _ = origin.gate("/held-too.png")

        let display = try await Xvfb.start()
        defer { display.stop() }
        let probe = try GTKProbe.start(origin: origin.baseURL.absoluteString, display: display.name)
        defer { probe.kill() }
        #expect(await probe.waitForLine { $0 == "mapped" } != nil, "\(probe.stderr)")

        // The placeholder (blue) while the origin holds the response, then the image.
        #expect(await probe.ask("bind /red.png", expecting: "bound /red.png") == "bound /red.png shown=placeholder spinner=on")
        #expect(await origin.waitForRequests(path: "/red.png", count: 1))
        #expect(Self.rgb(await probe.ask("pixel", expecting: "pixel")) == [0, 0, 255])
        redGate.open()
        #expect(await probe.waitForLine { $0.hasPrefix("completed /red.png") } == "completed /red.png ok")
        #expect(Self.rgb(await probe.ask("pixel", expecting: "pixel")) == [255, 0, 0])

        // Bound again while a download is held: that download is cancelled (its connection
        // closes) and only the new image is ever shown.
        _ = await probe.ask("bind /held.png", expecting: "bound /held.png")
        #expect(await origin.waitForRequests(path: "/held.png", count: 1))
        _ = await probe.ask("bind /green.png", expecting: "bound /green.png")
        #expect(await probe.waitForLine { $0.hasPrefix("completed /green.png") } == "completed /green.png ok")
        #expect(await origin.waitForConnectionClose(path: "/held.png"))
        #expect(Self.rgb(await probe.ask("pixel", expecting: "pixel")) == [0, 255, 0])

        // A memory hit is on the view when setImage returns: no placeholder in between.
        #expect(await probe.ask("bind /red.png", expecting: "bound /red.png") == "bound /red.png shown=image spinner=off")
        #expect(Self.rgb(await probe.ask("pixel", expecting: "pixel")) == [255, 0, 0])
        #expect(origin.requestCount(path: "/red.png") == 1)

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
        #expect(!probe.stdout.contains { $0.hasPrefix("completed /progressive.jpg") })
        gate.open()
        #expect(await probe.waitForLine { $0.hasPrefix("completed /progressive.jpg") } == "completed /progressive.jpg ok")
        #expect(probe.stdout.dropFirst(seen).contains { $0.hasPrefix("display image") })
        #expect(await probe.ask("spinner", expecting: "spinner") == "spinner off")

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
