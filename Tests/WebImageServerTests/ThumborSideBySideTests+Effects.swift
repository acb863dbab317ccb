import AsyncHTTPClient
import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

extension ThumborSideBySideTests {
    /// Prints a measured figure when `SBS_REPORT` is set (to choose and check the bounds).
    static func report(_ line: @autoclosure () -> String) {
        if ProcessInfo.processInfo.environment["SBS_REPORT"] != nil { print("side-by-side " + line()) }
    }

    /// `colorize`, `curve` and `convolution` give thumbor's pixels. They run on the images as
    /// decoded, unresized (the same pixels in both, as for `sharpen`), so only the filters'
    /// arithmetic can differ: thumbor's own (truncations, the spline, the sums' order) is done
    /// the same way here, so the bound is 0.01 level (one value in a hundred off by one); all
    /// measured 0. Each filter changes the image as much as thumbor's does (within 0.01 too).
    /// Spring.png has alpha, which `convolution` convolves too (compared as seen over black).
    @Test func colorizeCurveAndConvolutionGiveThumborsPixels() async throws {
        let filters = [
            "colorize(40,10,80,ff8000)", "colorize(150,0,30,'0000ff')",
            "curve([(0,0),(64,100),(192,160),(255,255)],[(0,30),(255,220)],[(0,0),(128,150),(255,255)],[(30,20),(90,200),(255,235)])",
            "convolution(1;2;1;2;4;2;1;2;1,3,true)", "convolution(-1;-1;-1;-1;9;-1;-1;-1;-1,3,false)",
            "convolution(1;1;1;1;1,5)", "convolution(0.5;-0.25;1,1,true)",
        ]
        try await Self.withThumborAndProxy { _, port, harness in
            for image in ["thumb-Kite.jpg", "flower.webp", "thumb-summer_1am.jpg", "Spring.png"] {
                // Spring.png is large and soft: one convolution of it checks the alpha.
                let chosen = image == "Spring.png" ? ["convolution(1;2;1;2;4;2;1;2;1,3,true)"] : filters
                try await Self.checkUnresized(chosen, on: image, port: port, harness: harness)
            }
        }
    }

    /// `filters` on the unresized `image`: thumbor's size and pixels within 0.01 level of the
    /// difference without them, and the same change as thumbor's.
    static func checkUnresized(_ filters: [String], on image: String, port: Int, harness: ProxyHarness) async throws {
        let plain = try await both("/unsafe/filters:format(png)/\(image)", port: port, harness: harness)
        let baseline = try #require(try seenDifference(plain.ours, plain.theirs))
        for filter in filters {
            let filtered = try await both("/unsafe/filters:\(filter):format(png)/\(image)", port: port, harness: harness)
            #expect(summary(200, filtered.ours) == summary(200, filtered.theirs), "\(image) \(filter)")
            let difference = try #require(try seenDifference(filtered.ours, filtered.theirs), "\(image) \(filter)")
            let changed = try #require(try seenDifference(filtered.ours, plain.ours))
            let theirs = try #require(try seenDifference(filtered.theirs, plain.theirs))
            report("\(image) \(filter): \(difference) against \(baseline); changed \(changed), thumbor's \(theirs)")
            #expect(difference <= baseline + 0.01, "\(image) \(filter): \(difference) against \(baseline) without it")
            // A 3 × 3 blur of a photo changes it by 0.16 level (Spring.png) to 0.8.
            #expect(changed > 0.1, "\(image) \(filter) changed nothing")
            #expect(abs(changed - theirs) <= 0.01, "\(image) \(filter): changed \(changed), thumbor's \(theirs)")
        }
    }

    /// `frame()` against thumbor 7.8, whose `frame()` is broken (see ThumborUsers.md in the proxy catalog): its C reads
    /// the nine-patch at one byte a pixel (it casts a Python bytes object to a C string for the
    /// image mode), so it draws nothing and pads by amounts read from the wrong bytes. What it
    /// gets right is checked against it: the image flattened on white, which inside the frame's
    /// transparent middle is ours too (within 1 level: thumbor truncates the blend, measured
    /// 0.01 on Spring.png's transparency, 0 on opaque images). Its bug is checked too, so that a
    /// fixed thumbor shows here: its answer is its own plain image on white, moved by (6, 0), 9
    /// and 3 pixels larger. Ours is padded as the markers ask (2, 1, 3 and 2 pixels), with the
    /// nine-patch's border drawn (its first inside pixel, (17, 17, 195), at the corner).
    @Test func frameAsThumborMeansIt() async throws {
        let frame = "frame(\(Self.ninePatchName))"
        let cases: [(options: String, image: String)] = [
            ("", "thumb-Kite.jpg"), ("", "Spring.png"), ("fit-in/200x200/", "flower.webp"), ("fit-in/4x4/", "elephants-1920x1080-progressive.jpg"),
        ]
        try await Self.withThumborAndProxy { _, port, harness in
            for (options, image) in cases {
                let plain = try await Self.both("/unsafe/\(options)filters:format(png)/\(image)", port: port, harness: harness)
                let framed = try await Self.both("/unsafe/\(options)filters:\(frame):format(png)/\(image)", port: port, harness: harness)
                let ours = try CoderRegistry.system().decode(framed.ours).image, theirs = try CoderRegistry.system().decode(framed.theirs).image
                let plainOurs = try CoderRegistry.system().decode(plain.ours).image, plainTheirs = try CoderRegistry.system().decode(plain.theirs).image
                #expect(ours.width == plainOurs.width + 5 && ours.height == plainOurs.height + 3, "\(options)\(image)")
                #expect(theirs.width == plainTheirs.width + 9 && theirs.height == plainTheirs.height + 3, "\(options)\(image): thumbor's frame() bug is fixed?")
                #expect(ImgproxyFilterTests.pixel(ours, 0, 0) == [17, 17, 195, 255], "\(options)\(image)")
                guard plainOurs.width > 12, plainOurs.height > 12 else { continue }
                let inside = { (x: Int, y: Int, w: Int, h: Int) in x >= 6 && y >= 6 && x < w - 6 && y < h - 6 }
                let thumborsBug = Self.onWhiteDifference(theirs, plainTheirs, dx: 6, dy: 0, where: inside)
                let middle = Self.onWhiteDifference(ours, plainOurs, dx: 2, dy: 1, where: inside)
                let against = Self.onWhiteDifference(ours, plainTheirs, dx: 2, dy: 1, where: inside)
                let baseline = try #require(try Self.meanDifference(plain.ours, plain.theirs))
                Self.report("\(options)\(image) frame: thumbor's on white \(thumborsBug), ours inside \(middle), against thumbor's image \(against) (\(baseline) without)")
                #expect(thumborsBug <= 1, "\(options)\(image): thumbor's frame() drew something (\(thumborsBug))")
                #expect(middle <= 1, "\(options)\(image): the frame's middle is not the image on white (\(middle))")
                #expect(against <= baseline + 1, "\(options)\(image): \(against) from thumbor's image on white, \(baseline) without the frame")
            }
        }
    }

