import AsyncHTTPClient
import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

extension ThumborSideBySideTests {
    /// thumbor's `watermark()` and `focal()` against thumbor itself, the watermark read by both
    /// from the same folder (thumbor's file loader, the proxy's origin folder): each answer has
    /// thumbor's format and size, and differs from thumbor's no more than the same URL without
    /// the filter does (their resizes differ a little), while the filter changes the image.
    @Test func watermarksAndFocalPointsGiveThumborsPixels() async throws {
        try await Self.withThumborAndProxy { _, port, harness in
            func both(_ path: String) async throws -> (ours: Data, theirs: Data) {
                try await Self.both(path, port: port, harness: harness)
            }
            let cases: [(options: String, image: String)] = [
                // Places: pixels from each edge, percentages, the centre, repeats; alpha; ratios.
                ("fit-in/400x400/filters:watermark(flower.webp,10,20,0):format(png)", "elephants-1920x1080-progressive.jpg"),
                ("fit-in/400x400/filters:watermark(flower.webp,-10,-0,40,25):format(png)", "elephants-1920x1080-progressive.jpg"),
                ("fit-in/400x400/filters:watermark(Spring.png,center,center,20,50,50):format(png)", "elephants-1920x1080-progressive.jpg"),
                ("fit-in/400x400/filters:watermark(flower.webp,10p,-20p,30,none,30):format(png)", "elephants-1920x1080-progressive.jpg"),
                ("fit-in/400x400/filters:watermark(flower.webp,repeat,repeat,50,10):format(png)", "elephants-1920x1080-progressive.jpg"),
                ("fit-in/400x400/filters:watermark(flower.webp,repeat,30,0,30):format(png)", "elephants-1920x1080-progressive.jpg"),
                ("fit-in/400x400/filters:watermark(flower.webp,5,repeat,10,none,40):format(png)", "elephants-1920x1080-progressive.jpg"),
                // Over an image with transparency: thumbor's alpha arithmetic.
                ("fit-in/400x400/filters:watermark(flower.webp,20,20,30,40):format(png)", "Spring.png"),
                // focal(): the fill's window centred on the region, then on two regions' weighted centre.
                ("300x100/filters:focal(100x700:300x900):format(png)", "elephants-1920x1080-progressive.jpg"),
                ("100x300/filters:focal(1500x100:1700x300):focal(1600x500:1700x600):format(png)", "elephants-1920x1080-progressive.jpg"),
                ("50x50:1000x900/200x100/filters:focal(100x700:200x800):format(png)", "elephants-1920x1080-progressive.jpg"),
            ]
            for (options, image) in cases {
                let filtered = try await both("/unsafe/\(options)/\(image)")
                #expect(Self.summary(200, filtered.ours) == Self.summary(200, filtered.theirs), "\(options)")
                let filters = options.range(of: "filters:")!
                let plainOptions = options[..<filters.lowerBound] + "filters:format(png)"
                let plain = try await both("/unsafe/\(plainOptions)/\(image)")
                let baseline = try #require(try Self.meanDifference(plain.ours, plain.theirs))
                let difference = try #require(try Self.meanDifference(filtered.ours, filtered.theirs), "\(options)")
                #expect(difference <= baseline + 1, "\(options) \(image): \(difference) against \(baseline) without the filter")
                let changed = try Self.meanDifference(filtered.ours, plain.ours) ?? .infinity
                #expect(changed > 1, "\(options) \(image) changed nothing (\(changed))")
            }
        }
    }
}
