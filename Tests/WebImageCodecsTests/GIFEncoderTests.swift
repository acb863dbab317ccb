import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// GIF encoding: exact round trips for frames of up to 256 colours, one-bit transparency,
/// timing and loop count, and quantization for photos.
@Suite struct GIFEncoderTests {
    static func roundTrip(_ container: ImageContainer, options: ImageEncodingOptions = .init()) throws -> ImageContainer {
        try GIFDecoder().decode(try GIFEncoder().encode(container, options: options), options: .init())
    }

    /// Pixels, with the colour of fully transparent ones ignored (GIF keeps no colour there).
    static func visible(_ bitmap: Bitmap) -> [UInt8] {
        stride(from: 0, to: bitmap.pixels.count, by: 4).flatMap { offset -> [UInt8] in
            bitmap.pixels[offset + 3] == 0 ? [0, 0, 0, 0] : Array(bitmap.pixels[offset..<(offset + 4)])
        }
    }

    @Test func stillImageWithFewColoursIsExact() throws {
        var pixels: [UInt8] = []
        // 200 distinct colours.
        for index in 0..<(30 * 20) { pixels += [UInt8(index % 200), UInt8(index % 200 / 10 * 12), 77, 255] }
        let bitmap = try Bitmap(width: 30, height: 20, pixelFormat: .rgba8, pixels: pixels)
        let decoded = try Self.roundTrip(ImageContainer(image: bitmap))
        #expect(decoded.image == bitmap)
        #expect(decoded.animation == nil)
    }

    /// Alpha below 128 is transparent, the rest opaque.
    @Test func oneBitTransparency() throws {
        let bitmap = try Bitmap(width: 4, height: 1, pixelFormat: .rgba8, pixels: [10, 20, 30, 255, 40, 50, 60, 0, 70, 80, 90, 127, 1, 2, 3, 128])
        let decoded = try Self.roundTrip(ImageContainer(image: bitmap))
        #expect(Self.visible(decoded.image) == [10, 20, 30, 255, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 255])
    }

    /// An animation keeps its frames (transparent ones included, each starting from a clear
    /// canvas), its delays in hundredths and its loop count.
    @Test func animationRoundTrip() throws {
        var frames: [Bitmap] = []
        for index in 0..<3 {
            var pixels: [UInt8] = []
            for pixel in 0..<6 {
                pixels += pixel == index ? [0, 0, 0, 0] : [UInt8(index * 80), UInt8(pixel * 40), 7, 255]
            }
            frames.append(try Bitmap(width: 3, height: 2, pixelFormat: .rgba8, pixels: pixels))
        }
        let durations: [Duration] = [.milliseconds(50), .milliseconds(1000), .milliseconds(33)]
        let expectedDurations: [Duration] = [.milliseconds(50), .milliseconds(1000), .milliseconds(30)]
        for plays in [0, 1, 3] {
            let composed = zip(frames, durations).map { AnimatedImage.Frame(bitmap: $0, duration: $1) }
            let animation = AnimatedImage(frames: composed, loopCount: plays)
            let decoded = try #require(try Self.roundTrip(ImageContainer(image: frames[0], animation: animation)).animation)
            #expect(decoded.frames.map { Self.visible($0.bitmap) } == frames.map(Self.visible))
            #expect(decoded.frames.map(\.duration) == expectedDurations)
            #expect(decoded.loopCount == plays)
        }
    }

    @Test func hundredths() {
        #expect(GIFEncoder.hundredths(.milliseconds(34)) == 3)
        #expect(GIFEncoder.hundredths(.milliseconds(35)) == 4)
        #expect(GIFEncoder.hundredths(.seconds(1_000_000)) == 65535)
        #expect(GIFEncoder.hundredths(.seconds(-1)) == 0)
    }

    /// Other pixel formats are accepted; premultiplied alpha is undone.
    @Test func otherPixelFormats() throws {
        let gray = try Bitmap(width: 2, height: 1, pixelFormat: .gray8, pixels: [5, 250])
        #expect(try Self.roundTrip(ImageContainer(image: gray)).image.pixels == [5, 5, 5, 255, 250, 250, 250, 255])
        let premultiplied = try Bitmap(width: 1, height: 1, pixelFormat: .rgba8Premultiplied, pixels: [100, 50, 0, 200])
        #expect(try Self.roundTrip(ImageContainer(image: premultiplied)).image.pixels == [128, 64, 0, 255])
    }

    /// A photo has more than 256 colours: it is quantized, and stays close to the original.
    @Test func photoIsQuantized() throws {
        let png = try PNGDecoder().decode(try PNGGIFReference.fixture("hopper.png"), options: .init())
        let decoded = try Self.roundTrip(png)
        #expect(decoded.image.width == 128 && decoded.image.height == 128)
        #expect(decoded.image != png.image, "more than 256 colours cannot come back exactly")
        let distance = fingerprintDistance(fingerprint(decoded.image), fingerprint(png.image))
        // Median cut without dithering: colours move by tens of units in busy cells, while
        // the image's mean colour stays within a few.
        #expect(distance <= 24, "8×8 cell means within \(distance)")
        for channel in 0..<3 {
            func mean(_ bitmap: Bitmap) -> Int {
                stride(from: channel, to: bitmap.pixels.count, by: 4).reduce(0) { $0 + Int(bitmap.pixels[$1]) } / (128 * 128)
            }
            #expect(abs(mean(decoded.image) - mean(png.image)) <= 6)
        }
    }

    /// The corpus's animated GIFs survive decode → encode → decode: frame count, loop count,
    /// delays, and frames exactly where they have at most 255 colours.
    @Test(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent"), arguments: ["dispose_bgnd.gif", "dispose_prev.gif", "chi.gif", "iss634.gif"])
    func corpusAnimationsRoundTrip(name: String) throws {
        let original = try GIFDecoder().decode(try Data(contentsOf: Reference.corpus!.appendingPathComponent("edge/\(name)")), options: .init())
        let animation = try #require(original.animation)
        let decoded = try #require(try Self.roundTrip(original).animation)
        #expect(decoded.frames.count == animation.frames.count)
        #expect(decoded.loopCount == animation.loopCount)
        #expect(decoded.frames.map(\.duration) == animation.frames.map(\.duration))
        // iss634's composed frames mix colours of several local tables, more than 256 of them,
        // so they are quantized; the others fit a table and come back exactly.
        let tolerance = name == "iss634.gif" ? 8 : 0
        for (ours, theirs) in zip(decoded.frames, animation.frames) {
            let distance = fingerprintDistance(fingerprint(ours.bitmap), fingerprint(theirs.bitmap))
            #expect(distance <= tolerance, "\(name): frames agree within \(distance)")
        }
        if name.hasPrefix("dispose") {
            #expect(decoded.frames.map { Self.visible($0.bitmap) } == animation.frames.map { Self.visible($0.bitmap) })
        }
    }

    @Test func registryEncodesGIF() throws {
        let bitmap = try Bitmap(width: 2, height: 2, pixelFormat: .rgba8, pixels: [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 9, 9, 9, 255])
        let registry = CoderRegistry.system()
        #expect(try registry.decode(try registry.encode(ImageContainer(image: bitmap), as: .gif)).image == bitmap)
    }
}
