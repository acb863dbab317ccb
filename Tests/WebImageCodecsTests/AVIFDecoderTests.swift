import Foundation
import Testing
import WebImageCore
@testable import WebImageCodecs

/// The AVIF decoder against avifdec (libavif's own tool, run at test time) and against what the
/// fixtures were made to look like (make-avif-heif-fixtures.py draws their sources).
@Suite struct AVIFDecoderTests {
    typealias Files = ISOBMFFTestFiles
    let decoder = AVIFDecoder()

    func decode(_ name: String, _ options: ImageDecodingOptions = .init()) throws -> ImageContainer {
        try decoder.decode(Files.fixture(name), options: options)
    }

    /// 8-bit files match avifdec's 8-bit output exactly (the same libavif conversion). 10- and
    /// 12-bit files differ by at most 1: avifdec converts YUV straight to 8-bit RGB, this decoder
    /// converts at the file's depth and then rounds to 8 bits.
    @Test(arguments: [
        ("avif-gradient.avif", 0), ("avif-alpha.avif", 0), ("avif-10bit.avif", 1), ("avif-12bit-420.avif", 1), ("avif-grid.avif", 0),
    ])
    func matchesAvifdec(fixture: String, tolerance: Int) throws {
        let container = try decode(fixture)
        let reference = try Files.referenceDecode("avifdec", ["--depth", "8", "--jobs", "1"], fixture: fixture)
        #expect(container.format == .avif)
        #expect(container.image.pixelFormat == (fixture.contains("alpha") ? .rgba8 : .rgb8))
        let difference = try #require(Files.maximumDifference(container.image, reference))
        #expect(difference <= tolerance, "\(fixture): differs from avifdec by \(difference)")
    }

    /// The lossless gradient decodes to the samples it was drawn with: R = 8x, G = 8y, B = 128.
    @Test func losslessGradientIsExact() throws {
        let image = try decode("avif-gradient.avif").image
        #expect(image.width == 32 && image.height == 32)
        for (x, y) in [(0, 0), (31, 0), (5, 17), (31, 31)] {
            let offset = y * image.bytesPerRow + x * 3
            #expect(Array(image.pixels[offset..<offset + 3]) == [UInt8(x * 8), UInt8(y * 8), 128])
        }
    }

    /// Alpha falls from opaque on the left to transparent on the right, straight (not premultiplied).
    @Test func alphaIsStraight() throws {
        let image = try decode("avif-alpha.avif").image
        #expect(image.pixelFormat == .rgba8)
        let left = Int(image.pixels[16 * image.bytesPerRow + 3]), right = Int(image.pixels[16 * image.bytesPerRow + 31 * 4 + 3])
        #expect(left >= 250 && right <= 5, "alpha \(left) … \(right)")
        // A nearly transparent pixel keeps its colour (B = 128), which premultiplying would darken.
        let blue = Int(image.pixels[16 * image.bytesPerRow + 28 * 4 + 2])
        #expect(abs(blue - 128) <= 12, "blue \(blue) under alpha \(image.pixels[16 * image.bytesPerRow + 28 * 4 + 3])")
    }

    /// `irot` turns counter-clockwise by quarter turns, `imir` mode 0 swaps top and bottom and
    /// mode 1 left and right, `clap` crops; the expected quadrants are worked out by hand from the
    /// source (red, green / blue, white).
    @Test func transformsAreApplied() throws {
        let (r, g, b, w) = (Files.red, Files.green, Files.blue, Files.white)
        let cases: [(String, Int, Int, [[UInt8]])] = [
            ("avif-irot1.avif", 32, 48, [g, w, r, b]),
            ("avif-irot2.avif", 48, 32, [w, b, g, r]),
            ("avif-irot3.avif", 32, 48, [b, r, w, g]),
            ("avif-imir0.avif", 48, 32, [b, w, r, g]),
            ("avif-imir1.avif", 48, 32, [g, r, w, b]),
            ("avif-irot1-imir0.avif", 32, 48, [r, b, g, w]),  // EXIF 5, transposed
            ("avif-irot1-imir1.avif", 32, 48, [w, g, b, r]),  // EXIF 7, transversed
            ("avif-clap.avif", 24, 16, [r, r, r, r]),
        ]
        for (name, width, height, quadrants) in cases {
            let container = try decode(name)
            #expect(container.orientation == .up)
            Files.expectQuadrants(container.image, width: width, height: height, quadrants, tolerance: 2, name)
            // Through the registry, which would rotate again if the decoder reported an orientation.
            let viaRegistry = try CoderRegistry.system().decode(Files.fixture(name))
            #expect(viaRegistry.image == container.image, "\(name) through the registry")
        }
    }

