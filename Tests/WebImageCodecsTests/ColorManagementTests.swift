import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Decoding converts a source's ICC profile to sRGB by default (lcms2), and drops the profile.
/// The inputs (Tests/Fixtures/color, made by scripts/make-color-fixtures.py) are tagged with real
/// profiles from Debian's colord-data by each format's own encoder; each reference
/// (`NAME.srgb.png`) is the format's reference decoder followed by Pillow's ImageCms conversion
/// to sRGB, perceptual intent: an independent pipeline.
@Suite struct ColorManagementTests {
    static let registry = CoderRegistry.system()

    static let fixtures = [
        "swapped-green.png", "swapped-green.jpg", "gradient-adobergb.png", "gradient-prophoto-alpha.png",
        "gradient-adobergb.jpg", "gradient-widegamut.webp", "gradient-adobergb.avif", "gradient-prophoto.heic",
        "gradient-cmyk.jpg", "gradient-p3-nclx.avif", "gradient-bt2020-nclx.avif",
        "gradient-p3-cicp.png", "gradient-adobergb-chrm.png", "gradient-gray-linear.jpg", "gradient-gray-linear.png",
    ]

    static func fixture(_ name: String) throws -> Data {
        try JPEGTests.fixture("color/" + name)
    }

    /// The reference, as straight RGBA (it is an untagged PNG: nothing to convert).
    static func reference(_ name: String) throws -> Bitmap {
        try registry.decode(try fixture(name + ".srgb.png")).image
    }

    /// Straight RGBA rows without padding; RGB gets alpha 255 (AVIF and HEIF decode opaque
    /// images to RGB8).
    static func rgba(_ bitmap: Bitmap) -> [UInt8] {
        let channels = bitmap.pixelFormat.bytesPerPixel
        var result: [UInt8] = []
        result.reserveCapacity(bitmap.width * bitmap.height * 4)
        for row in 0..<bitmap.height {
            for column in 0..<bitmap.width {
                let start = row * bitmap.bytesPerRow + column * channels
                result += bitmap.pixels[start..<start + 3]
                result.append(channels == 4 ? bitmap.pixels[start + 3] : 255)
            }
        }
        return result
    }

