import Foundation
import Testing
import WebImageCore
@testable import WebImageCodecs

/// The HEIF decoder against heif-convert (libheif's own tool, run at test time) and against
/// what the fixtures were made to look like (make-avif-heif-fixtures.py, heif-orient.c).
@Suite struct HEIFDecoderTests {
    typealias Files = ISOBMFFTestFiles
    let decoder = HEIFDecoder()

    func decode(_ name: String, _ options: ImageDecodingOptions = .init()) throws -> ImageContainer {
        try decoder.decode(Files.fixture(name), options: options)
    }

    /// Every fixture matches heif-convert exactly: the same libheif conversion to RGB. The
    /// 10-bit file's reference is a 16-bit PNG holding the 10-bit samples shifted left by 6;
    /// they are brought to 8 bits by the rounding rule the decoder documents.
    @Test(arguments: [
        "heic-gradient.heic", "heic-alpha.heic", "heic-10bit.heic", "heic-exif6.heic", "heic-grid.heic",
        "heic-orientation2.heic", "heic-orientation3.heic", "heic-orientation4.heic", "heic-orientation5.heic", "heic-orientation6.heic",
        "heic-orientation7.heic", "heic-orientation8.heic", "heic-orientation6-exif8.heic", "heic-thumbnail-inverse.heic",
    ])
    func matchesHeifConvert(fixture: String) throws {
        let container = try decode(fixture)
        let reference = try Files.referenceDecode("heif-convert", [], fixture: fixture)
        #expect(container.format == .heic)
        #expect(container.image.pixelFormat == (fixture.contains("alpha") ? .rgba8 : .rgb8))
        let to8: (Int) -> Int = reference.depth == 16 ? { (($0 >> 6) * 255 + 511) / 1023 } : { $0 }
        let difference = try #require(Files.maximumDifference(container.image, reference, to8: to8))
        #expect(difference == 0, "\(fixture): differs from heif-convert by \(difference)")
    }

    /// The 10-bit file's mid-grey blue channel (drawn as 32768 of 65535, 512 of 1023 once
    /// encoded) reduces to 128, not to the 127 a plain shift would give.
    @Test func tenBitRoundsToNearest() throws {
        let image = try decode("heic-10bit.heic").image
        let blue = (0..<image.height).map { Int(image.pixels[$0 * image.bytesPerRow + 2]) }
        let mean = Double(blue.reduce(0, +)) / Double(blue.count)
        #expect(abs(mean - 128) < 1.5, "mean blue \(mean)")
    }

    /// libheif applies irot/imir; the expected quadrants are worked out by hand from the source
    /// (red, green / blue, white) and the EXIF orientation each file's boxes were made from.
    @Test func transformationsAreApplied() throws {
        let (r, g, b, w) = (Files.red, Files.green, Files.blue, Files.white)
        let cases: [(String, Int, Int, [[UInt8]])] = [
            ("heic-orientation2.heic", 48, 32, [g, r, w, b]),   // mirrored left to right
            ("heic-orientation3.heic", 48, 32, [w, b, g, r]),   // 180°
            ("heic-orientation4.heic", 48, 32, [b, w, r, g]),   // mirrored top to bottom
            ("heic-orientation5.heic", 32, 48, [r, b, g, w]),   // transposed (the main diagonal)
            ("heic-orientation6.heic", 32, 48, [b, r, w, g]),   // a quarter turn clockwise
            ("heic-orientation7.heic", 32, 48, [w, g, b, r]),   // transversed (the other diagonal)
            ("heic-orientation8.heic", 32, 48, [g, w, r, b]),   // a quarter turn anticlockwise
        ]
        for (name, width, height, quadrants) in cases {
            let container = try decode(name)
            #expect(container.orientation == .up)
            Files.expectQuadrants(container.image, width: width, height: height, quadrants, tolerance: 40, name)
        }
    }

    /// A 2×1 grid of 64×64 tiles (red, blue) assembled into one 128×64 image. (Every heif-enc
    /// 1.15 file is a 1×1 grid cropping its one coded tile; this one has two tiles.)
    @Test func gridTilesAreAssembled() throws {
        let container = try decode("heic-grid.heic")
        Files.expectQuadrants(container.image, width: 128, height: 64, [Files.red, Files.blue, Files.red, Files.blue], tolerance: 8, "grid")
    }

    /// An EXIF Orientation of 6 with no irot is not applied, by the decoder or by the registry
    /// (which applies the orientation a decoder reports): HEIF readers ignore the tag.
    @Test func exifOrientationIsNotAppliedAgain() throws {
        let container = try decode("heic-exif6.heic")
        #expect(container.orientation == .up)
        let viaRegistry = try CoderRegistry.system().decode(Files.fixture("heic-exif6.heic"))
        for image in [container.image, viaRegistry.image] {
            Files.expectQuadrants(image, width: 48, height: 32, [Files.red, Files.green, Files.blue, Files.white], tolerance: 40, "exif6")
        }
    }

