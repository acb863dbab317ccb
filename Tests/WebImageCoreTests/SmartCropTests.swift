import Testing
import WebImageCore
import WebImageTestSupport

/// `ImageProcessors.SmartCrop` on images made so that the interesting place is known.
@Suite struct SmartCropTests {
    /// A flat grey image with one detailed, saturated patch.
    static func image(width: Int, height: Int, patchAt patch: (x: Int, y: Int), side: Int) throws -> Bitmap {
        var pixels = [UInt8](repeating: 128, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let at = (y * width + x) * 4
                pixels[at + 3] = 255
                guard (patch.x..<patch.x + side).contains(x), (patch.y..<patch.y + side).contains(y) else { continue }
                // A red and blue checkerboard: edges everywhere, saturated colour.
                let odd = (x / 3 + y / 3) % 2 == 1
                (pixels[at], pixels[at + 1], pixels[at + 2]) = odd ? (230, 20, 20) : (20, 20, 230)
            }
        }
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    @Test(arguments: [(40, 300), (500, 40), (700, 500), (300, 150)])
    func theWindowHoldsTheInterestingPatch(x: Int, y: Int) throws {
        let bitmap = try Self.image(width: 800, height: 600, patchAt: (x, y), side: 60)
        let window = ImageProcessors.SmartCrop(width: 200, height: 200).window(in: bitmap)
        #expect(window.width == 200 && window.height == 200)
        #expect(window.x <= x && x + 60 <= window.x + window.width, "\(window)")
        #expect(window.y <= y && y + 60 <= window.y + window.height, "\(window)")
        let cropped = try ImageProcessors.SmartCrop(width: 200, height: 200).process(ImageContainer(image: bitmap)).image
        #expect(cropped == (try bitmap.cropped(x: window.x, y: window.y, width: 200, height: 200)))
    }

    /// A focal point wins over the search; windows stay inside the image; a crop as large as
    /// the image is the image.
    @Test func focusBoundsAndWholeImage() throws {
        let bitmap = try Self.image(width: 800, height: 600, patchAt: (40, 40), side: 60)
        let focused = ImageProcessors.SmartCrop(width: 200, height: 100, focus: (x: 0.75, y: 0.5)).window(in: bitmap)
        #expect(focused.x == 500 && focused.y == 250)
        let corner = ImageProcessors.SmartCrop(width: 300, height: 300, focus: (x: 1, y: 1)).window(in: bitmap)
        #expect(corner.x == 500 && corner.y == 300)
        let whole = ImageProcessors.SmartCrop(width: 5000, height: 600).window(in: bitmap)
        #expect(whole.x == 0 && whole.y == 0 && whole.width == 800 && whole.height == 600)
        #expect(throws: ImageError.self) { try ImageProcessors.SmartCrop(width: 0, height: 10).process(ImageContainer(image: bitmap)) }
        #expect(ImageProcessors.SmartCrop(width: 10, height: 10).identifier != ImageProcessors.SmartCrop(width: 10, height: 10, focus: (0.5, 0.5)).identifier)
    }
}
