import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCore

/// `BlurHash`: the string's structure, what an encode keeps, every pixel format in, the decode's
/// bounds, and hostile strings out (each `corruptData` after bounded work, none trapping). The
/// reference comparisons are in PlaceholderReferenceTests.
@Suite struct BlurHashTests {
    /// Wolt's README example: 4 × 3 components.
    static let published = "LEHV6nWB2yk8pyo0adR*.7kCMdnj"

    // MARK: What an encode keeps

    /// The average colour is stored exactly as 24-bit sRGB (through linear light and back, which
    /// every 8-bit level survives), whatever the component counts.
    @Test(arguments: [(1, 1), (4, 3), (3, 4), (9, 9)])
    func theAverageColourIsExact(x: Int, y: Int) throws {
        let solid = Bitmap.make(width: 40, height: 30) { _, _ in [200, 120, 40, 255] }
        let hash = try BlurHash(encoding: solid, components: .init(x: x, y: y))
        #expect(hash.string.utf8.count == 4 + 2 * x * y)
        #expect(hash.components == .init(x: x, y: y))
        let digits = try BlurHash.digits(of: hash.string)
        #expect(BlurHash.value(digits, 2, 4) == 200 << 16 | 120 << 8 | 40)
        if x == 1, y == 1 {
            let decoded = try hash.bitmap(width: 8, height: 8)
            #expect(decoded.pixels == (0..<64).flatMap { _ in [200, 120, 40, 255] as [UInt8] })
        }
    }

    /// Every 8-bit level survives sRGB → linear → sRGB, so the DC round trip above holds for
    /// every colour.
    @Test func everySRGBLevelSurvivesLinearLight() {
        for level in 0..<256 {
            #expect(Int(BlurHash.sRGB(BlurHash.linear(level))) == level)
        }
    }

    /// A horizontal gradient from red to blue within 8 levels on average at 4 × 3 (5.7
    /// measured with a model of this code; BlurHash's cosines at pixel corners, not centres,
    /// bend the ends of the ramp).
    @Test func aGradientComesBackClose() throws {
        let gradient = Bitmap.make(width: 80, height: 60) { x, _ in
            [UInt8(x * 255 / 79), 100, UInt8(255 - x * 255 / 79), 255]
        }
        let hash = try BlurHash(encoding: gradient)
        #expect(hash.components == .init(x: 4, y: 3))
        let decoded = try hash.bitmap(width: 80, height: 60)
        #expect(decoded.pixelFormat == .rgba8)
        let difference = ThumbHashTests.meanDifference(decoded, gradient)
        #expect(difference <= 8, "mean difference \(difference)")
    }

    /// `punch` scales the components around the average: 0 leaves the flat average colour, 2
    /// more contrast than 1.
    @Test func punchScalesTheContrast() throws {
        let gradient = Bitmap.make(width: 80, height: 60) { x, _ in [UInt8(x * 255 / 79), 100, UInt8(255 - x * 255 / 79), 255] }
        let hash = try BlurHash(encoding: gradient)
        let flat = try hash.bitmap(width: 32, height: 24, punch: 0)
        #expect((0..<32).allSatisfy { flat.pixel($0, 12) == flat.pixel(0, 0) })
        func spread(_ punch: Double) throws -> Int {
            let row = try hash.bitmap(width: 32, height: 24, punch: punch)
            let reds = (0..<32).map { Int(row.pixel($0, 12)[0]) }
            return reds.max()! - reds.min()!
        }
        #expect(try spread(2) > spread(1))
        #expect(try spread(1) > spread(0.5))
    }

    // MARK: Every pixel format in

    /// BlurHash reads colour only: alpha is ignored (as Wolt's encoders ignore it), and grey
    /// and RGB hash as the same pixels in RGBA.
    @Test func formatsAndAlphaHashAsTheirColours() throws {
        let opaque = Bitmap.make(width: 40, height: 30) { x, y in
            let level = UInt8((x * 6 + y * 2) % 256)
            return [level, level, level, 255]
        }
        let expected = try BlurHash(encoding: opaque)
        #expect(try BlurHash(encoding: opaque.converted(to: .gray8)) == expected)
        #expect(try BlurHash(encoding: opaque.converted(to: .rgb8)) == expected)
        let translucent = Bitmap.make(width: 40, height: 30) { x, y in opaque.pixel(x, y).prefix(3) + [UInt8(60 + x)] }
        #expect(try BlurHash(encoding: translucent) == expected)
    }

    /// 1 × 1000 and 1000 × 1 reduce to 1 × 100 and 100 × 1 and encode; a 1-pixel-wide decode
    /// works.
    @Test(arguments: [(1, 1000), (1000, 1)])
    func extremeAspectRatiosEncode(width: Int, height: Int) throws {
        let line = Bitmap.make(width: width, height: height) { x, y in [UInt8((x + y) % 256), 80, 200, 255] }
        let hash = try BlurHash(encoding: line, components: .init(x: width > height ? 4 : 1, y: width > height ? 1 : 4))
        let decoded = try hash.bitmap(width: min(width, 100), height: min(height, 100))
        #expect((decoded.width, decoded.height) == (min(width, 100), min(height, 100)))
    }

    @Test(arguments: [(0, 3), (3, 0), (10, 1), (1, 10), (-1, 4), (Int.min, Int.max)])
    func componentCountsOutside1To9AreRefused(x: Int, y: Int) {
        let image = Bitmap.make(width: 4, height: 4) { _, _ in [1, 2, 3, 255] }
        ThumbHashTests.expectCorruptData { try BlurHash(encoding: image, components: .init(x: x, y: y)) }
    }

