import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Whether `import thumbor` works: without it the side-by-side suite shows as skipped, not passed.
enum ThumborInstallation {
    static let isInstalled = (try? CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import thumbor"]).status == 0) ?? false
}

/// The real thumbor 7 (from PyPI; scripts/deps.sh installs it), on loopback with its file loader
/// on a copy of Demo/images, beside the proxy with its origin folder there too: the same unsafe
/// URLs must answer with the same status, format, size and pixels (within stated bounds) from both.
///
/// Not under a sanitizer: comparing some 60 filtered full-size photos with thumbor's took the
/// ASan suite's two cores for minutes (thumbor itself and our processors under ASan, some 20
/// times slower), and tests with time limits starved beside it (seven failed in CI). These tests
/// check what the pixels are; the processors' memory safety is checked under ASan by the
/// dialects' own suites (every filter on every pixel format, `ThumborEffectTests`).
///
/// Not serialized: one after the other, these tests were the suite's longest chain (266 s of a
/// 267 s run, where every other test had ended by 116 s). Ten thumbors and proxies at once on two
/// cores once left tests waiting past 60 s deadlines, so every request here has three minutes.
@Suite(
    .enabled(if: Requirement.met(ThumborInstallation.isInstalled), "thumbor is not installed (pip install thumbor, or scripts/deps.sh)"),
    .disabled(if: Sanitizers.reservesShadowMemory, "too heavy under a sanitizer: runs in the normal suite"))
struct ThumborSideBySideTests {

    static let options = [
        "300x200", "fit-in/300x200", "adaptive-fit-in/200x300", "full-fit-in/300x200", "adaptive-full-fit-in/200x300",
        "-300x-200", "-x-", "300x300/left/top", "300x300/right/bottom/smart", "100x100:500x400/200x0", "100x100:500x400",
        "0x100", "fit-in/3000x3000", "3000x100", "400x400/filters:no_upscale()", "origx100",
        "fit-in/400x400/filters:format(webp):quality(40)", "fit-in/400x400/filters:rotate(90)", "200x200/filters:stretch()",
        "fit-in/200x200/filters:grayscale():format(png)", "5000x5000:6000x6000/100x100", "100x0/filters:proportion(0.5)",
        "fit-in/300x300/filters:blur(4)", "300x200/filters:blur(12,3)", "fit-in/960x960/filters:upscale()",
        "trim/fit-in/300x300", "trim:bottom-right:30/200x200", "fit-in/400x400/filters:max_bytes(12000)",
    ]
    static let images = ["elephants-1920x1080-progressive.jpg", "Spring.png", "hopper_orientation_6.jpg", "flower.webp"]

    /// The two images the option set at `index` of ``options`` is tried on: neighbours in
    /// ``images``, turn by turn, so that every set meets two kinds of source and every source
    /// half of the sets. All four for every set took the suite's longest test 82 s of a core
    /// and a half (mostly the debug build's full-size resampling of the two large sources),
    /// which CI's 30 minutes could not spare.
    static func images(for index: Int) -> [String] {
        [images[index % images.count], images[(index + 1) % images.count]]
    }