    /// avifdec 0.11 does not apply `irot`/`imir` (it writes the stored image), so the reference
    /// for the transformed files is its output laid out as the EXIF orientation the boxes
    /// amount to, by ``oriented(_:exif:)`` (an index mapping written here, not the library's
    /// ``Bitmap/oriented(_:)``). The files are lossless: the match is exact.
    @Test(arguments: [
        ("avif-irot1.avif", 8), ("avif-irot2.avif", 3), ("avif-irot3.avif", 6), ("avif-imir0.avif", 4), ("avif-imir1.avif", 2),
        ("avif-irot1-imir0.avif", 5), ("avif-irot1-imir1.avif", 7),
    ])
    func transformsMatchAvifdecOriented(fixture: String, exif: Int) throws {
        let stored = try Files.referenceDecode("avifdec", ["--depth", "8", "--jobs", "1"], fixture: fixture)
        let difference = try #require(Files.maximumDifference(try decode(fixture).image, Self.oriented(stored, exif: exif)))
        #expect(difference == 0, "\(fixture): differs from avifdec's pixels in EXIF orientation \(exif) by \(difference)")
    }

    /// `samples` as they are displayed under EXIF orientation `exif`: each displayed pixel
    /// (x, y) is the stored pixel the orientation puts there.
    static func oriented(_ samples: Files.Samples, exif: Int) -> Files.Samples {
        let (w, h, channels) = (samples.width, samples.height, samples.channels)
        let swaps = exif >= 5
        let (width, height) = swaps ? (h, w) : (w, h)
        var values: [Int] = []
        values.reserveCapacity(samples.values.count)
        for y in 0..<height {
            for x in 0..<width {
                let (sx, sy): (Int, Int) = switch exif {
                case 2: (w - 1 - x, y)
                case 3: (w - 1 - x, h - 1 - y)
                case 4: (x, h - 1 - y)
                case 5: (y, x)
                case 6: (y, h - 1 - x)
                case 7: (w - 1 - y, h - 1 - x)
                case 8: (w - 1 - y, x)
                default: (x, y)
                }
                let at = (sy * w + sx) * channels
                values += samples.values[at..<at + channels]
            }
        }
        return Files.Samples(width: width, height: height, channels: channels, depth: samples.depth, values: values)
    }

    /// Each frame of the sequence, from the full decode and from the frame source, matches
    /// avifdec's decode of that frame (`--index`) exactly: the frames differ (red, green, blue),
    /// so one out of order or decoded twice would show.
    @Test func sequenceFramesMatchAvifdec() throws {
        let frames = try #require(try decode("avif-animated.avif").animation).frames
        let source = try #require(try decoder.makeAnimationFrameSource(Files.fixture("avif-animated.avif"), options: .init()))
        for (index, frame) in frames.enumerated() {
            let reference = try Files.referenceDecode("avifdec", ["--depth", "8", "--jobs", "1", "--index", String(index)], fixture: "avif-animated.avif")
            let difference = try #require(Files.maximumDifference(frame.bitmap, reference))
            #expect(difference == 0, "frame \(index) differs from avifdec by \(difference)")
            let streamed = try #require(try source.nextFrame())
            #expect(streamed.bitmap == frame.bitmap, "frame \(index) from the frame source")
        }
        #expect(try source.nextFrame() == nil)
    }

    /// The sequence: three frames (red, green, blue), 100, 250 and 40 ms at a 1000 Hz timescale,
    /// looping forever.
    @Test func animatedSequence() throws {
        let container = try decode("avif-animated.avif")
        let animation = try #require(container.animation)
        #expect(animation.frames.map(\.duration) == [.milliseconds(100), .milliseconds(250), .milliseconds(40)])
        #expect(animation.loopCount == 0)
        for (frame, colour) in zip(animation.frames, [Files.red, Files.green, Files.blue]) {
            Files.expectQuadrants(frame.bitmap, width: 16, height: 16, [colour, colour, colour, colour], tolerance: 2, "frame")
        }
        var options = ImageDecodingOptions()
        options.firstFrameOnly = true
        options.maximumFrameCount = 1
        let first = try decode("avif-animated.avif", options)
        #expect(first.animation == nil)
        #expect(first.image == animation.frames[0].bitmap)
    }