    // MARK: The string

    @Test func thePublishedExampleParses() throws {
        let hash = try BlurHash(Self.published)
        #expect(hash.string == Self.published)
        #expect(hash.description == Self.published)
        #expect(hash.components == .init(x: 4, y: 3))
        let decoded = try hash.bitmap(width: 20, height: 12)
        #expect((decoded.width, decoded.height, decoded.pixelFormat) == (20, 12, .rgba8))
        #expect(stride(from: 3, to: decoded.pixels.count, by: 4).allSatisfy { decoded.pixels[$0] == 255 })
    }

    @Test(arguments: [
        "", "L", "LEHV6", "LEHV6nWB2yk8pyo0adR*.7kCMdn", "LEHV6nWB2yk8pyo0adR*.7kCMdnjj",
        "LEHV6nWB2yk8pyo0adR*.7kCMdn ", "LEHV6nWB2yk8pyo0adR*.7kCMdn\"", "LEHV6nWB2yk8pyo0adR*.7kCMdné",
        "LEHV6nWB2yk8pyo0adR*.7kCMdn\0", "LEHV6nWB2yk8pyo0adR*.7kCMdn/", "LEHV6nWB2yk8pyo0adR*.7kCMdn&",
        // Component counts of 10 (first character 81, 82).
        "}0M}7u", "~0M}7u" + String(repeating: "00", count: 9),
        // A 1 × 1 hash whose average colour is past 24 bits.
        "00~~~~", "00Zzzz",
        // A 2 × 1 hash whose component is 6888, past 18·19² + 18·19 + 18.
        "10M}7u~~", "10M}7u~r",
    ])
    func malformedStringsAreCorruptData(text: String) {
        ThumbHashTests.expectCorruptData { try BlurHash(text) }
    }

    /// A string of any length is refused from its length alone.
    @Test func aLongStringIsRefusedFromItsLength() {
        ThumbHashTests.expectCorruptData { try BlurHash(String(repeating: "0", count: 167)) }
        ThumbHashTests.expectCorruptData { try BlurHash(String(repeating: "L", count: 1 << 20)) }
        #expect((try? BlurHash("|" + String(repeating: "0", count: 165)))?.components == .init(x: 9, y: 9), "166 characters")
    }

    /// Random strings over the alphabet (and a few characters outside it), with the length
    /// their first character asks for half the time: each parses or is `corruptData`, and what
    /// parses decodes.
    @Test func randomStringsNeverTrap() {
        var generator = SeededGenerator(seed: 0x426C_7572_4801)
        let characters = PlaceholderCoding.base83Alphabet + Array(" \"&/\\é".utf8)
        var parsed = 0
        for round in 0..<20_000 {
            var length = Int.random(in: 0...40, using: &generator)
            let first = characters.randomElement(using: &generator)!
            if round % 2 == 0, let size = PlaceholderCoding.base83Digit(first), size < 81 {
                length = 4 + 2 * (size % 9 + 1) * (size / 9 + 1)
            }
            let bytes = [first] + (0..<max(length - 1, 0)).map { _ in characters.randomElement(using: &generator)! }
            let text = String(decoding: bytes, as: UTF8.self)
            do {
                let hash = try BlurHash(text)
                parsed += 1
                let picture = try hash.bitmap(width: 6, height: 4, punch: Double.random(in: 0...3, using: &generator))
                #expect(picture.pixels.count == 6 * 4 * 4)
            } catch {
                #expect(ThumbHashTests.isCorruptData(error), "\(text): \(error)")
            }
        }
        #expect(parsed > 300, "the generator reaches the decoder (\(parsed) valid hashes)")
    }

    // MARK: The decode's bounds

    @Test(arguments: [(0, 10), (10, 0), (-1, -1), (Int.min, 5)])
    func nonPositiveSizesAreInvalid(width: Int, height: Int) throws {
        let hash = try BlurHash(Self.published)
        #expect(throws: ImageError.invalidBitmap("a BlurHash decodes to 1 to 1024 pixels a side, not \(width)×\(height)")) {
            try hash.bitmap(width: width, height: height)
        }
    }

    @Test(arguments: [(1025, 10), (10, 1025), (Int.max, Int.max)])
    func sizesOver1024AreTooLarge(width: Int, height: Int) throws {
        let hash = try BlurHash(Self.published)
        #expect(throws: ImageError.tooLarge("a BlurHash decodes to at most 1024 pixels a side, not \(width)×\(height)")) {
            try hash.bitmap(width: width, height: height)
        }
        #expect(try hash.bitmap(width: 1024, height: 1).width == 1024)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, -1, -Double.leastNonzeroMagnitude])
    func punchesThatAreNegativeOrNotFiniteAreRefused(punch: Double) throws {
        let hash = try BlurHash(Self.published)
        ThumbHashTests.expectCorruptData { try hash.bitmap(width: 4, height: 4, punch: punch) }
    }

    /// A huge finite punch saturates instead of overflowing into not-a-number.
    @Test func aHugePunchSaturates() throws {
        let decoded = try BlurHash(Self.published).bitmap(width: 8, height: 8, punch: .greatestFiniteMagnitude)
        #expect(decoded.pixels.count == 8 * 8 * 4)
    }
}