    /// A socket listening on 127.0.0.1 at a free port. thumbor gets it as its standard input
    /// (`--fd 0`): connections wait in its backlog until thumbor accepts them, so nothing waits
    /// for thumbor to be ready.
    static func listeningSocket() -> (descriptor: Int32, port: Int)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 128) == 0 else {
            close(fd)
            return nil
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// thumbor serving `root` on the socket (the suite runs only when thumbor is installed).
    static func startThumbor(in folder: TemporaryDirectory, root: URL) throws -> (process: SpawnedProcess, port: Int) {
        let configuration = folder.url.appendingPathComponent("thumbor.conf")
        try """
        LOADER = 'thumbor.loaders.file_loader'
        FILE_LOADER_ROOT_PATH = '\(root.path)'
        ALLOW_UNSAFE_URL = True
        RESPECT_ORIENTATION = True
        NON_BLOCKING_SOCKETS = True
        STORAGE = 'thumbor.storages.no_storage'
        RESULT_STORAGE = 'thumbor.result_storages.no_storage'
        """.write(to: configuration, atomically: true, encoding: .utf8)
        guard let (descriptor, port) = listeningSocket() else { throw CancellationError() }
        defer { close(descriptor) }
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["thumbor", "--fd", "0", "-c", configuration.path]
        process.standardInput = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        // Its log, for a failure's message.
        let log = folder.url.appendingPathComponent("thumbor.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        defer { try? logHandle.close() }
        process.standardOutput = logHandle
        process.standardError = logHandle
        try process.run()
        return (process, port)
    }

    /// Status, sniffed format and decoded size of one answer.
    static func summary(_ status: Int, _ body: Data) -> String {
        guard status == 200 else { return "\(status)" }
        guard let container = try? CoderRegistry.system().decode(body) else { return "200 undecodable" }
        return "200 \(ImageFormat(sniffing: body).map { "\($0)" } ?? "?") \(container.image.width)x\(container.image.height)"
    }

    /// thumbor and the proxy over the same folder (Demo/images' files and ``ninePatchName``),
    /// both answering unsafe URLs, for `body`; thumbor is killed after it.
    static func withThumborAndProxy(_ body: (_ folder: TemporaryDirectory, _ port: Int, _ harness: ProxyHarness) async throws -> Void) async throws {
        let folder = TemporaryDirectory("thumbor-side-by-side")
        defer { folder.remove() }
        let root = folder.url.appendingPathComponent("images")
        try FileManager.default.copyItem(at: Fixture.demoImages, to: root)
        try ninePatch().write(to: root.appendingPathComponent(ninePatchName))
        let (thumbor, port) = try startThumbor(in: folder, root: root)
        // SIGKILL: a process started from the test runner's threads inherits their blocked
        // signal mask, so thumbor would never see a SIGTERM (each run left one behind).
        defer {
            kill(thumbor.processIdentifier, SIGKILL)
            thumbor.waitUntilExit()
        }
        let harness = try await ProxyHarness.start { configuration in
            configuration.originDirectory = root
            configuration.thumbor.allowsUnsafe = true
        }
        defer { Task { await harness.stop() } }
        try await body(folder, port, harness)
    }

    /// The nine-patch `frame()` draws, in the served folder.
    static let ninePatchName = "frame.9.png"

    /// A 16 × 16 nine-patch of our own: columns 6–9 and rows 5–10 stretch (their inside
    /// transparent), the content area asks for 2, 1, 3 and 2 pixels of padding (left, top,
    /// right, bottom), and the border is a gradient, opaque on the outside and 140 inside.
    static func ninePatch() throws -> Data {
        var pixels = [UInt8](repeating: 0, count: 16 * 16 * 4)
        func set(_ x: Int, _ y: Int, _ pixel: [UInt8]) { pixels.replaceSubrange((y * 16 + x) * 4..<(y * 16 + x) * 4 + 4, with: pixel) }
        let marker: [UInt8] = [0, 0, 0, 255]
        for x in 6...9 { set(x, 0, marker) }
        for y in 5...10 { set(0, y, marker) }
        for x in 3...11 { set(x, 15, marker) }
        for y in 2...12 { set(15, y, marker) }
        for y in 1...14 {
            for x in 1...14 where !((6...9).contains(x) && (5...10).contains(y)) {
                let outer = x < 3 || x > 12 || y < 3 || y > 12
                set(x, y, [UInt8(x * 17), UInt8(y * 17), UInt8(200 - x * 5), outer ? 255 : 140])
            }
        }
        let bitmap = try Bitmap(width: 16, height: 16, pixelFormat: .rgba8, pixels: pixels)
        return try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .png)
    }

    /// Each option set on its two images (``images(for:)``): the same status, format and size as thumbor, and the same
    /// pixels as far as the geometry goes (``geometryBound(for:)``): the crop box, the
    /// alignment, the flips and turns, the trim and the enlargement are thumbor's.
    @Test func sameFormatsAndSizesAsThumbor() async throws {
        let sizes = try Dictionary(uniqueKeysWithValues: Self.images.map { image in
            let bitmap = try CoderRegistry.system().decode(Data(contentsOf: Fixture.demoImages.appendingPathComponent(image))).image
            return (image, (bitmap.width, bitmap.height))
        })
        try await Self.withThumborAndProxy { folder, port, harness in
            for (index, options) in Self.options.enumerated() {
                for image in Self.images(for: index) {
                    let path = "/unsafe/\(options)/\(image)"
                    // Both at once: thumbor works on one core, the proxy on the other, and the
                    // suite's longest test takes half the time it took one after the other.
                    // Long deadlines: a debug build's full-size geometry on two cores shared by
                    // the suite's other tests took over a minute once.
                    async let thumborAnswer = Self.thumbor(path, port: port, timeout: .seconds(180))
                    async let proxyAnswer = harness.request("/thumbor" + path, timeout: .seconds(180))
                    let theirs: (status: Int, body: Data)
                    do {
                        theirs = try await thumborAnswer
                    } catch {
                        let log = (try? String(contentsOf: folder.url.appendingPathComponent("thumbor.log"), encoding: .utf8)) ?? ""
                        Issue.record("thumbor did not answer \(path): \(error); its log: \(log.suffix(3000))")
                        return
                    }
                    let ours: Reply
                    do {
                        ours = try await proxyAnswer
                    } catch {
                        Issue.record("the proxy did not answer \(path): \(error)")
                        continue
                    }
                    #expect(Self.summary(ours.status, ours.body) == Self.summary(theirs.status, theirs.body), "\(path)")
                    guard ours.status == 200, theirs.status == 200 else { continue }
                    try Self.compareGeometry(options, source: sizes[image]!, ours: ours.body, theirs: theirs.body)
                }
            }
        }
    }
}

extension ThumborSideBySideTests {
    /// The mean absolute difference of two decoded answers' R, G and B; nil when the sizes differ.
    static func meanDifference(_ a: Data, _ b: Data) throws -> Double? {
        let x = try CoderRegistry.system().decode(a).image, y = try CoderRegistry.system().decode(b).image
        guard x.width == y.width, x.height == y.height else { return nil }
        var total = 0
        for row in 0..<x.height {
            for column in 0..<x.width {
                let p = row * x.bytesPerRow + column * x.pixelFormat.bytesPerPixel, q = row * y.bytesPerRow + column * y.pixelFormat.bytesPerPixel
                for channel in 0..<3 { total += abs(Int(x.pixels[p + channel]) - Int(y.pixels[q + channel])) }
            }
        }
        return Double(total) / Double(x.width * x.height * 3)
    }

