import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The gallery's detail page in a real window under Xvfb: opening a thumbnail shows that
/// item's full image (its own URL, not the thumbnail's), and going back leaves the grid as it was.
@Suite(
    "The gallery's detail page",
    .enabled(if: GalleryProgram.executable != nil, "webimage-gtk was not built beside the tests"),
    // Under a sanitizer the gallery (built with it) decodes hundreds of images for minutes on
    // both cores and starved the rest of the suite past its deadlines (CI, 2026-11-25); its
    // subject is the view layer's rules, which the normal suite checks.
    .disabled(if: Sanitizers.reservesShadowMemory, "too heavy under a sanitizer: runs in the normal suite"),
    .enabled(if: Requirement.met(Xvfb.executable != nil), "Xvfb is not installed (make test installs xvfb)"),
    .timeLimit(.minutes(2 * Deadlines.stretch))
)
struct GalleryDetailTests {
    @Test("open shows the item's full image; back shows the grid again")
    func openAndBack() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        let colours = SolidColours.palette(count: 24)
        // A list file names one URL for both thumbnail and full image; the detail page loads it
        // through its own pipeline, at full size.
        var lines: [String] = []
        for (index, colour) in colours.enumerated() {
            origin.register("/c/\(index).png", data: try CoderRegistry.system().encode(ImageContainer(image: SolidColours.bitmap(colour, size: 300)), as: .png))
            lines.append(origin.url("/c/\(index).png").absoluteString)
        }
        let list = try GalleryProgram.writeList(lines)
        defer { try? FileManager.default.removeItem(at: list) }

        let display = try await Xvfb.start()
        defer { display.stop() }
        let gallery = try GalleryProgram.start(list.path, display: display.name, size: "640x480", cell: 64)
        defer { gallery.kill() }
        #expect(await gallery.waitForLine { $0.hasPrefix("ready ") } != nil, "\(gallery.stderr)")
        #expect(await gallery.ask("settle", expecting: "settled") != nil)

        for position in [5, 17] {
            let line = try #require(await gallery.ask("open \(position)", expecting: "detail \(position)"))
            let shown = try #require(SolidColours.RGB(hex: String(line.split(separator: " ").last ?? "")), "\(line)")
            #expect(shown.isClose(to: colours[position]), "detail \(position) shows \(shown), not \(colours[position])")
            #expect(await gallery.ask("back", expecting: "grid") == "grid")
        }
        // Each opened item was loaded twice: its thumbnail, then the full image through the
        // detail page's own pipeline (no disk cache here to share the bytes).
        #expect(origin.requestCount(path: "/c/5.png") == 2 && origin.requestCount(path: "/c/17.png") == 2)
        #expect(origin.requestCount(path: "/c/6.png") == 1)
        let frame = try #require(await gallery.ask("scroll 0", expecting: "frame "))
        var tally = GalleryScrollTests.Tally()
        tally.check(frame, colours: colours, placeholder: "808080")
        #expect(tally.samples > 0 && tally.own == tally.samples, "\(tally)")
        gallery.send("quit")
        #expect(await gallery.waitForLine { _ in false } == nil)
    }
}
