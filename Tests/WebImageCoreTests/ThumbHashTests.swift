import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCore

/// `ThumbHash`: what an encode keeps (colours, alpha, aspect ratio), every pixel format in, and
/// hostile input out: every malformed string or byte array is `corruptData`, after bounded work,
/// and nothing traps. The reference comparisons are in PlaceholderReferenceTests.
@Suite struct ThumbHashTests {
    /// Evan Wallace's demo page's hash (field.jpg, shown as hex there): 21 bytes, landscape,
    /// 7 × 5 luminance terms, no alpha.
    static let published = "3OcRJYB4d3h/iIeHeEh3eIhw+j3A"

    static func isCorruptData(_ error: any Error) -> Bool {
        if case .corruptData = error as? ImageError { true } else { false }
    }

    /// Whether `body` throws ``ImageError/corruptData(_:)``.
    static func throwsCorruptData<T>(_ body: () throws -> T) -> Bool {
        do {
            _ = try body()
            return false
        } catch let error as ImageError {
            return isCorruptData(error)
        } catch {
            return false
        }
    }

    /// Expects `body` to throw ``ImageError/corruptData(_:)``.
    static func expectCorruptData<T>(_ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
                                     _ body: () throws -> T) {
        let refused = throwsCorruptData(body)
        #expect(refused, comment, sourceLocation: sourceLocation)
    }

    /// The mean absolute difference of every channel sample of two bitmaps of one size.
    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        Double(zip(a.pixels, b.pixels).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(a.pixels.count)
    }

    // MARK: What an encode keeps

    /// A flat colour comes back within the header's quantisation of the average (6 bits of
    /// luminance, 6 of each colour difference: a few levels), opaque.
    @Test func aSolidColourDecodesToThatColour() {
        let solid = Bitmap.make(width: 50, height: 50) { _, _ in [200, 120, 40, 255] }
        let hash = ThumbHash(encoding: solid)
        #expect(!hash.hasAlpha)
        #expect(hash.aspectRatio == 1)
        let decoded = hash.bitmap(width: 50, height: 50)
        #expect(maximumDifference(decoded.pixels, solid.pixels) <= 4)
    }

    /// A horizontal gradient from red to blue: the low frequencies a ThumbHash keeps hold it
    /// within 14 levels on average (10.2 measured with a model of this code, the largest error
    /// at the ends, where the cosines flatten the ramp).
    @Test func aGradientComesBackClose() {
        let gradient = Bitmap.make(width: 80, height: 60) { x, _ in
            [UInt8(x * 255 / 79), 100, UInt8(255 - x * 255 / 79), 255]
        }
        let hash = ThumbHash(encoding: gradient)
        #expect(hash.bytes.count == 21, "no alpha, 7 × 5 luminance terms")
        #expect(abs(hash.aspectRatio - 7.0 / 5.0) < 1e-12)
        let difference = Self.meanDifference(hash.bitmap(width: 80, height: 60), gradient)
        #expect(difference <= 14, "mean difference \(difference)")
    }

    /// Transparency is kept: the transparent half decodes mostly transparent, the opaque half
    /// mostly opaque and of its colour (the decoded colour of the transparent half is the
    /// average the encoder composited it over).
    @Test func alphaIsKept() {
        let half = Bitmap.make(width: 60, height: 40) { x, _ in x < 30 ? [0, 0, 0, 0] : [30, 160, 90, 255] }
        let hash = ThumbHash(encoding: half)
        #expect(hash.hasAlpha)
        #expect(hash.bytes.count == 23, "6 header bytes, then 10 + 10 + 14 AC terms in 17 bytes")
        let decoded = hash.bitmap(width: 60, height: 40)
        func meanAlpha(_ columns: Range<Int>) -> Double {
            let values = (0..<40).flatMap { y in columns.map { Double(decoded.pixel($0, y)[3]) } }
            return values.reduce(0, +) / Double(values.count)
        }
        #expect(meanAlpha(0..<30) < 64)
        #expect(meanAlpha(30..<60) > 192)
        let right = decoded.pixel(45, 20)
        #expect(zip(right.prefix(3), [30, 160, 90] as [UInt8]).allSatisfy { abs(Int($0) - Int($1)) <= 16 }, "\(right)")
    }