    /// thumbor's colour filters give thumbor's pixels: after the filter, ours and thumbor's
    /// differ no more than without it (their resize and ours differ a little), while the filter
    /// itself changes the image.
    @Test func colourFiltersGiveThumborsPixels() async throws {
        try await Self.withThumborAndProxy { _, port, harness in
            func both(_ path: String) async throws -> (ours: Data, theirs: Data) {
                try await Self.both(path, port: port, harness: harness)
            }
            let filters = [
                "brightness(30)", "brightness(-45)", "contrast(40)", "contrast(-50)", "rgb(20,-10,5)", "saturation(1.8)", "saturation(0.3)",
                "fill(white)", "fill(ff0000)", "fill(auto)", "fill(white,true)", "background_color(00f)",
            ]
            for image in ["elephants-1920x1080-progressive.jpg", "flower.webp", "Spring.png"] {
                let plain = try await both("/unsafe/fit-in/200x200/filters:format(png)/\(image)")
                let baseline = try #require(try Self.meanDifference(plain.ours, plain.theirs))
                for filter in filters {
                    let filtered = try await both("/unsafe/fit-in/200x200/filters:\(filter):format(png)/\(image)")
                    #expect(Self.summary(200, filtered.ours) == Self.summary(200, filtered.theirs), "\(image) \(filter)")
                    guard let difference = try Self.meanDifference(filtered.ours, filtered.theirs) else { continue }
                    #expect(difference <= baseline + 1, "\(image) \(filter): \(difference) against \(baseline) without it")
                    // The effect is checked on the photos; Spring.png (soft greys, mostly transparent)
                    // is there for the transparency of fill and background_color, which change
                    // nothing of an opaque image.
                    if image.hasSuffix(".png") || filter.hasPrefix("background_color") { continue }
                    let changed = try Self.meanDifference(filtered.ours, plain.ours) ?? .infinity
                    #expect(changed > 3, "\(image) \(filter) changed nothing")
                }
            }
        }
    }
}

extension ThumborSideBySideTests {
    /// The mean absolute difference of R, G and B over the pixels where `region` holds (and the
    /// share of them whose alpha differs by more than 64); nil when the sizes differ.
    static func regionDifference(_ a: Data, _ b: Data, _ region: (Int, Int, Int, Int) -> Bool) throws -> (colour: Double, alpha: Double)? {
        let x = try CoderRegistry.system().decode(a).image, y = try CoderRegistry.system().decode(b).image
        guard x.width == y.width, x.height == y.height else { return nil }
        var total = 0, alphas = 0, count = 0
        for row in 0..<x.height {
            for column in 0..<x.width where region(column, row, x.width, x.height) {
                let p = ImgproxyFilterTests.pixel(x, column, row), q = ImgproxyFilterTests.pixel(y, column, row)
                for channel in 0..<3 { total += abs(p[channel] - q[channel]) }
                if abs(p[3] - q[3]) > 64 { alphas += 1 }
                count += 1
            }
        }
        return (Double(total) / Double(max(1, count) * 3), Double(alphas) / Double(max(1, count)))
    }

