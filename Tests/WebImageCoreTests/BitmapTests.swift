import Foundation
import Testing
@testable import WebImageCore

@Suite struct BitmapTests {
    @Test func costIsBytesOfPixelStorage() throws {
        let bitmap = try Bitmap(width: 3, height: 2, pixelFormat: .rgba8, bytesPerRow: 16) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 7)
        }
        #expect(bitmap.cost == 32)
        #expect(bitmap.pixels.allSatisfy { $0 == 7 })
    }

    @Test func copiesShareStorage() throws {
        let bitmap = try Bitmap(width: 64, height: 64, pixelFormat: .rgba8, pixels: [UInt8](repeating: 1, count: 64 * 64 * 4))
        let copy = bitmap
        let same = bitmap.pixels.withUnsafeBufferPointer { a in copy.pixels.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
        #expect(same)
    }

    @Test(arguments: [(0, 1), (1, 0), (-3, 4)])
    func rejectsNonPositiveDimensions(width: Int, height: Int) {
        #expect(throws: ImageError.self) {
            try Bitmap(width: width, height: height, pixelFormat: .gray8, pixels: [0])
        }
    }

    @Test func rejectsShortRowsAndShortStorage() {
        #expect(throws: ImageError.self) {
            try Bitmap(width: 4, height: 1, pixelFormat: .rgba8, bytesPerRow: 15, pixels: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: ImageError.self) {
            try Bitmap(width: 4, height: 2, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 31))
        }
    }

    @Test func rejectsOverflowingDimensionsWithoutAllocating() {
        #expect(throws: ImageError.self) {
            try Bitmap(width: Int.max / 2, height: 3, pixelFormat: .rgba8) { _ in Issue.record("must not allocate") }
        }
    }

    @Test func animationCostCountsEveryFrameAndContainerCountsFirstFrameOnce() throws {
        let frame = try Bitmap(width: 10, height: 10, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 400))
        let animation = AnimatedImage(frames: [.init(bitmap: frame, duration: .milliseconds(100)),
                                               .init(bitmap: frame, duration: .milliseconds(50))], loopCount: 0)
        #expect(animation.cost == 800)
        #expect(animation.totalDuration == .milliseconds(150))
        let container = ImageContainer(image: frame, animation: animation, format: .gif, data: .init(count: 25))
        #expect(container.cost == 825)
        #expect(container.isAnimated)
        #expect(ImageContainer(image: frame).cost == 400)
    }
}
