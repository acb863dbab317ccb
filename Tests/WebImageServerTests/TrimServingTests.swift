import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// thumbor's `trim` and imgproxy's `trim`: a border of one colour is cut away before anything else.
@Suite struct TrimServingTests {
    /// 120 × 80: a 60 × 40 red block at (20, 10) on white, and a pale band (250) across the
    /// bottom four rows.
    static func framed() throws -> Data {
        var pixels = [UInt8](repeating: 255, count: 120 * 80 * 3)
        for y in 0..<80 {
            for x in 0..<120 {
                let offset = (y * 120 + x) * 3
                if (20..<80).contains(x), (10..<50).contains(y) {
                    (pixels[offset], pixels[offset + 1], pixels[offset + 2]) = (220, 30, 30)
                } else if y >= 76 {
                    (pixels[offset], pixels[offset + 1], pixels[offset + 2]) = (250, 250, 250)
                }
            }
        }
        let bitmap = try Bitmap(width: 120, height: 80, pixelFormat: .rgb8, pixels: pixels)
        return try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .png)
    }

    @Test func thumborTrimCutsTheBorderByTheCornersColour() async throws {
        let harness = try await ThumborServingTests.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/framed.png", data: try Self.framed())
        func size(_ options: String) async throws -> String {
            let reply = try await harness.request(ThumborServingTests.unsafe(harness, options + "/filters:format(png)", "/framed.png"))
            #expect(reply.status == 200, "\(options): \(reply.text)")
            return try ThumborServingTests.size(reply)
        }
        // The pale band across the bottom (distance 8.7 from white) is content without a
        // tolerance, border with one.
        #expect(try await size("trim") == "120x70")
        #expect(try await size("trim:10") == "60x40")
        #expect(try await size("trim:top-left:10") == "60x40")
        // The bottom-right pixel is the band's colour: white counts as content then.
        #expect(try await size("trim:bottom-right") == "120x76")
        // The trim comes first: the manual crop is of the trimmed image.
        #expect(try await size("trim:10/0x0:30x20") == "30x20")
        #expect(try await harness.request(ThumborServingTests.unsafe(harness, "trim:500", "/framed.png")).status == 400)
    }

    @Test func imgproxyTrimTakesAThresholdAColourAndEqualSides() async throws {
        let harness = try await ImgproxyServingTests.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/framed.png", data: try Self.framed())
        func size(_ options: String) async throws -> String {
            let reply = try await harness.request(ImgproxyServingTests.insecure(harness, options + "/f:png", "/framed.png"))
            #expect(reply.status == 200, "\(options): \(reply.text)")
            let bitmap = try reply.decoded().image
            return "\(bitmap.width)x\(bitmap.height)"
        }
        #expect(try await size("trim:0") == "120x70")
        #expect(try await size("trim:10") == "60x40")
        // By a given colour: the band's, so the white counts as content and nothing is cut.
        #expect(try await size("trim:2:FAFAFA") == "120x76")
        // Equal sides: left 20 and right 40 become 20 each; top 10 and bottom 30 become 10 each.
        #expect(try await size("trim:10::true:true") == "80x60")
    }
}