    /// thumbor's answer to `path`.
    static func thumbor(_ path: String, port: Int, timeout: TimeAmount = .seconds(180)) async throws -> (status: Int, body: Data) {
        let response = try await HTTPClient.tests.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: timeout)
        return (Int(response.status.code), Data((try await response.body.collect(upTo: 64 << 20)).readableBytesView))
    }

    /// thumbor's and the proxy's answers to `path`, asked at once (each on a core of its own);
    /// both must be 200.
    static func both(_ path: String, port: Int, harness: ProxyHarness) async throws -> (ours: Data, theirs: Data) {
        async let theirs = thumbor(path, port: port)
        async let ours = harness.request("/thumbor" + path, timeout: .seconds(180))
        let (thumborAnswer, proxyAnswer) = try await (theirs, ours)
        #expect(thumborAnswer.status == 200 && proxyAnswer.status == 200, "\(path)")
        return (proxyAnswer.body, thumborAnswer.body)
    }

    /// The mean absolute difference of two decoded answers' colour weighted by alpha (what is
    /// seen over black) and alpha, over R, G, B and A: a transparent pixel's colour counts for
    /// nothing. nil when the sizes differ.
    static func seenDifference(_ a: Data, _ b: Data) throws -> Double? {
        let x = try CoderRegistry.system().decode(a).image, y = try CoderRegistry.system().decode(b).image
        guard x.width == y.width, x.height == y.height else { return nil }
        var total = 0
        for row in 0..<x.height {
            for column in 0..<x.width {
                let p = ImgproxyFilterTests.pixel(x, column, row), q = ImgproxyFilterTests.pixel(y, column, row)
                for channel in 0..<3 { total += abs(p[channel] * p[3] - q[channel] * q[3]) / 255 }
                total += abs(p[3] - q[3])
            }
        }
        return Double(total) / Double(x.width * x.height * 4)
    }

    /// `sharpen`, `equalize` and `fill(blur)` give thumbor's pixels: after the filter, ours and
    /// thumbor's differ by at most `slack` levels more than without it, while the filter itself
    /// changes the image as much as thumbor's does.
    ///
    /// sharpen and equalize run on the images as decoded, unresized (the same pixels in both:
    /// libjpeg-turbo and libwebp decode alike), so that only the filters' arithmetic can differ:
    /// a slack of 0.01 level, one value in a hundred off by one (single precision's last bit; it
    /// measured 0.00001, and 0 for equalize). fill(blur) needs a box (`fit-in/200x200`), so its
    /// inputs are the two resizes (0.16–0.96 apart), and the blurred bands are stretched by two
    /// different resamplers: 1 level (it measured 0.58 on the elephants, 0.91 on the flower).
    @Test func sharpenEqualizeAndBlurredFillGiveThumborsPixels() async throws {
        let cases: [(options: String, filters: [String], slack: Double, images: [String])] = [
            ("", ["sharpen(2,1,true)", "sharpen(1.5,0.5,false)", "sharpen(3,2,false)", "equalize()"], 0.01,
             ["thumb-Kite.jpg", "flower.webp", "thumb-summer_1am.jpg"]),
            ("fit-in/200x200/", ["fill(blur)", "fill(blur,true)"], 1, ["elephants-1920x1080-progressive.jpg", "flower.webp", "Spring.png"]),
        ]
        try await Self.withThumborAndProxy { _, port, harness in
            for (options, filters, slack, images) in cases {
                for image in images {
                    let plain = try await Self.both("/unsafe/\(options)filters:format(png)/\(image)", port: port, harness: harness)
                    let baseline = try #require(try Self.seenDifference(plain.ours, plain.theirs))
                    for filter in filters {
                        let filtered = try await Self.both("/unsafe/\(options)filters:\(filter):format(png)/\(image)", port: port, harness: harness)
                        if ProcessInfo.processInfo.environment["SBS_REPORT"] != nil {
                            print("side-by-side \(image) \(filter): \(try Self.seenDifference(filtered.ours, filtered.theirs) ?? -1) against \(baseline)")
                        }
                        #expect(Self.summary(200, filtered.ours) == Self.summary(200, filtered.theirs), "\(image) \(filter)")
                        if filter.hasPrefix("fill"), image.hasSuffix(".png") {
                            // thumbor blurs transparent pixels' colour as if it were seen (its
                            // blur is of straight RGBA), which darkens every half-transparent
                            // pixel of the backdrop: its colours there are not a reference (see
                            // ThumborUsers.md in the proxy catalog). Its alpha is.
                            let x = try CoderRegistry.system().decode(filtered.ours).image, y = try CoderRegistry.system().decode(filtered.theirs).image
                            var total = 0
                            for row in 0..<x.height {
                                for column in 0..<x.width { total += abs(ImgproxyFilterTests.pixel(x, column, row)[3] - ImgproxyFilterTests.pixel(y, column, row)[3]) }
                            }
                            let alpha = Double(total) / Double(x.width * x.height)
                            #expect(alpha <= slack, "\(image) \(filter): alpha differs by \(alpha)")
                            continue
                        }
                        guard let difference = try Self.seenDifference(filtered.ours, filtered.theirs) else { continue }
                        #expect(difference <= baseline + slack, "\(image) \(filter): \(difference) against \(baseline) without it")
                        // A fill's canvas is larger than the plain image: its size, checked above, is its effect.
                        if filter.hasPrefix("fill") { continue }
                        let changed = try #require(try Self.seenDifference(filtered.ours, plain.ours))
                        let theirs = try #require(try Self.seenDifference(filtered.theirs, plain.theirs))
                        #expect(changed > 1, "\(image) \(filter) changed nothing")
                        #expect(abs(changed - theirs) <= max(0.5, theirs / 10), "\(image) \(filter): changed \(changed), thumbor's \(theirs)")
                    }
                }
            }
        }
    }

