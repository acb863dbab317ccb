import Foundation
import Testing
import WebImage
@_spi(Testing) @testable import WebImageServer

/// imgproxy's `min-width` and `min-height` as its documentation describes them: the result is
/// at least that large (enlarged if need be, `enlarge` or not), and "when both `width` and
/// `min-width` are set, the final image will be cropped according to `width`". On the quadrants
/// picture (200 × 100: red, green / blue, white).
@Suite struct ImgproxyMinimumSizeTests {
    @Test func minimumSizesRaiseTheScaleAndTheBoxCrops() async throws {
        let harness = try await ImgproxyServingTests.start()
        defer { Task { await harness.stop() } }
        let cases: [(String, String, [(Int, Int, ThumborServingTests.Colour)])] = [
            // Already large enough: nothing changes.
            ("mw:100", "200x100", [(10, 10, .red)]),
            ("mh:100", "200x100", []),
            // Enlarged to the minimum, without enlarge.
            ("mw:400", "400x200", [(10, 10, .red), (390, 190, .white)]),
            ("mh:150", "300x150", [(290, 10, .green)]),
            // fit gives 100×50; the minimum makes it 150×75 and the box's width crops it (centred).
            ("rs:fit:100:100/mw:150", "100x75", [(5, 5, .red), (95, 5, .green), (5, 70, .blue), (95, 70, .white)]),
            ("rs:fit:100:100/mh:80", "100x80", [(5, 5, .red), (95, 75, .white)]),
            // The crop follows the gravity.
            ("rs:fit:100:100/mw:150/g:we", "100x75", [(5, 5, .red), (95, 5, .green), (70, 5, .red)]),
            // A free side grows; the given one crops.
            ("w:50/mh:50", "50x50", [(5, 5, .red), (45, 45, .white)]),
            // The minimum follows dpr.
            ("mw:200/dpr:2", "400x200", []),
            // Of the image as shown: after a quarter turn the minimum width is the source's height.
            ("rot:90/mw:200", "200x400", [(10, 10, .blue)]),
        ]
        for (options, size, pixels) in cases {
            let reply = try await harness.request(ImgproxyServingTests.insecure(harness, options))
            #expect(reply.status == 200, "\(options): \(reply.text)")
            guard reply.status == 200 else { continue }
            #expect(try ThumborServingTests.size(reply) == size, "\(options)")
            for (x, y, colour) in pixels {
                #expect(try ThumborServingTests.colour(reply, x, y) == colour, "\(options) at \(x),\(y)")
            }
        }
        // Out of range is a 400.
        #expect(try await harness.request(ImgproxyServingTests.insecure(harness, "mw:-1")).status == 400)
        #expect(try await harness.request(ImgproxyServingTests.insecure(harness, "mh:999999")).status == 400)
    }
}