    /// The aspect ratio comes from the luminance terms along each axis: 1 × 1000 keeps one
    /// column of terms (1/7), 1000 × 1 one row (7), and the decoded picture follows it.
    @Test(arguments: [(1, 1000, 1.0 / 7.0, 5, 32), (1000, 1, 7.0, 32, 5), (300, 200, 7.0 / 5.0, 32, 23), (200, 300, 5.0 / 7.0, 23, 32)])
    func extremeAspectRatiosAreKept(width: Int, height: Int, ratio: Double, decodedWidth: Int, decodedHeight: Int) {
        let image = Bitmap.make(width: width, height: height) { x, y in [UInt8((x + y) % 256), 80, 200, 255] }
        let hash = ThumbHash(encoding: image)
        #expect(abs(hash.aspectRatio - ratio) < 1e-12)
        let decoded = hash.bitmap()
        #expect((decoded.width, decoded.height) == (decodedWidth, decodedHeight))
        #expect(decoded.pixelFormat == .rgba8)
        #expect((try? ThumbHash(bytes: hash.bytes)) == hash, "the encoder's bytes validate")
    }

    // MARK: Every pixel format in

    /// Grey, grey with alpha, opaque RGB and RGBX hash as the same pixels in straight RGBA do.
    @Test func greyAndOpaqueFormatsHashAsTheirRGBA() {
        let rgba = Bitmap.make(width: 40, height: 30) { x, y in
            let level = UInt8((x * 6 + y * 2) % 256)
            return [level, level, level, UInt8(255 - x * 3)]
        }
        let expected = ThumbHash(encoding: rgba)
        #expect(ThumbHash(encoding: rgba.converted(to: .grayAlpha8)) == expected)
        let opaque = ThumbHash(encoding: rgba.converted(to: .rgb8))
        #expect(ThumbHash(encoding: rgba.converted(to: .gray8)) == opaque)
        let rgbx = try! Bitmap(width: 40, height: 30, pixelFormat: PixelFormat(channels: .rgba, alpha: .none), pixels: rgba.pixels)
        #expect(ThumbHash(encoding: rgbx) == opaque)
    }

    /// Premultiplied input is un-premultiplied: alphas of 255, 51 (a fifth) and 0 with colours
    /// that are multiples of 5 premultiply exactly, so the hashes must be equal.
    @Test func premultipliedInputHashesAsStraight() throws {
        func pixel(_ x: Int, _ y: Int) -> [UInt8] {
            let alpha: UInt8 = [255, 51, 0][(x / 10 + y / 10) % 3]
            return alpha == 0 ? [0, 0, 0, 0] : [UInt8(x * 5 % 256), UInt8(y * 5 % 256), 125, alpha]
        }
        let straight = Bitmap.make(width: 50, height: 40, pixel)
        let premultiplied = Bitmap.make(width: 50, height: 40, format: .rgba8Premultiplied) { x, y in
            let p = pixel(x, y)
            return p.prefix(3).map { UInt8(Int($0) * Int(p[3]) / 255) } + [p[3]]
        }
        #expect(ThumbHash(encoding: premultiplied) == ThumbHash(encoding: straight))
    }

    /// A bitmap larger than 100 px is hashed as its reduction.
    @Test func aLargeBitmapIsHashedAsItsReduction() {
        let large = Bitmap.make(width: 640, height: 360) { x, y in [UInt8(x % 256), UInt8(y % 256), 90, 255] }
        #expect(ThumbHash(encoding: large) == ThumbHash(encoding: large.placeholderReduction()))
        #expect(ThumbHash(encoding: large).aspectRatio == 7.0 / 4.0)
    }

    // MARK: The text form

    @Test func base64RoundTripsWithAndWithoutPadding() throws {
        let hash = try ThumbHash(Self.published)
        #expect(hash.bytes.count == 21)
        #expect(hash.base64 == Self.published)
        #expect(hash.description == Self.published)
        #expect(!hash.hasAlpha)
        #expect(abs(hash.aspectRatio - 1.4) < 1e-12)
        let decoded = hash.bitmap()
        #expect((decoded.width, decoded.height) == (32, 23), "the reference's size for a ratio of 1.4")
        // A hash whose byte count is not a multiple of 3 has padding; both forms parse.
        let alpha = ThumbHash(encoding: Bitmap.make(width: 60, height: 40) { x, _ in x < 30 ? [0, 0, 0, 0] : [30, 160, 90, 255] })
        #expect(alpha.base64.hasSuffix("="))
        let unpadded = String(alpha.base64.prefix { $0 != "=" })
        #expect(try ThumbHash(unpadded) == alpha)
        #expect(try ThumbHash(alpha.base64) == alpha)
        #expect(try ThumbHash(bytes: alpha.bytes) == alpha)
    }

