import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// Debian's Chromium, which `make test` installs (scripts/deps.sh): the browser of the gallery's test.
enum Chromium {
    static let executable: URL? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(URL.init(fileURLWithPath:))
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    /// scripts/gallery-browser.py, which drives it.
    static let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/gallery-browser.py")
}

/// The gallery of `webimage serve` (the page `make run` ends on) in headless Chromium: before
/// any thumbnail has arrived, each cell already shows its image's placeholder, the ThumbHash
/// drawn from the PNG data URL the page inlines; then the thumbnails.
///
/// The thumbnails' requests are held in the browser itself (the DevTools protocol's Fetch
/// domain, driven by scripts/gallery-browser.py), so the first screenshot is the page before
/// any of them was answered, whatever the timing. The proxy's cache starts empty: the page's
/// hashes are the ones it computes for sources it never decoded.
@Suite(
    "The proxy's gallery in headless Chromium",
    .enabled(if: WebImageExecutable.url != nil),
    .enabled(if: Requirement.met(Chromium.executable != nil), "chromium is not installed (make test installs it)"),
    .timeLimit(.minutes(2 * Deadlines.stretch))
)
struct GalleryBrowserTests {
    /// What scripts/gallery-browser.py wrote of one `<img>`.
    struct Cell: Decodable {
        var alt: String
        var x, y, width, height: Double
        var thumbHash: String?
        var background: String
    }

    /// 240 px squares of four strong colours, each in its own order, under a 4 px checker of ±50
    /// (detail a placeholder has none of, coarse enough for a lossy thumbnail to keep).
    static let pictures: [String: [[Int]]] = [
        "a.png": [[220, 40, 40], [40, 200, 60], [40, 70, 220], [230, 210, 40]],
        "b.png": [[40, 200, 60], [220, 40, 40], [230, 210, 40], [40, 70, 220]],
        "c.png": [[40, 70, 220], [230, 210, 40], [220, 40, 40], [40, 200, 60]],
    ]

    static func picture(_ colours: [[Int]]) throws -> Bitmap {
        var pixels: [UInt8] = []
        for y in 0..<240 {
            for x in 0..<240 {
                let detail = (x / 4 + y / 4) % 2 == 0 ? 50 : -50
                pixels += colours[(y < 120 ? 0 : 2) + (x < 120 ? 0 : 1)].map { UInt8(clamping: $0 + detail) } + [255]
            }
        }
        return try Bitmap(width: 240, height: 240, pixelFormat: .rgba8, pixels: pixels)
    }

    @Test("every cell shows its image's ThumbHash while the thumbnails are held, then the thumbnail")
    func placeholdersBeforeThumbnails() async throws {
        let folder = TemporaryDirectory("gallery-browser-origin"), cache = TemporaryDirectory("gallery-browser-cache")
        let shots = TemporaryDirectory("gallery-browser-shots")
        defer { [folder, cache, shots].forEach { $0.remove() } }
        var pictures: [String: Bitmap] = [:]
        for (name, colours) in Self.pictures {
            pictures[name] = try Self.picture(colours)
            try CoderRegistry.system().encode(ImageContainer(image: pictures[name]!), as: .png).write(to: folder.url.appendingPathComponent(name))
        }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--origin-dir", folder.path, "--cache-dir", cache.path, "--log-level", "warning",
        ])
        defer { server.terminate() }
        let port = try await server.port()

        let run = try CommandRun(URL(fileURLWithPath: "/usr/bin/env"), [
            "python3", Chromium.driver.path, try #require(Chromium.executable).path, "http://127.0.0.1:\(port)/", shots.path, String(pictures.count),
        ])
        #expect(run.status == 0 && run.stdout == "loaded 3/3\n", "\(run.stdout) \(run.stderr)")
        let cells = try JSONDecoder().decode([Cell].self, from: try Data(contentsOf: shots.url.appendingPathComponent("cells.json")))
        let held = try CoderRegistry.system().decode(try Data(contentsOf: shots.url.appendingPathComponent("held.png"))).image
        let loaded = try CoderRegistry.system().decode(try Data(contentsOf: shots.url.appendingPathComponent("loaded.png"))).image
        #expect(Set(cells.map(\.alt)) == Set(pictures.keys))

        for cell in cells {
            let picture = try #require(pictures[cell.alt])
            let drawn = try Self.placeholder(of: cell)
            let box = ScreenBox(cell)
            // Held: the cell is the placeholder as the page draws it (covering the square cell),
            // to the browser's rounding; it is this image's placeholder, not another's.
            let shown = box.difference(of: held, from: drawn)
            #expect(shown.regions <= 3 && shown.maximum <= 8, "\(cell.alt) while held: \(shown)")
            let ownDistance = box.regionMeans(of: drawn).distance(to: box.regionMeans(of: picture))
            for (other, otherPicture) in pictures where other != cell.alt {
                #expect(ownDistance < box.regionMeans(of: drawn).distance(to: box.regionMeans(of: otherPicture)), "\(cell.alt)'s placeholder looks like \(other)")
            }
            // Loaded: the thumbnail, region by region, and its detail, which no placeholder has.
            let thumbnail = box.regionMeans(in: loaded).distance(to: box.regionMeans(of: picture))
            #expect(thumbnail <= 16, "\(cell.alt) once loaded is \(thumbnail) from the picture")
            #expect(box.sharpness(in: loaded) > 4 * box.sharpness(in: held), "\(cell.alt): \(box.sharpness(in: loaded)) loaded, \(box.sharpness(in: held)) held")
        }
    }

    /// The placeholder `cell` inlines: its data URL's PNG, which must be the page's ThumbHash
    /// decoded at 32 px, pixel for pixel.
    static func placeholder(of cell: Cell) throws -> Bitmap {
        let hash = try #require(cell.thumbHash, "\(cell.alt) has no data-thumbhash")
        let start = try #require(cell.background.range(of: "data:image/png;base64,"), "\(cell.alt): \(cell.background.prefix(80))")
        let encoded = cell.background[start.upperBound...].prefix { $0 != "\"" && $0 != ")" }
        let png = try #require(Data(base64Encoded: String(encoded)))
        #expect(png.count < 4096, "\(cell.alt)'s placeholder is \(png.count) bytes")
        let drawn = try CoderRegistry.system().decode(png).image
        let decoded = try ImagePlaceholder.thumbHash(hash).bitmap()
        #expect(drawn.width == decoded.width && drawn.height == decoded.height && drawn.pixels == decoded.pixels)
        return drawn
    }
}