    /// What phones write: irot for orientation 6 and an EXIF Orientation tag, here 8 (made to
    /// differ, so that applying it too would show). Only the boxes' quarter turn clockwise is
    /// applied, by the decoder and through the registry, and no orientation is reported.
    @Test func exifBesideIrotIsNotApplied() throws {
        let data = try Files.fixture("heic-orientation6-exif8.heic")
        // The file does carry the tag: a big-endian TIFF block whose one entry says 8.
        let tiff = try #require(data.firstRange(of: Data("MM\0*".utf8)))
        #expect(Exif.orientation(inTIFF: data[tiff.lowerBound...]) == .left)
        let container = try decoder.decode(data, options: .init())
        #expect(container.orientation == .up)
        let viaRegistry = try CoderRegistry.system().decode(data)
        for image in [container.image, viaRegistry.image] {
            Files.expectQuadrants(image, width: 32, height: 48, [Files.blue, Files.red, Files.white, Files.green], tolerance: 40, "irot 6, EXIF 8")
        }
    }

    /// A 48×32 file whose 24×16 thumbnail item is a different picture (the quadrants in the
    /// inverse colours): requests of 24 px and less decode the item, larger ones the primary
    /// image, which the colours tell apart.
    @Test(arguments: [(24, true), (12, true), (25, false), (48, false)])
    func thumbnailItemIsUsedAtAndBelowItsSize(side: Int, usesItem: Bool) throws {
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(side)
        let image = try decode("heic-thumbnail-inverse.heic", options).image
        let size = options.thumbnail!.outputSize(width: 48, height: 32)
        let (r, g, b, w) = (Files.red, Files.green, Files.blue, Files.white)
        let expected = usesItem ? [r, g, b, w].map { $0.map { 255 - $0 } } : [r, g, b, w]
        Files.expectQuadrants(image, width: size.width, height: size.height, expected, tolerance: 40, "thumbnail \(side)")
    }

    /// The 192×128 file carries a 96×64 thumbnail item: requests it covers decode it (96 px),
    /// larger ones the primary image; both give exactly the requested size.
    @Test func thumbnails() throws {
        let data = try Files.fixture("heic-thumbnail.heic")
        func itemSize(_ side: Int) throws -> [Int]? {
            var options = ImageDecodingOptions()
            options.thumbnail = .maxPixelSize(side)
            return try data.withUnsafeBytes { bytes throws -> [Int]? in try HEIFDecoder.thumbnailItemSize(bytes, options: options) }
        }
        #expect(try itemSize(96) == [96, 64])
        #expect(try itemSize(97) == nil)
        for (side, width, height) in [(96, 96, 64), (48, 48, 32), (150, 150, 100)] {
            var options = ImageDecodingOptions()
            options.thumbnail = .maxPixelSize(side)
            let image = try decode("heic-thumbnail.heic", options).image
            Files.expectQuadrants(image, width: width, height: height, [Files.red, Files.green, Files.blue, Files.white], tolerance: 40, "thumbnail \(side)")
        }
    }

    /// A thumbnail small enough for the resampler to box-average first is averaged straight out
    /// of libheif's buffer: the result is the full decode resized, within rounding (the averages
    /// are stored as bytes before the Lanczos step), with and without alpha.
    @Test(arguments: [("heic-grid.heic", 16), ("heic-alpha.heic", 4), ("heic-gradient.heic", 5)])
    func reducedThumbnailsEqualTheFullDecodeResized(name: String, side: Int) throws {
        let full = try decode(name).image
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(side)
        let thumbnail = try decode(name, options).image
        let size = options.thumbnail!.outputSize(width: full.width, height: full.height)
        #expect(HEIFDecoder.reduction(from: (full.width, full.height), to: size) != nil, "\(name) takes the reducing path")
        let expected = try full.resized(width: size.width, height: size.height)
        #expect(thumbnail.width == expected.width && thumbnail.height == expected.height)
        var largest = 0
        for y in 0..<expected.height {
            for x in 0..<expected.width {
                let a = Self.rgba(thumbnail, x, y), b = Self.rgba(expected, x, y)
                for channel in 0..<4 where a[3] > 0 || channel == 3 { largest = max(largest, abs(a[channel] - b[channel])) }
            }
        }
        #expect(largest <= 3, "\(name): a channel differs by \(largest)")
    }

    /// R, G, B and A at `x`, `y` of an 8-bit RGB or straight RGBA bitmap.
    static func rgba(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [Int] {
        let step = bitmap.pixelFormat.bytesPerPixel, at = y * bitmap.bytesPerRow + x * step
        return (0..<4).map { $0 < step ? Int(bitmap.pixels[at + $0]) : 255 }
    }

    @Test func pixelLimitIsCheckedFromTheHeader() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 48 * 32 - 1
        #expect { try decode("heic-exif6.heic", options) } throws: { error in
            if case ImageError.tooLarge = error { true } else { false }
        }
        options.maximumPixelCount = 48 * 32
        _ = try decode("heic-exif6.heic", options)
        let huge = try Files.withAnnouncedSize("heic-gradient.heic", width: 30000, height: 30000)
        #expect { try decoder.decode(huge, options: .init()) } throws: { error in
            if case ImageError.tooLarge = error { true } else { false }
        }
    }
}
