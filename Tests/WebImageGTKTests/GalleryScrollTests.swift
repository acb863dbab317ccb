import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The gallery (`webimage-gtk --automation`) in a real window under Xvfb, scrolled over a grid
/// whose every URL is an image of its own solid colour, served by a loopback origin that paces
/// its bodies (so that cells are recycled while their downloads run). At every step the gallery
/// reads the window back and samples each bound cell on screen: a cell must show its own item's
/// colour or the placeholder's, never another item's.
@Suite(
    "The gallery's grid under a scripted scroll",
    .enabled(if: GalleryProgram.executable != nil, "webimage-gtk was not built beside the tests"),
    // Under a sanitizer the gallery (built with it) decodes hundreds of images for minutes on
    // both cores and starved the rest of the suite past its deadlines (CI, 2026-11-25); its
    // subject is the view layer's rules, which the normal suite checks.
    .disabled(if: Sanitizers.reservesShadowMemory, "too heavy under a sanitizer: runs in the normal suite"),
    .enabled(if: Requirement.met(Xvfb.executable != nil), "Xvfb is not installed (make test installs xvfb)"),
    // A broken binding can leave a cell loading forever, and `settle` waiting for it.
    .timeLimit(.minutes(2 * Deadlines.stretch))
)
struct GalleryScrollTests {
    /// Well beyond the cells GTK 4.8 keeps alive (about 30 rows × max-columns, 300 here), so
    /// that the scroll recycles them.
    static let imageCount = 900

    @Test("every sampled cell shows its own URL's colour or the placeholder, scrolling down and back up")
    func scrolledCellsShowTheirOwnImages() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        let colours = SolidColours.palette(count: Self.imageCount)
        var lines: [String] = []
        for (index, colour) in colours.enumerated() {
            origin.register("/c/\(index).png", data: try CoderRegistry.system().encode(ImageContainer(image: SolidColours.bitmap(colour, size: 48)), as: .png))
            // 40-byte chunks 4 ms apart: a few tens of milliseconds a thumbnail, long enough for
            // the scroll to recycle cells whose downloads are running.
            lines.append(origin.url("/slow/c/\(index).png?chunk=40&delayMs=4").absoluteString)
        }
        let list = try GalleryProgram.writeList(lines)
        defer { try? FileManager.default.removeItem(at: list) }

        let display = try await Xvfb.start()
        defer { display.stop() }
        let gallery = try GalleryProgram.start(list.path, display: display.name, size: "640x480", cell: 64)
        defer { gallery.kill() }
        let ready = try #require(await gallery.waitForLine { $0.hasPrefix("ready ") }, "\(gallery.stderr)")
        let layout = GalleryProgram.fields(ready)
        let placeholder = try #require(layout["placeholder"])
        let rowHeight = try #require(layout["rowheight"].flatMap(Double.init)), upper = try #require(layout["upper"].flatMap(Double.init))
        let page = try #require(layout["page"].flatMap(Double.init))
        #expect(rowHeight > 0 && upper > page * 2, "\(ready)")

        // Down in steps of 1.3 rows (cells half in, half out), then back up three rows at a
        // time, through memory hits and recycled cells.
        let end = upper - page
        let down = Array(stride(from: 0, through: end, by: rowHeight * 1.3)) + [end]
        let up = Array(stride(from: end, through: 0, by: -rowHeight * 3)) + [0]
        var tally = Tally()
        for offset in down + up {
            let frame = try #require(await gallery.ask("scroll \(Int(offset))", expecting: "frame "))
            tally.check(frame, colours: colours, placeholder: placeholder)
        }
        #expect(tally.wrong.isEmpty, "cells showing another item's colour: \(tally.wrong.prefix(10))")
        // The benchmark saw this a few times in some 35,000 samples: two cells of a row entering at
        // the bottom edge drawn as background for one frame. Not a stale image; tracked here
        // rather than failing the suite at random.
        withKnownIssue("a cell bound during a frame's layout can be left undrawn in that frame (GTK 4.8)", isIntermittent: true) {
            #expect(tally.blank.isEmpty, "cells showing nothing: \(tally.blank.prefix(10))")
        }
        #expect(tally.frames == down.count + up.count)
        #expect(tally.samples >= tally.frames * 8, "too few cells sampled: \(tally.samples) in \(tally.frames) frames")
        #expect(tally.own > 0 && tally.placeholders > 0, "own \(tally.own), placeholders \(tally.placeholders): the scroll should have seen both")
        // Cells were recycled: unbound from an item, bound to another.
        let cells = try #require(layout["cells"].flatMap(Int.init))
        #expect(cells < Self.imageCount && gallery.stdout.count { $0.hasPrefix("unbound ") } > Self.imageCount / 2, "\(cells) cells")