/// A cell on the screenshot: its rectangle (CSS pixels are screenshot pixels), read 10 % in from
/// its edges (clear of the rounded corners), in a 3 × 3 grid of regions.
struct ScreenBox {
    var x, y, width, height: Double

    init(_ cell: GalleryBrowserTests.Cell) {
        x = cell.x
        y = cell.y
        width = cell.width
        height = cell.height
    }

    /// The screenshot pixels read, by region (0...8).
    func pixels() -> [(x: Int, y: Int, region: Int)] {
        var pixels: [(x: Int, y: Int, region: Int)] = []
        for py in Int((y + height * 0.1).rounded(.up))..<Int(y + height * 0.9) {
            for px in Int((x + width * 0.1).rounded(.up))..<Int(x + width * 0.9) {
                let column = min(2, Int((Double(px) + 0.5 - x - width * 0.1) / (width * 0.8) * 3))
                let row = min(2, Int((Double(py) + 0.5 - y - height * 0.1) / (height * 0.8) * 3))
                pixels.append((px, py, row * 3 + column))
            }
        }
        return pixels
    }

    /// `image` as CSS `background-size: cover` (and an `<img>` of `object-fit: cover`) draws it in
    /// the box: scaled to cover it, centred, resampled bilinearly; at the screenshot pixel (`px`, `py`).
    func covering(_ image: Bitmap, _ px: Int, _ py: Int) -> [Double] {
        let scale = max(width / Double(image.width), height / Double(image.height))
        let left = x + (width - Double(image.width) * scale) / 2, top = y + (height - Double(image.height) * scale) / 2
        return image.bilinear((Double(px) + 0.5 - left) / scale - 0.5, (Double(py) + 0.5 - top) / scale - 0.5)
    }

    /// The largest difference of a region's mean, and of a pixel, between `screenshot` and
    /// `image` drawn in the box.
    func difference(of screenshot: Bitmap, from image: Bitmap) -> (regions: Double, maximum: Double) {
        var sums = [[Double]](repeating: [0, 0, 0, 0], count: 9), maximum = 0.0
        for (px, py, region) in pixels() {
            let (shown, expected) = (screenshot.rgb(px, py), covering(image, px, py))
            for channel in 0..<3 {
                sums[region][channel] += shown[channel] - expected[channel]
                maximum = max(maximum, abs(shown[channel] - expected[channel]))
            }
            sums[region][3] += 1
        }
        return (sums.map { sum in (0..<3).map { abs(sum[$0]) / max(1, sum[3]) }.max()! }.max()!, maximum)
    }

    /// The mean colour of each region of the screenshot.
    func regionMeans(in screenshot: Bitmap) -> RegionColours {
        RegionColours(pixels().map { ($0.region, screenshot.rgb($0.x, $0.y)) })
    }

    /// The mean colour of each region of `image` drawn in the box.
    func regionMeans(of image: Bitmap) -> RegionColours {
        RegionColours(pixels().map { ($0.region, covering(image, $0.x, $0.y)) })
    }

    /// The mean absolute Laplacian (4 × a pixel − its four neighbours) of the screenshot in the
    /// box: detail, which a placeholder has none of.
    func sharpness(in screenshot: Bitmap) -> Double {
        var total = 0.0, count = 0
        let inner = pixels().filter { $0.x > Int(x + width * 0.1) + 1 && $0.y > Int(y + height * 0.1) + 1 && $0.x < Int(x + width * 0.9) - 1 && $0.y < Int(y + height * 0.9) - 1 }
        for (px, py, _) in inner {
            let neighbours = [screenshot.rgb(px - 1, py), screenshot.rgb(px + 1, py), screenshot.rgb(px, py - 1), screenshot.rgb(px, py + 1)]
            let centre = screenshot.rgb(px, py)
            for channel in 0..<3 { total += abs(4 * centre[channel] - neighbours.reduce(0) { $0 + $1[channel] }) }
            count += 3
        }
        return total / Double(max(1, count))
    }
}

/// Mean colours of the 3 × 3 regions of a box.
struct RegionColours {
    var means: [[Double]]

    init(_ samples: [(region: Int, colour: [Double])]) {
        var sums = [[Double]](repeating: [0, 0, 0, 0], count: 9)
        for (region, colour) in samples {
            for channel in 0..<3 { sums[region][channel] += colour[channel] }
            sums[region][3] += 1
        }
        means = sums.map { sum in (0..<3).map { sum[$0] / max(1, sum[3]) } }
    }

    /// The largest difference of a region's mean from `other`'s, on any channel.
    func distance(to other: RegionColours) -> Double {
        zip(means, other.means).map { mine, theirs in (0..<3).map { abs(mine[$0] - theirs[$0]) }.max()! }.max()!
    }
}
