import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCore

/// What both hashes read: `Bitmap.placeholderReduction` (sizes, the box average, every pixel
/// format to straight RGBA), the dominant colour beside them, and `ImagePlaceholder`'s sizes.
@Suite struct PlaceholderReductionTests {
    // MARK: The reduction

    @Test(arguments: [
        (400, 300, 100, 100, 75), (300, 400, 100, 75, 100), (100, 100, 100, 100, 100), (64, 48, 100, 64, 48),
        (1, 1000, 100, 1, 100), (1000, 1, 100, 100, 1), (250, 1, 100, 100, 1), (1280, 720, 100, 100, 56),
        (640, 480, 10, 10, 8), (50, 50, 0, 1, 1), (50, 50, -3, 1, 1),
    ])
    func sizes(width: Int, height: Int, maxSide: Int, expectedWidth: Int, expectedHeight: Int) {
        let bitmap = Bitmap.make(width: width, height: height, format: .gray8) { _, _ in [7] }
        let reduced = bitmap.placeholderReduction(maxSide: maxSide)
        #expect((reduced.width, reduced.height) == (expectedWidth, expectedHeight))
        #expect(reduced.pixelFormat == .rgba8)
        #expect(reduced.bytesPerRow == reduced.width * 4)
    }

    /// A tightly packed rgba8 bitmap within the bound is returned as it is; one with padded rows
    /// is repacked with the same pixels.
    @Test func rgbaWithinTheBoundIsKept() throws {
        let bitmap = Bitmap.make(width: 30, height: 20) { x, y in [UInt8(x), UInt8(y), 7, UInt8(100 + x)] }
        #expect(bitmap.placeholderReduction() == bitmap)
        var padded: [UInt8] = []
        for y in 0..<20 { padded += (0..<30).flatMap { bitmap.pixel($0, y) } + [9, 9, 9, 9, 9] }
        let stride = try Bitmap(width: 30, height: 20, pixelFormat: .rgba8, bytesPerRow: 125, pixels: padded)
        let reduced = stride.placeholderReduction()
        #expect(reduced.pixels == bitmap.pixels)
        #expect(reduced.bytesPerRow == 120)
    }

    /// A one-pixel checkerboard averages to mid-grey everywhere: each output pixel is the mean
    /// of its whole block (2 × 2 here).
    @Test func blocksAreAveraged() {
        let checkerboard = Bitmap.make(width: 200, height: 200, format: .gray8) { x, y in [(x + y) % 2 == 0 ? 0 : 255] }
        let reduced = checkerboard.placeholderReduction()
        #expect(reduced.pixels.enumerated().allSatisfy { $0.offset % 4 == 3 ? $0.element == 255 : (127...128).contains($0.element) })
    }

    /// Averaging is premultiplied: a transparent pixel's hidden colour (green here) does not
    /// bleed into its opaque neighbour, and the block's alpha is the mean alpha.
    @Test func transparentPixelsAddNoColour() {
        let pairs = Bitmap.make(width: 200, height: 100) { x, _ in x % 2 == 0 ? [255, 0, 0, 255] : [0, 255, 0, 0] }
        let reduced = pairs.placeholderReduction()
        #expect((reduced.width, reduced.height) == (100, 50))
        for x in 0..<100 {
            let pixel = reduced.pixel(x, 10)
            #expect(pixel[0] == 255 && pixel[1] == 0 && pixel[2] == 0 && (127...128).contains(pixel[3]), "\(pixel)")
        }
        let transparent = Bitmap.make(width: 300, height: 300) { _, _ in [10, 20, 30, 0] }.placeholderReduction()
        #expect(transparent.pixels.allSatisfy { $0 == 0 }, "fully transparent blocks are transparent black")
    }

    /// Each format comes out as straight RGBA: grey spread to R, G and B, opaque formats with
    /// alpha 255, premultiplied colour divided back by alpha.
    @Test(arguments: [
        (.gray8, [90], [90, 90, 90, 255]),
        (.grayAlpha8, [90, 128], [90, 90, 90, 128]),
        (PixelFormat(channels: .grayAlpha, alpha: .premultiplied), [45, 128], [90, 90, 90, 128]),
        (PixelFormat(channels: .grayAlpha, alpha: .none), [90, 3], [90, 90, 90, 255]),
        (.rgb8, [10, 20, 30], [10, 20, 30, 255]),
        (PixelFormat(channels: .rgba, alpha: .none), [10, 20, 30, 4], [10, 20, 30, 255]),
        (.rgba8Premultiplied, [100, 50, 0, 128], [199, 100, 0, 128]),
        (.rgba8, [100, 50, 0, 128], [100, 50, 0, 128]),
    ] as [(PixelFormat, [UInt8], [UInt8])])
    func everyFormatBecomesStraightRGBA(format: PixelFormat, pixel: [UInt8], expected: [UInt8]) {
        for (width, height) in [(20, 10), (400, 200)] {
            let bitmap = Bitmap.make(width: width, height: height, format: format) { _, _ in pixel }
            let reduced = bitmap.placeholderReduction()
            #expect(reduced.pixelFormat == .rgba8)
            #expect(reduced.pixel(0, 0) == expected, "\(format) at \(width)×\(height)")
            #expect(reduced.pixel(reduced.width - 1, reduced.height - 1) == expected)
        }
    }

