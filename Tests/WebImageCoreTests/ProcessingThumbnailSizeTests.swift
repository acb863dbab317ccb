import Testing
import WebImageTestSupport
@testable import WebImageCore

/// `ImageDecodingOptions.Thumbnail.outputSize`: the exact size every decode is finished to.
@Suite struct ProcessingThumbnailSizeTests {
    typealias Thumbnail = ImageDecodingOptions.Thumbnail

    static func size(_ thumbnail: Thumbnail, _ width: Int, _ height: Int) -> [Int] {
        let size = thumbnail.outputSize(width: width, height: height)
        return [size.width, size.height]
    }

    @Test func maxPixelSizeBoundsTheLongestSide() {
        #expect(Self.size(.maxPixelSize(256), 5120, 2880) == [256, 144])
        #expect(Self.size(.maxPixelSize(256), 2880, 5120) == [144, 256])
        #expect(Self.size(.maxPixelSize(256), 1000, 1000) == [256, 256])
        #expect(Self.size(.maxPixelSize(100), 333, 200) == [100, 60])
        // Never upscales; never below 1×1, even for a degenerate request.
        #expect(Self.size(.maxPixelSize(4096), 640, 480) == [640, 480])
        #expect(Self.size(.maxPixelSize(100), 10_000, 3) == [100, 1])
        #expect(Self.size(.maxPixelSize(0), 640, 480) == [1, 1])
        #expect(Self.size(.maxPixelSize(-5), 640, 480) == [1, 1])
    }

    @Test func fitScalesIntoTheBox() {
        #expect(Self.size(.size(width: 200, height: 200, contentMode: .fit), 800, 600) == [200, 150])
        #expect(Self.size(.size(width: 200, height: 200, contentMode: .fit), 600, 800) == [150, 200])
        #expect(Self.size(.size(width: 300, height: 100, contentMode: .fit), 800, 600) == [133, 100])
        #expect(Self.size(.size(width: 2000, height: 2000, contentMode: .fit), 800, 600) == [800, 600])
    }

    @Test func fillScalesToCoverTheBox() {
        // The scaled size, not yet cropped: a resize processor crops the overflow.
        #expect(Self.size(.size(width: 200, height: 200, contentMode: .fill), 800, 600) == [267, 200])
        #expect(Self.size(.size(width: 200, height: 200, contentMode: .fill), 600, 800) == [200, 267])
        #expect(Self.size(.size(width: 300, height: 100, contentMode: .fill), 800, 600) == [300, 225])
        #expect(Self.size(.size(width: 1000, height: 100, contentMode: .fill), 800, 600) == [800, 600])
    }

    @Test func stretchTakesTheBoxCappedAtTheSource() {
        #expect(Self.size(.size(width: 200, height: 50, contentMode: .stretch), 800, 600) == [200, 50])
        #expect(Self.size(.size(width: 2000, height: 50, contentMode: .stretch), 800, 600) == [800, 50])
        #expect(Self.size(.size(width: 0, height: 0, contentMode: .stretch), 800, 600) == [1, 1])
    }

    @Test func resultsStayInsideTheBoxAndTheSource() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            let width = Int.random(in: 1...6000, using: &generator), height = Int.random(in: 1...6000, using: &generator)
            let box = (Int.random(in: 1...3000, using: &generator), Int.random(in: 1...3000, using: &generator))
            for mode in ContentMode.allCases {
                let size = Thumbnail.size(width: box.0, height: box.1, contentMode: mode).outputSize(width: width, height: height)
                #expect(size.width >= 1 && size.height >= 1 && size.width <= width && size.height <= height)
                if mode != .fill { #expect(size.width <= box.0 && size.height <= box.1, "\(mode) \(width)×\(height) in \(box)") }
                if mode == .fill { #expect(size.width >= min(box.0, width) && size.height >= min(box.1, height), "fill \(width)×\(height) in \(box): \(size)") }
            }
            let side = Int.random(in: 1...3000, using: &generator)
            let size = Thumbnail.maxPixelSize(side).outputSize(width: width, height: height)
            #expect(max(size.width, size.height) == min(side, max(width, height)), "\(width)×\(height) max \(side): \(size)")
        }
    }
}
