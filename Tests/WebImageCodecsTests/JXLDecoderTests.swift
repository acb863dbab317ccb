import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// The JPEG XL decoder against djxl (libjxl's own decoder, run at test time) and against what the
/// fixtures were made to look like (Tests/Fixtures/make-jxl-fixtures.py draws their sources and
/// encodes them with cjxl; scripts/make-color-fixtures.py makes the colour ones).
@Suite struct JXLDecoderTests {
    typealias Files = ISOBMFFTestFiles
    let decoder = JXLDecoder()

    func decode(_ name: String, _ options: ImageDecodingOptions = .init()) throws -> ImageContainer {
        try decoder.decode(Files.fixture(name), options: options)
    }

    /// djxl's PNG (or APNG, for an animation) of `name`, read by our PNG decoder: the same
    /// conversion to sRGB of the profile djxl embeds as ours of the profile libjxl states.
    static func djxl(_ name: String) throws -> ImageContainer {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("djxl-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: output) }
        _ = try Files.run(["djxl", "--num_threads=0", Files.fixtures.appendingPathComponent(name).path, output.path])
        return try CoderRegistry.system().decode(try Data(contentsOf: output))
    }

    static let orientations = (2...8).map { "jxl-orientation\($0).jxl" }

    /// Every 8-bit fixture, still or oriented, lossless or lossy, equals djxl's output exactly:
    /// both ask libjxl for 8-bit samples, and the colour conversion is the same lcms2 transform.
    @Test(arguments: [
        "jxl-lossless.jxl", "jxl-container.jxl", "jxl-lossy.jxl", "jxl-alpha.jxl", "jxl-alpha-lossy.jxl", "jxl-grey-alpha.jxl",
        "color/gradient-adobergb.jxl", "color/gradient-widegamut-lossy.jxl", "color/gradient-prophoto-alpha.jxl",
    ] + orientations)
    func matchesDjxl(fixture: String) throws {
        let container = try decode(fixture)
        #expect(container.format == .jxl)
        #expect(container.orientation == .up)
        #expect(container.iccProfile == nil)
        #expect(container.image.pixelFormat == (fixture.contains("alpha") ? .rgba8 : .rgb8))
        let reference = try Self.djxl(fixture)
        let difference = ColorManagementTests.largestDifference(container.image, reference.image)
        // For the lossy wide-gamut file djxl's PNG states its colour space twice: an iCCP and a
        // cICP of linear BT.709 (1/8/0). PNG's rules put cICP first, and the profile made from
        // the code points rounds differently from libjxl's ICC profile by at most 1.
        let tolerance = fixture.hasSuffix("widegamut-lossy.jxl") ? 1 : 0
        #expect(difference <= tolerance, "\(fixture): differs from djxl by \(difference)")
    }

    /// The lossless gradient decodes to the samples it was drawn with: R = 8x, G = 8y, B = 128,
    /// from the bare codestream and from the container alike.
    @Test(arguments: ["jxl-lossless.jxl", "jxl-container.jxl"])
    func losslessGradientIsExact(fixture: String) throws {
        let image = try decode(fixture).image
        #expect(image.width == 32 && image.height == 32)
        for (x, y) in [(0, 0), (31, 0), (5, 17), (31, 31)] {
            let offset = y * image.bytesPerRow + x * 3
            #expect(Array(image.pixels[offset..<offset + 3]) == [UInt8(x * 8), UInt8(y * 8), 128])
        }
    }

    /// 16-bit samples (2114x, 2114y, 32768: none an 8-bit value) are asked of libjxl as 16-bit
    /// words and rounded to 8 bits: equal to djxl's 16-bit output rounded as `(v × 255 + 32767) / 65535`,
    /// and to the drawn values rounded alike.
    @Test func sixteenBitSamplesAreRounded() throws {
        let container = try decode("jxl-16bit.jxl")
        let reference = try Files.referenceDecode("djxl", ["--num_threads=0"], fixture: "jxl-16bit.jxl")
        #expect(reference.depth == 16)
        let difference = try #require(Files.maximumDifference(container.image, reference) { ($0 * 255 + 32767) / 65535 })
        #expect(difference == 0, "differs from djxl's rounded samples by \(difference)")
        let image = container.image
        for (x, y) in [(1, 0), (7, 3), (30, 29)] {
            let offset = y * image.bytesPerRow + x * 3
            let expected = [x * 2114, y * 2114, 32768].map { UInt8(($0 * 255 + 32767) / 65535) }
            #expect(Array(image.pixels[offset..<offset + 3]) == expected, "(\(x), \(y))")
        }
    }

    /// Alpha falls from opaque on the left to transparent on the right, straight: a nearly
    /// transparent pixel keeps its blue of 128, which premultiplying would darken.
    @Test func alphaIsStraight() throws {
        let image = try decode("jxl-alpha.jxl").image
        #expect(image.pixelFormat == .rgba8)
        let row = 16 * image.bytesPerRow
        #expect(image.pixels[row + 3] == 255 && image.pixels[row + 31 * 4 + 3] == 0)
        #expect(Array(image.pixels[row + 28 * 4..<row + 28 * 4 + 4]) == [224, 128, 128, UInt8(255 - 28 * 255 / 31)])
    }

    /// A grey image with alpha decodes to RGBA with equal channels: grey 8x, alpha 255 − 8y.
    @Test func greyDecodesToRGB() throws {
        let image = try decode("jxl-grey-alpha.jxl").image
        #expect(image.pixelFormat == .rgba8)
        for (x, y) in [(0, 0), (9, 4), (31, 31)] {
            let offset = y * image.bytesPerRow + x * 4
            #expect(Array(image.pixels[offset..<offset + 4]) == [UInt8(x * 8), UInt8(x * 8), UInt8(x * 8), UInt8(255 - y * 8)])
        }
    }

    /// The EXIF orientation cjxl moved into the codestream is applied by libjxl, once: the
    /// quadrants (red, green / blue, white) land where each orientation puts them, worked out by
    /// hand, and the registry (which applies a container's orientation) turns nothing more.
    @Test func orientationsAreAppliedOnce() throws {
        let (r, g, b, w) = (Files.red, Files.green, Files.blue, Files.white)
        let expected: [Int: (Int, Int, [[UInt8]])] = [
            2: (48, 32, [g, r, w, b]), 3: (48, 32, [w, b, g, r]), 4: (48, 32, [b, w, r, g]),
            5: (32, 48, [r, b, g, w]), 6: (32, 48, [b, r, w, g]), 7: (32, 48, [w, g, b, r]), 8: (32, 48, [g, w, r, b]),
        ]
        for (orientation, (width, height, quadrants)) in expected {
            let name = "jxl-orientation\(orientation).jxl"
            let container = try decode(name)
            #expect(container.orientation == .up)
            Files.expectQuadrants(container.image, width: width, height: height, quadrants, tolerance: 0, name)
            let viaRegistry = try CoderRegistry.system().decode(Files.fixture(name))
            #expect(viaRegistry.image == container.image, "\(name) through the registry")
        }
    }

    /// Three frames (red, green, blue) of 100, 250 and 40 ms at cjxl's 1000 ticks per second,
    /// each equal to djxl's APNG frame; the loop count is the file's `num_loops`, 0 (jxlinfo
    /// prints it; cjxl 0.7 writes no other value).
    @Test func animationMatchesDjxl() throws {
        let animation = try #require(try decode("jxl-animated.jxl").animation)
        #expect(animation.frames.map(\.duration) == [.milliseconds(100), .milliseconds(250), .milliseconds(40)])
        #expect(animation.loopCount == 0)
        let reference = try #require(try Self.djxl("jxl-animated.jxl").animation)
        #expect(reference.frames.count == 3)
        #expect(reference.frames.map(\.duration) == animation.frames.map(\.duration))
        for (index, (frame, expected)) in zip(animation.frames, reference.frames).enumerated() {
            #expect(ColorManagementTests.largestDifference(frame.bitmap, expected.bitmap) == 0, "frame \(index)")
        }
        for (frame, colour) in zip(animation.frames, [Files.red, Files.green, Files.blue]) {
            Files.expectQuadrants(frame.bitmap, width: 16, height: 16, [colour, colour, colour, colour], tolerance: 0, "frame")
        }
        var options = ImageDecodingOptions()
        options.firstFrameOnly = true
        options.maximumFrameCount = 1
        let first = try decode("jxl-animated.jxl", options)
        #expect(first.animation == nil)
        #expect(first.image == animation.frames[0].bitmap)
    }

    /// A clock of 30000/1001 ticks per second (libjxl's encoder, jxl-animate.c): 3, 6 and 1
    /// ticks are 100.1, 200.2 and 33.36̅ ms, exact to the nanosecond (jxlinfo prints them to a
    /// tenth of a millisecond), and the file's 3 plays; the frames equal djxl's.
    @Test func tickRateAndLoopCount() throws {
        let animation = try #require(try decode("jxl-loops.jxl").animation)
        #expect(animation.loopCount == 3)
        #expect(animation.frames.map(\.duration) == [.nanoseconds(100_100_000), .nanoseconds(200_200_000), .nanoseconds(33_366_666)])
        let info = try Files.run(["jxlinfo", Files.fixtures.appendingPathComponent("jxl-loops.jxl").path])
        let printed = info.split(separator: "\n").compactMap { line in
            line.contains("duration:") ? Double(line.split(separator: " ").dropLast().last ?? "") : nil
        }
        #expect(printed.count == 3)
        for (frame, milliseconds) in zip(animation.frames, printed) {
            let ours = Double(frame.duration.components.attoseconds) / 1e15 + Double(frame.duration.components.seconds) * 1000
            #expect(abs(ours - milliseconds) <= 0.05, "\(ours) ms against jxlinfo's \(milliseconds)")
        }
        let reference = try #require(try Self.djxl("jxl-loops.jxl").animation)
        #expect(reference.frames.count == 3)
        for (index, (frame, expected)) in zip(animation.frames, reference.frames).enumerated() {
            #expect(ColorManagementTests.largestDifference(frame.bitmap, expected.bitmap) == 0, "frame \(index)")
        }
    }

    /// The player's source gives the whole decode's frames one at a time, again after a reset;
    /// a still image has none.
    @Test func frameSourceMatchesTheWholeDecode() throws {
        let data = try Files.fixture("jxl-animated.jxl")
        let frames = try #require(try decoder.decode(data, options: .init()).animation).frames
        let source = try #require(try decoder.makeAnimationFrameSource(data, options: .init()))
        #expect(source.canvasWidth == 16 && source.canvasHeight == 16 && source.loopCount == 0)
        for _ in 0..<2 {
            var played: [AnimatedImage.Frame] = []
            while let frame = try source.nextFrame() { played.append(frame) }
            #expect(played == frames)
            try source.reset()
        }
        #expect(try decoder.makeAnimationFrameSource(try Files.fixture("jxl-lossless.jxl"), options: .init()) == nil)
    }

    @Test func animationLimits() throws {
        func refused(_ configure: (inout ImageDecodingOptions) -> Void) -> Bool {
            var options = ImageDecodingOptions()
            configure(&options)
            do { _ = try decode("jxl-animated.jxl", options); return false } catch ImageError.tooLarge { return true } catch { return false }
        }
        #expect(refused { $0.maximumFrameCount = 2 })
        #expect(!refused { $0.maximumFrameCount = 3 })
        #expect(refused { $0.maximumAnimationPixels = 16 * 16 * 3 - 1 })
        #expect(refused { $0.maximumAnimationBytes = 16 * 16 * 4 * 3 - 1 })
        #expect(!refused { $0.maximumAnimationBytes = 16 * 16 * 4 * 3 })
        #expect(!refused { $0.maximumFrameCount = 2; $0.firstFrameOnly = true })
    }

    /// Thumbnails are resampled from the upright image, every frame of an animation alike.
    @Test func thumbnailsAreResampledAfterTheOrientation() throws {
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(24)
        let container = try decode("jxl-orientation6.jxl", options)
        Files.expectQuadrants(container.image, width: 16, height: 24,
                              [Files.blue, Files.red, Files.white, Files.green], tolerance: 40, "thumbnail")
        // Through the registry, which sizes the thumbnail from the sniffed header: the same.
        let viaRegistryTurned = try CoderRegistry.system().decode(Files.fixture("jxl-orientation6.jxl"), options: options)
        #expect(viaRegistryTurned.image == container.image)
        options.thumbnail = .maxPixelSize(8)
        let frames = try #require(try decode("jxl-animated.jxl", options).animation).frames
        #expect(frames.count == 3 && frames.allSatisfy { $0.bitmap.width == 8 && $0.bitmap.height == 8 })
        let viaRegistry = try CoderRegistry.system().decode(Files.fixture("jxl-lossy.jxl"), options: options)
        #expect(viaRegistry.image.width == 8 && viaRegistry.image.height == 8)
    }

    /// The size in the header is checked before any pixel: one pixel under the image refuses it,
    /// and a header announcing 30000 × 30000 over 32×32 data (which libjxl would allocate for
    /// and then fail to decode, a corrupt-data error) is refused as too large.
    @Test func pixelLimitIsCheckedFromTheHeader() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 32 * 32 - 1
        #expect { try decode("jxl-lossless.jxl", options) } throws: { error in
            if case ImageError.tooLarge = error { true } else { false }
        }
        options.maximumPixelCount = 32 * 32
        _ = try decode("jxl-lossless.jxl", options)
        #expect { try decode("jxl-announces-30000.jxl") } throws: { error in
            guard case ImageError.tooLarge(let message) = error else { return false }
            return message.contains("30000×30000")
        }
    }

    /// Wide-gamut files within 2 of Pillow's (lcms2's) conversion of djxl's output, as the other
    /// formats' colour tests; with `.preserve` the lossless ones keep their stored values and
    /// the profile libjxl states for them.
    @Test(arguments: ["gradient-adobergb.jxl", "gradient-widegamut-lossy.jxl", "gradient-prophoto-alpha.jxl"])
    func convertsToSRGBAsLcms2DoesForPillow(fixture: String) throws {
        let decoded = try CoderRegistry.system().decode(try ColorManagementTests.fixture(fixture))
        #expect(decoded.iccProfile == nil)
        let difference = ColorManagementTests.largestDifference(decoded.image, try ColorManagementTests.reference(fixture))
        #expect(difference <= 2, "\(fixture): a channel differs by \(difference)")
        guard !fixture.contains("lossy") else { return }
        let stored = try CoderRegistry.system().decode(try ColorManagementTests.fixture(fixture), options: .preservingColor)
        let profile = try #require(stored.iccProfile)
        #expect(profile.count > 128 && profile[36..<40].elementsEqual("acsp".utf8))
        #expect(ColorManagementTests.largestDifference(stored.image, decoded.image) > 10)
    }
}