        // Once the downloads on screen are done, every cell there shows its own image.
        #expect(await gallery.ask("settle", expecting: "settled") != nil)
        var settled = Tally()
        settled.check(try #require(await gallery.ask("scroll 0", expecting: "frame ")), colours: colours, placeholder: placeholder)
        #expect(settled.samples > 0 && settled.own == settled.samples, "\(settled) \(settled.blank)")
        #expect(!gallery.stdout.contains { $0.hasPrefix("stale ") }, "\(gallery.stdout.filter { $0.hasPrefix("stale ") }.prefix(5))")
        // It ends when told (its outputs close). Not `waitForExit()`, which can miss the exit of a
        // process launched from another thread of the pool (see GallerySourceTests.list).
        gallery.send("quit")
        #expect(await gallery.waitForLine { _ in false } == nil)
        #expect(!gallery.stderr.contains { $0.contains("CRITICAL") || $0.contains("Fatal error") }, "\(gallery.stderr.suffix(20))")
    }

    /// What the samples of a run showed.
    struct Tally: CustomStringConvertible {
        var frames = 0, samples = 0, own = 0, placeholders = 0
        /// Samples of another item's colour (or unreadable ones).
        var wrong: [String] = []
        /// Samples of no item's colour and not the placeholder's: the grid's background.
        var blank: [String] = []

        /// Checks one "frame Y POSITION:RRGGBB …" line.
        mutating func check(_ frame: String, colours: [SolidColours.RGB], placeholder: String) {
            frames += 1
            for sample in frame.split(separator: " ").dropFirst(2) {
                let parts = sample.split(separator: ":")
                guard parts.count == 2, let position = Int(parts[0]), colours.indices.contains(position),
                      let shown = SolidColours.RGB(hex: String(parts[1])) else {
                    wrong.append("unreadable sample \(sample) in \(frame.prefix(40))")
                    continue
                }
                samples += 1
                if shown.isClose(to: colours[position]) {
                    own += 1
                } else if shown.isClose(to: SolidColours.RGB(hex: placeholder)!) {
                    placeholders += 1
                } else if let other = colours.firstIndex(where: { shown.isClose(to: $0) }) {
                    wrong.append("cell \(position) shows \(parts[1]), item \(other)'s colour, at scroll \(frame.split(separator: " ")[1])")
                } else {
                    blank.append("cell \(position) shows \(parts[1]) at scroll \(frame.split(separator: " ")[1])")
                }
            }
        }

        var description: String { "frames \(frames), samples \(samples), own \(own), placeholders \(placeholders)" }
    }
}

/// The gallery program, built beside the tests.
enum GalleryProgram {
    static let executable: URL? = {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let url = directory.appendingPathComponent("webimage-gtk")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }()

    /// The gallery in automation mode, memory caches only (every run downloads).
    static func start(_ source: String, display: String, size: String, cell: Int) throws -> ChildProcess {
        // The cairo renderer: Xvfb has no GL. A session bus is not needed.
        try ChildProcess(try #require(executable), [source, "--automation", "--no-disk-cache", "--size", size, "--cell", String(cell)], environment: [
            "DISPLAY": display, "GDK_BACKEND": "x11", "GSK_RENDERER": "cairo", "NO_AT_BRIDGE": "1", "GTK_A11Y": "none",
        ])
    }

    /// A URL list file in a fresh temporary folder.
    static func writeList(_ lines: [String]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-gallery-\(UUID().uuidString).txt")
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// The `key=value` words of a line.
    static func fields(_ line: String) -> [String: String] {
        Dictionary(line.split(separator: " ").compactMap { word -> (String, String)? in
            let parts = word.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { $1 })
    }
}