    /// `round_corner` paints (or clears) the same corners as thumbor: inside the corner boxes,
    /// where the whole difference lies, ours and thumbor's differ by little (the arcs are the
    /// same ellipse; thumbor's is half a pixel further in and anti-aliased differently: it
    /// measured 1.8–2.5 levels over the resizes' own difference, bounded at 4), while the outer
    /// corners differ a lot from the image without the filter (over 99 levels measured, bounded
    /// at 40); the rest is untouched. Cleared corners: alpha differs by more than 64 at 4 % of
    /// the corner boxes' pixels (the arc, where thumbor keeps alpha and darkens instead), bounded at 8 %.
    @Test func roundCornersAsThumbor() async throws {
        try await Self.withThumborAndProxy { _, port, harness in
            for image in ["elephants-1920x1080-progressive.jpg", "flower.webp"] {
                let plain = try await Self.both("/unsafe/fit-in/200x200/filters:format(png)/\(image)", port: port, harness: harness)
                for (filter, a, b) in [("round_corner(30,255,0,0)", 30, 30), ("round_corner(40%7C20,0,0,255)", 40, 20), ("round_corner(25,255,255,255,1)", 25, 25)] {
                    let filtered = try await Self.both("/unsafe/fit-in/200x200/filters:\(filter):format(png)/\(image)", port: port, harness: harness)
                    #expect(Self.summary(200, filtered.ours) == Self.summary(200, filtered.theirs), "\(image) \(filter)")
                    // The outer third of each corner box is outside any arc: painted in both.
                    let corners = { (x: Int, y: Int, w: Int, h: Int) -> Bool in
                        (x < a || x >= w - a) && (y < b || y >= h - b)
                    }
                    let outer = { (x: Int, y: Int, w: Int, h: Int) -> Bool in
                        (x < a / 4 || x >= w - a / 4) && (y < b / 4 || y >= h - b / 4)
                    }
                    let middle = { (x: Int, y: Int, w: Int, h: Int) -> Bool in !corners(x, y, w, h) }
                    let ours = try #require(try Self.regionDifference(filtered.ours, filtered.theirs, corners))
                    let changed = try #require(try Self.regionDifference(filtered.ours, plain.ours, outer))
                    let untouched = try #require(try Self.regionDifference(filtered.ours, plain.ours, middle))
                    let baseline = try #require(try Self.regionDifference(plain.ours, plain.theirs, corners))
                    if ProcessInfo.processInfo.environment["SBS_REPORT"] != nil {
                        print("side-by-side \(image) \(filter): corners \(ours), without \(baseline), outer changed \(changed)")
                    }
                    if filter.hasSuffix(",1)") {
                        // Transparent: the colour of a cleared pixel means nothing; its alpha must match.
                        #expect(ours.alpha <= 0.08, "\(image) \(filter): alpha differs at \(ours.alpha) of the corners")
                        #expect(changed.alpha > 0.99, "\(image) \(filter): outer corners not cleared")
                    } else {
                        #expect(ours.colour <= baseline.colour + 4, "\(image) \(filter): corners \(ours.colour) from thumbor's, \(baseline.colour) without the filter")
                        #expect(changed.colour > 40, "\(image) \(filter): outer corners not painted")
                    }
                    #expect(untouched.colour == 0 && untouched.alpha == 0, "\(image) \(filter): outside the corners changed")
                }
            }
        }
    }

