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
    .enabled(if: Xvfb.executable != nil, "Xvfb is not installed (make test installs xvfb)")
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
        #expect(await probe.ask("bind /red.png", expecting: "bound /red.png") == "bound /red.png shown=placeholder")
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
        #expect(await probe.ask("bind /red.png", expecting: "bound /red.png") == "bound /red.png shown=image")
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

/// The probe program, built beside the tests.
enum GTKProbe {
    static let executable: URL? = {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let url = directory.appendingPathComponent("webimage-gtk-probe")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }()

    static func start(origin: String, display: String) throws -> ChildProcess {
        // The cairo renderer: Xvfb has no GL. A session bus is not needed.
        try ChildProcess(try #require(executable), [origin], environment: [
            "DISPLAY": display, "GDK_BACKEND": "x11", "GSK_RENDERER": "cairo", "NO_AT_BRIDGE": "1", "GTK_A11Y": "none",
        ])
    }
}

/// An X server of the test's own (Debian's xvfb), on a display number it picks itself.
struct Xvfb {
    static let executable: URL? = ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"].map(URL.init(fileURLWithPath:))
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    let process: ChildProcess
    /// `:N`, for `DISPLAY`.
    let name: String

    /// Starts Xvfb and returns once it has chosen its display (`-displayfd` writes the number
    /// when the server is ready for clients).
    static func start() async throws -> Xvfb {
        let process = try ChildProcess(try #require(executable), ["-displayfd", "1", "-screen", "0", "640x480x24", "-nolisten", "tcp"])
        let number = try #require(await process.waitForLine { Int($0) != nil }, "Xvfb: \(process.stderr)")
        return Xvfb(process: process, name: ":" + number)
    }

    /// SIGKILL: a process started from the test runner's threads inherits their blocked signal
    /// mask, so Xvfb would never see a SIGTERM; nothing of it needs a graceful end.
    func stop() {
        process.kill(SIGKILL)
    }
}