    @Test(arguments: [
        "", "A", "AB", "====", "3OcRJYB4d3h/iIeHeEh3eIhw+j3A=", "3OcRJYB4d3h/iIeHeEh3eIhw+j3A==",
        " 3OcRJYB4d3h/iIeHeEh3eIhw+j3A", "3OcRJYB4d3h/iIeH eEh3eIhw+j3A", "3OcRJYB4d3h_iIeHeEh3eIhw-j3A",
        "3OcRJYB4d3h/iIeHeEh3eIhw+j3", "3OcRJYB4d3h/iIeHeEh3eIhw", "3OcRJYB4d3h/iIeHeEh3eIhw+j3AAAAA",
        "3OcRJYB4d3h/iIeHeEh3eIhw+j3Aé", "3OcRJYB4d3h/iIeHe=h3eIhw+j3A", "3OcRJYB4d3h/iIeHeEh3eIhw+j3A\0",
        "3OcRJYB4d3h/iIeHeEh3eIhw+j3A\n", "\u{FEFF}3OcRJYB4d3h/iIeHeEh3eIhw+j3A",
    ])
    func malformedStringsAreCorruptData(text: String) {
        Self.expectCorruptData { try ThumbHash(text) }
    }

    /// A string of any length is refused from its length alone, before it is read.
    @Test func aLongStringIsRefusedFromItsLength() {
        Self.expectCorruptData { try ThumbHash(String(repeating: "A", count: 1 << 20)) }
        Self.expectCorruptData { try ThumbHash(String(repeating: "3OcRJYB4d3h/iIeHeEh3eIhw+j3A", count: 2)) }
    }

    /// Headers no encoder writes, and lengths other than the header's.
    @Test func malformedBytesAreCorruptData() throws {
        let valid = try ThumbHash(Self.published).bytes
        var zeroLuminance = valid
        zeroLuminance[3] &= ~7
        var alphaFlagWithoutItsLayout = valid
        alphaFlagWithoutItsLayout[2] |= 0x80   // now 6 header bytes and 14 alpha terms are announced
        var tooManyLuminanceTermsForAlpha = ThumbHash(encoding: Bitmap.make(width: 60, height: 40) { x, _ in
            x < 30 ? [0, 0, 0, 0] : [30, 160, 90, 255]
        }).bytes
        tooManyLuminanceTermsForAlpha[3] |= 7  // 7, where alpha allows 5
        let cases: [[UInt8]] = [
            [], [0xDC], Array(valid.prefix(4)), Array(valid.prefix(5)), Array(valid.dropLast()), valid + [0],
            valid + valid, zeroLuminance, alphaFlagWithoutItsLayout, tooManyLuminanceTermsForAlpha,
            [UInt8](repeating: 0xFF, count: 25), [UInt8](repeating: 0, count: 1 << 20),
        ]
        for bytes in cases {
            Self.expectCorruptData("\(bytes.prefix(8)) (\(bytes.count) bytes)") { try ThumbHash(bytes: bytes) }
        }
    }

    /// Random byte arrays and base64 strings: each parses or is `corruptData`, and what parses
    /// decodes (a sanity check of the decoder on every header a fuzzer could build).
    @Test func randomInputNeverTraps() {
        var generator = SeededGenerator(seed: 0x7448_6173_6801)
        var parsed = 0
        for round in 0..<20_000 {
            let count = Int.random(in: 0...30, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 2 == 0, count >= 5 {
                // Half the inputs get a length that agrees with their header, to reach the decoder.
                bytes[3] = bytes[3] & ~7 | UInt8.random(in: 1...5, using: &generator)
                let layout = ThumbHash.Layout(bytes)
                bytes = Array((bytes + [UInt8](repeating: 0x5A, count: 30)).prefix(layout.byteCount))
            }
            do {
                let hash = try ThumbHash(bytes: bytes)
                parsed += 1
                let picture = hash.bitmap(maxSide: 8)
                #expect(max(picture.width, picture.height) == 8)
                #expect(try ThumbHash(hash.base64) == hash)
            } catch {
                #expect(Self.isCorruptData(error))
            }
        }
        #expect(parsed > 1000, "the generator reaches the decoder (\(parsed) valid hashes)")
    }

    /// `maxSide` is clamped to 1…1024 whatever a caller passes.
    @Test(arguments: [(Int.min, 1), (-5, 1), (0, 1), (1, 1), (32, 32), (5_000, 1024), (Int.max, 1024)])
    func decodedSizesAreBounded(maxSide: Int, longer: Int) throws {
        let decoded = try ThumbHash(Self.published).bitmap(maxSide: maxSide)
        #expect(max(decoded.width, decoded.height) == longer)
        #expect(min(decoded.width, decoded.height) >= 1)
    }
}