    /// `noise(amount)` is random in thumbor, so its pixels cannot match: its statistics must. The
    /// mean absolute change it makes and its root mean square are within 5 % of thumbor's (each
    /// is a mean over 22 000 pixels of a uniform draw, about 0.4 % of sampling noise; measured
    /// within 1.2 %), and, as in thumbor, R, G and B move together.
    @Test func noiseIsThumborsNoise() async throws {
        try await Self.withThumborAndProxy { _, port, harness in
            for image in ["elephants-1920x1080-progressive.jpg", "flower.webp"] {
                let plain = try await Self.both("/unsafe/fit-in/200x200/filters:format(png)/\(image)", port: port, harness: harness)
                for amount in [10, 40, 75] {
                    let noisy = try await Self.both("/unsafe/fit-in/200x200/filters:noise(\(amount)):format(png)/\(image)", port: port, harness: harness)
                    let ours = try Self.noiseStatistics(noisy.ours, plain.ours), theirs = try Self.noiseStatistics(noisy.theirs, plain.theirs)
                    if ProcessInfo.processInfo.environment["SBS_REPORT"] != nil { print("side-by-side \(image) noise(\(amount)): \(ours) thumbor \(theirs)") }
                    #expect(abs(ours.mean - theirs.mean) <= theirs.mean * 0.05, "\(image) noise(\(amount)): mean change \(ours.mean), thumbor's \(theirs.mean)")
                    #expect(abs(ours.spread - theirs.spread) <= theirs.spread * 0.05, "\(image) noise(\(amount)): spread \(ours.spread), thumbor's \(theirs.spread)")
                    #expect(ours.together >= 0.95 && theirs.together >= 0.95, "\(image) noise(\(amount)): channels moved together in \(ours.together), thumbor's \(theirs.together)")
                }
            }
            // Ours is the same every time: a fresh proxy (no cache) renders the same bytes.
            let path = "/unsafe/fit-in/200x200/filters:noise(30):format(png)/flower.webp"
            let first = try await harness.request("/thumbor" + path, timeout: .seconds(180))
            let other = try await ProxyHarness.start { configuration in
                configuration.originDirectory = Fixture.demoImages
                configuration.thumbor.allowsUnsafe = true
            }
            defer { Task { await other.stop() } }
            #expect(try await other.request("/thumbor" + path, timeout: .seconds(180)).body == first.body)
        }
    }

    /// The change from `plain` to `noisy`: its mean absolute size over R, G and B, its standard
    /// deviation, and the share of pixels (away from 0 and 255, where clamping splits them)
    /// whose three channels moved by the same amount.
    static func noiseStatistics(_ noisy: Data, _ plain: Data) throws -> (mean: Double, spread: Double, together: Double) {
        let x = try CoderRegistry.system().decode(noisy).image, y = try CoderRegistry.system().decode(plain).image
        var total = 0.0, squares = 0.0, count = 0, together = 0, unclamped = 0
        for row in 0..<x.height {
            for column in 0..<x.width {
                let p = ImgproxyFilterTests.pixel(x, column, row), q = ImgproxyFilterTests.pixel(y, column, row)
                let deltas = (0..<3).map { p[$0] - q[$0] }
                for delta in deltas {
                    total += Double(abs(delta))
                    squares += Double(delta * delta)
                    count += 1
                }
                if (0..<3).allSatisfy({ q[$0] > 40 && q[$0] < 215 }) {
                    unclamped += 1
                    if deltas[0] == deltas[1] && deltas[1] == deltas[2] { together += 1 }
                }
            }
        }
        let mean = total / Double(count)
        return (mean, (squares / Double(count)).squareRoot(), Double(together) / Double(max(1, unclamped)))
    }
}