    /// The orientation is not touched: the top-left block stays top-left.
    @Test func orientationIsUntouched() {
        let quadrant = Bitmap.make(width: 400, height: 200) { x, y in x < 200 && y < 100 ? [255, 0, 0, 255] : [0, 0, 255, 255] }
        let reduced = quadrant.placeholderReduction()
        #expect(reduced.pixel(0, 0) == [255, 0, 0, 255])
        #expect(reduced.pixel(99, 49) == [0, 0, 255, 255])
    }

    // MARK: The dominant colour

    /// Three quarters of a noisy blue against a red quarter: blue, the mean of its bin.
    @Test func theLargestAreaWins() {
        var generator = SeededGenerator(seed: 0xD0_C010)
        let image = Bitmap.make(width: 160, height: 120) { x, _ in
            if x < 40 { return [220, 30, 30, 255] }
            return [20, 40, 200].map { UInt8(Int($0) + Int.random(in: -3...3, using: &generator)) } + [255]
        }
        let colour = image.dominantColor
        #expect(abs(Int(colour.red) - 20) <= 1 && abs(Int(colour.green) - 40) <= 1 && abs(Int(colour.blue) - 200) <= 1, "\(colour.hex)")
    }

    /// Transparent pixels do not count, however many there are; with none visible, black.
    @Test func transparentPixelsAreIgnored() {
        let mostlyTransparent = Bitmap.make(width: 100, height: 100) { x, _ in x < 70 ? [0, 255, 0, 0] : [200, 10, 10, 255] }
        #expect(mostlyTransparent.dominantColor == RGBColor(red: 200, green: 10, blue: 10))
        let invisible = Bitmap.make(width: 10, height: 10) { _, _ in [90, 90, 90, 0] }
        #expect(invisible.dominantColor == RGBColor(red: 0, green: 0, blue: 0))
    }

    @Test func greyImagesHaveAGreyDominantColour() {
        let grey = Bitmap.make(width: 64, height: 64, format: .gray8) { _, _ in [128] }
        #expect(grey.dominantColor.hex == "#808080")
    }

    @Test func hexIsLowercaseCSS() {
        #expect(RGBColor(red: 255, green: 0, blue: 16).hex == "#ff0010")
        #expect(RGBColor(red: 0, green: 0, blue: 0).hex == "#000000")
    }

    // MARK: ImagePlaceholder

    @Test func aThumbHashPlaceholderDecodesAtItsAspectRatio() throws {
        let placeholder = ImagePlaceholder.thumbHash(ThumbHashTests.published)
        let picture = try placeholder.bitmap()
        #expect(picture == (try ThumbHash(ThumbHashTests.published)).bitmap(maxSide: 32))
        #expect((picture.width, picture.height) == (32, 23))
        #expect(try placeholder.bitmap(maxSide: 64, aspectRatio: 0.1).width == 64, "a ThumbHash has its own ratio")
    }

    @Test(arguments: [
        (32, nil, 32, 32), (32, 16.0 / 9.0, 32, 18), (32, 0.5, 16, 32), (32, Double.nan, 32, 32), (32, -2, 32, 32),
        (32, .infinity, 32, 32), (32, 1e300, 32, 1), (32, 1e-300, 1, 32), (5_000, 2, 1024, 512), (0, 1, 1, 1),
    ] as [(Int, Double?, Int, Int)])
    func aBlurHashPlaceholderDecodesAtTheAspectRatioAsked(maxSide: Int, ratio: Double?, width: Int, height: Int) throws {
        let picture = try ImagePlaceholder.blurHash(BlurHashTests.published).bitmap(maxSide: maxSide, aspectRatio: ratio)
        #expect((picture.width, picture.height) == (width, height))
    }

    @Test func malformedPlaceholdersAreCorruptData() {
        for placeholder in [ImagePlaceholder.thumbHash(""), .thumbHash(BlurHashTests.published), .blurHash(ThumbHashTests.published), .blurHash("")] {
            ThumbHashTests.expectCorruptData("\(placeholder)") { try placeholder.bitmap() }
        }
    }
}