    /// The largest difference of any channel of any pixel; 255 when the sizes differ.
    static func largestDifference(_ a: Bitmap, _ b: Bitmap) -> Int {
        guard a.width == b.width, a.height == b.height else {
            Issue.record("\(a.width)×\(a.height) against \(b.width)×\(b.height)")
            return 255
        }
        return zip(rgba(a), rgba(b)).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    /// Every format: within 2 of the reference on every channel (3 for CMYK, see
    /// ``tolerance(_:)``), and no profile left.
    @Test(arguments: fixtures)
    func convertsToSRGBAsLcms2DoesForPillow(fixture: String) throws {
        let decoded = try Self.registry.decode(try Self.fixture(fixture))
        #expect(decoded.iccProfile == nil)
        let difference = Self.largestDifference(decoded.image, try Self.reference(fixture))
        #expect(difference <= Self.tolerance(fixture), "\(fixture): a channel differs by \(difference)")
    }

    /// 2, except for the CMYK JPEG: a CMYK profile is a four-dimensional table, and the
    /// references' lcms2 (2.19, in Pillow's wheel) interpolates it slightly differently from
    /// Debian's (2.14), which this library links: with identical CMYK samples (the naive
    /// conversions of both agree exactly), 3 of 4,608 channel values differ by 3, 52 by 2.
    static func tolerance(_ fixture: String) -> Int {
        fixture.contains("cmyk") ? 3 : 2
    }

    /// A profile that swaps red and green: the pure green that is stored is red in sRGB.
    @Test(arguments: ["swapped-green.png", "swapped-green.jpg"])
    func aGreenPixelTaggedAsSwappedIsRed(fixture: String) throws {
        let image = try Self.registry.decode(try Self.fixture(fixture)).image
        let pixel = Array(image.pixels[(3 * image.bytesPerRow + 3 * 4)...].prefix(4))
        #expect(pixel[0] >= 250 && pixel[1] <= 5 && pixel[2] <= 5 && pixel[3] == 255, "\(pixel)")
        let stored = try Self.registry.decode(try Self.fixture(fixture), options: .preservingColor)
        #expect(stored.iccProfile != nil)
        #expect(Array(stored.image.pixels[(3 * image.bytesPerRow + 3 * 4)...].prefix(3)).map { $0 > 128 } == [false, true, false])
    }

    /// `.preserve`: the stored values and the profile, byte for byte as the file holds it.
    @Test(arguments: fixtures)
    func preserveKeepsTheStoredValuesAndTheProfile(fixture: String) throws {
        let data = try Self.fixture(fixture)
        let stored = try Self.registry.decode(data, options: .preservingColor)
        let profile = try #require(stored.iccProfile)
        #expect(profile.count > 128 && profile[36..<40].elementsEqual("acsp".utf8))
        #expect(stored.image != (try Self.registry.decode(data)).image)
    }

    /// Thumbnails are converted too (after the resize, the fewer pixels): a DCT-scaled JPEG and a
    /// resized PNG land on the reference's colours.
    @Test(arguments: ["swapped-green.jpg", "swapped-green.png"])
    func thumbnailsAreConverted(fixture: String) throws {
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(4)
        let thumbnail = try Self.registry.decode(try Self.fixture(fixture), options: options)
        #expect(thumbnail.image.width == 4 && thumbnail.iccProfile == nil)
        #expect(thumbnail.image.pixels[0] >= 250 && thumbnail.image.pixels[1] <= 5)
    }

    /// Incremental decoders convert their previews and final image as the one-shot decode does.
    @Test(arguments: ["gradient-adobergb.jpg", "gradient-adobergb.png", "gradient-widegamut.webp", "gradient-cmyk.jpg"])
    func incrementalDecodesConvertAlike(fixture: String) throws {
        let data = try Self.fixture(fixture)
        let format = try #require(ImageHeader(sniffing: data)?.format)
        let incremental = try #require(Self.registry.makeIncrementalDecoder(for: format, options: .init()))
        var offset = 0
        while offset < data.count {
            let end = min(offset + 1000, data.count)
            try incremental.append(data[offset..<end])
            if let preview = try incremental.preview() { #expect(preview.iccProfile == nil) }
            offset = end
        }
        let final = try incremental.finish()
        #expect(final.iccProfile == nil)
        #expect(final.image == (try Self.registry.decode(data)).image)
    }

    /// A profile lcms2 cannot read is dropped and the pixels left as stored, as browsers ignore it.
    @Test func anUnreadableProfileIsDropped() throws {
        let png = try Self.fixture("gradient-adobergb.png")
        let stored = try Self.registry.decode(png, options: .preservingColor)
        var container = stored
        container.iccProfile = Data(repeating: 0x5A, count: 500)
        let reencoded = try Self.registry.encode(container, as: .png)
        let decoded = try Self.registry.decode(reencoded)
        #expect(decoded.iccProfile == nil)
        #expect(decoded.image == stored.image)
    }

    /// A profile that is sRGB by another name (the 3,144-byte sRGB profile of
    /// `Demo/images/thumb-Kite.jpg`) is recognised once and costs no conversion: the pixels are
    /// the stored ones, the profile is dropped. Adobe RGB's transform is no identity.
    @Test func anSRGBProfileLeavesThePixelsAsStored() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Demo/images/thumb-Kite.jpg")
        let data = try Data(contentsOf: url)
        let stored = try Self.registry.decode(data, options: .preservingColor)
        let profile = try #require(stored.iccProfile)
        #expect(try #require(SRGBTransform.cached(for: profile, layout: .rgba8)).isIdentity)
        let converted = try Self.registry.decode(data)
        #expect(converted.iccProfile == nil && converted.image == stored.image)

        let adobe = try #require(try Self.registry.decode(try Self.fixture("gradient-adobergb.png"), options: .preservingColor).iccProfile)
        #expect(try #require(SRGBTransform.cached(for: adobe, layout: .rgba8)).isIdentity == false)
    }

    /// A CMYK JPEG goes through its CMYK profile, not the naive inversion, which is off here
    /// by far more than the tolerance (the profile's press is nothing like "ink subtracts
    /// light").
    @Test func cmykGoesThroughItsProfile() throws {
        let data = try Self.fixture("gradient-cmyk.jpg")
        let reference = try Self.reference("gradient-cmyk.jpg")
        let naive = try Self.registry.decode(data, options: .preservingColor).image
        #expect(Self.largestDifference(naive, reference) > 20)
        #expect(Self.largestDifference(try Self.registry.decode(data).image, reference) <= Self.tolerance("cmyk"))
    }

    /// Colour stated by `nclx` code points alone (Display P3, BT.2020; no ICC profile) is the AVIF
    /// decoder's to convert. The HEIF decoder read these files through libheif too until fuzz
    /// finding #18: every AV1 image is now refused there (AVIF is `AVIFDecoder`'s), and heif-enc
    /// 1.15 writes no `nclx` box for an HEVC file, so libheif's `nclx` path has no fixture left.
    @Test(arguments: ["gradient-p3-nclx.avif", "gradient-bt2020-nclx.avif"])
    func nclxAVIFFilesAreTheAVIFDecoders(fixture: String) throws {
        #expect { try HEIFDecoder().decode(try Self.fixture(fixture), options: .init()) } throws: { error in
            if case ImageError.unsupportedFormat = error { true } else { false }
        }
        let decoded = try AVIFDecoder().decode(try Self.fixture(fixture), options: .init())
        #expect(decoded.iccProfile == nil)
        let difference = Self.largestDifference(decoded.image, try Self.reference(fixture))
        #expect(difference <= 2, "\(fixture): a channel differs by \(difference)")
    }
}