    /// The plays the colour track's edit list states (make-avif-loop-fixtures.py adds one to
    /// avif-animated.avif, which has none): once without the repeat flag, three times for a
    /// track three segments long, forever for an indefinite track, and forever without an edit
    /// list. The full decode and the frame source agree; the frames are the same in every file.
    @Test(arguments: [("avif-animated.avif", 0), ("avif-loop-once.avif", 1), ("avif-loop-3.avif", 3), ("avif-loop-infinite.avif", 0)])
    func loopCountComesFromTheEditList(fixture: String, plays: Int) throws {
        let animation = try #require(try decode(fixture).animation)
        #expect(animation.loopCount == plays)
        let source = try #require(try decoder.makeAnimationFrameSource(Files.fixture(fixture), options: .init()))
        #expect(source.loopCount == plays)
        let original = try #require(try decode("avif-animated.avif").animation)
        #expect(animation.frames.map(\.bitmap) == original.frames.map(\.bitmap))
        #expect(animation.frames.map(\.duration) == original.frames.map(\.duration))
    }

    /// libavif 1.x's rules where the fixtures do not reach, on avif-loop-3.avif with its boxes
    /// rewritten in place: a track duration that is not a whole number of segments rounds up;
    /// an edit list libavif 1.x refuses (two entries, a zero segment or track duration) says
    /// nothing, and the decoder then plays forever as without one.
    @Test func editListRules() throws {
        func plays(trackDuration: UInt64? = nil, entryCount: UInt32? = nil, segment: UInt32? = nil) throws -> Int? {
            var bytes = [UInt8](try Files.fixture("avif-loop-3.avif"))
            func write<T: FixedWidthInteger>(_ value: T?, after type: String, at offset: Int) {
                guard let value else { return }
                let name = Array(type.utf8)
                for at in (0..<(bytes.count - 4)) where Array(bytes[at..<at + 4]) == name {
                    withUnsafeBytes(of: value.bigEndian) { bytes.replaceSubrange(at + 4 + offset..<at + 4 + offset + $0.count, with: $0) }
                }
            }
            // tkhd version 1: the duration follows version and flags, two times, ID and a reserved word.
            write(trackDuration, after: "tkhd", at: 28)
            write(entryCount, after: "elst", at: 4)
            write(segment, after: "elst", at: 8)
            let result = bytes.withUnsafeBytes { ISOBMFFSequence.plays($0) }
            #expect(bytes.withUnsafeBytes { AVIFDecoder.loopCount($0) } == result ?? 0)
            return result
        }
        #expect(try plays() == 3)
        #expect(try plays(trackDuration: 390) == 1)
        #expect(try plays(trackDuration: 3 * 390 - 1) == 3)
        #expect(try plays(trackDuration: 3 * 390 + 1) == 4)
        #expect(try plays(trackDuration: 390 * (UInt64(Int32.max) + 2)) == 0, "past Int32.max repetitions: forever")
        #expect(try plays(trackDuration: 0) == nil)
        #expect(try plays(entryCount: 2) == nil)
        #expect(try plays(segment: 0) == nil)
    }

    @Test func thumbnailIsResampledAfterTheTransforms() throws {
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(24)
        let container = try decode("avif-irot1.avif", options)
        Files.expectQuadrants(container.image, width: 16, height: 24,
                              [Files.green, Files.white, Files.red, Files.blue], tolerance: 40, "thumbnail")
        options.thumbnail = .maxPixelSize(8)
        let frames = try #require(try decode("avif-animated.avif", options).animation).frames
        #expect(frames.allSatisfy { $0.bitmap.width == 8 && $0.bitmap.height == 8 })
    }

    @Test func pixelLimitIsCheckedFromTheHeader() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 48 * 32 - 1
        #expect { try decode("avif-irot2.avif", options) } throws: { error in
            if case ImageError.tooLarge = error { true } else { false }
        }
        options.maximumPixelCount = 48 * 32
        _ = try decode("avif-irot2.avif", options)
        // A header announcing 30000 × 30000 over the same 48×32 bitstream: refused as too large
        // by the header (decoding would fail as a size mismatch, a corrupt-data error).
        let huge = try Files.withAnnouncedSize("avif-gradient.avif", width: 30000, height: 30000)
        #expect { try decoder.decode(huge, options: .init()) } throws: { error in
            if case ImageError.tooLarge = error { true } else { false }
        }
    }

    @Test func animationLimits() throws {
        func refused(_ configure: (inout ImageDecodingOptions) -> Void) -> Bool {
            var options = ImageDecodingOptions()
            configure(&options)
            do { _ = try decode("avif-animated.avif", options); return false } catch ImageError.tooLarge { return true } catch { return false }
        }
        #expect(refused { $0.maximumFrameCount = 2 })
        #expect(refused { $0.maximumAnimationPixels = 16 * 16 * 3 - 1 })
        #expect(refused { $0.maximumAnimationBytes = 16 * 16 * 4 * 3 - 1 })
        #expect(!refused { $0.maximumAnimationBytes = 16 * 16 * 4 * 3 })
        #expect(!refused { $0.maximumFrameCount = 2; $0.firstFrameOnly = true })
    }
}