    /// The mean absolute difference of `outer`'s R, G and B at (x + `dx`, y + `dy`) from `inner`'s
    /// at (x, y) flattened on white, over the pixels of `inner` where `include` holds.
    static func onWhiteDifference(_ outer: Bitmap, _ inner: Bitmap, dx: Int, dy: Int, where include: (Int, Int, Int, Int) -> Bool) -> Double {
        var total = 0.0, count = 0
        for y in 0..<inner.height {
            for x in 0..<inner.width where include(x, y, inner.width, inner.height) {
                let p = ImgproxyFilterTests.pixel(outer, x + dx, y + dy), q = ImgproxyFilterTests.pixel(inner, x, y)
                for channel in 0..<3 {
                    let flattened = Double(q[channel]) * Double(q[3]) / 255 + 255 * (1 - Double(q[3]) / 255)
                    total += abs(Double(p[channel]) - flattened)
                }
                count += 3
            }
        }
        return total / Double(max(1, count))
    }

    /// `extract_focal()` reads the inner thumbor URL's crop as thumbor's filter means to: our
    /// answer is the one `focal()` with that region gives, and differs from thumbor's `focal()`
    /// answer no more than the same box without it does (within 1 level), while the region
    /// moves the window. thumbor 7.8's own `extract_focal()` never finds the crop (it reads the
    /// image URL after percent-encoding it, `AxB%3ACxD`: see ThumborUsers.md in the proxy catalog) and loads the whole
    /// inner URL as the image, a 404 with its file loader: checked, so that a fixed thumbor shows.
    @Test func extractFocalGivesThumborsFocalWindow() async throws {
        let elephants = "elephants-1920x1080-progressive.jpg"
        let cases: [(box: String, inner: String, region: String)] = [
            ("300x100", "localhost/unsafe/100x700:300x900/\(elephants)", "100x700:300x900"),
            ("100x300", "thumbor.example.com/HASHHASHHASH=/1500x100:1700x300/fit-in/50x50/filters:blur(2)/\(elephants)", "1500x100:1700x300"),
            // Nested: the first inner URL has no crop, the one inside it has.
            ("200x200", "a.com/unsafe/fit-in/x/http://b.com/unsafe/1600x800:1900x1000/\(elephants)", "1600x800:1900x1000"),
        ]
        try await Self.withThumborAndProxy { _, port, harness in
            for (box, inner, region) in cases {
                let ours = try await harness.request("/thumbor/unsafe/\(box)/filters:extract_focal():format(png)/\(inner)", timeout: .seconds(180))
                let focal = try await Self.both("/unsafe/\(box)/filters:focal(\(region)):format(png)/\(elephants)", port: port, harness: harness)
                let plain = try await Self.both("/unsafe/\(box)/filters:format(png)/\(elephants)", port: port, harness: harness)
                #expect(ours.status == 200 && ours.body == focal.ours, "\(inner): not the focal() answer")
                let theirs = try await HTTPClient.tests.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/unsafe/\(box)/filters:extract_focal()/\(inner)"), timeout: .seconds(180))
                #expect(theirs.status.code == 404, "\(inner): thumbor's extract_focal() bug is fixed?")
                let baseline = try #require(try Self.meanDifference(plain.ours, plain.theirs))
                let difference = try #require(try Self.meanDifference(ours.body, focal.theirs))
                let moved = try #require(try Self.meanDifference(ours.body, plain.ours))
                Self.report("extract_focal \(inner): \(difference) from thumbor's focal(), \(baseline) without, moved \(moved)")
                #expect(difference <= baseline + 1, "\(inner): \(difference) against \(baseline) without it")
                #expect(moved > 5, "\(inner): the window did not move (\(moved))")
            }
        }
    }
}
