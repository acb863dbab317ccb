import Foundation
import Synchronization
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

@Suite struct CoderRegistryTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static func demo(_ name: String) throws -> Data {
        try Data(contentsOf: repository.appendingPathComponent("Demo/images/\(name)"))
    }

    @Test func bytesOfNoKnownFormatOrWithoutADecoderAreUnsupported() throws {
        let registry = CoderRegistry.system()
        #expect(throws: ImageError.self) { try registry.decode(Data("hello, world".utf8)) }
        let bmp = try Data(contentsOf: Self.repository.appendingPathComponent("Tests/Fixtures/hopper-32.bmp"))
        do {
            _ = try registry.decode(bmp)
            Issue.record("a BMP decoded without a BMP decoder")
        } catch let error as ImageError {
            #expect(error == .unsupportedFormat("no decoder for bmp"))
        }
        let image = try registry.decode(try Self.demo("flower.webp"))
        #expect(throws: ImageError.self) { try registry.encode(image, as: .tiff) }
    }

    /// AVIF, HEIC/HEIF, JPEG XL and SVG are decoded; AVIF is encoded too (libaom at speed 10).
    @Test func theSystemRegistryDecodesFifteenFormatsAndEncodesSix() {
        let registry = CoderRegistry.system()
        #expect(registry.decodableFormats == [.jpeg, .png, .apng, .gif, .webp, .avif, .heic, .heif, .jxl, .svg, .mp4, .mov, .webm, .mkv, .pdf])
        for format in [ImageFormat.jpeg, .png, .gif, .webp, .avif, .jxl] { #expect(registry.encoder(for: format) != nil) }
        // Videos and documents are sources only: an output is always an image.
        for format in [ImageFormat.heic, .mp4, .mov, .webm, .mkv, .pdf] { #expect(registry.encoder(for: format) == nil) }
    }

    /// A user's decoder registered later replaces the built-in one for its formats.
    @Test func theLastRegisteredDecoderForAFormatWins() throws {
        final class CountingDecoder: ImageDecoder {
            let calls = Mutex(0)
            let formats: Set<ImageFormat> = [.webp]
            func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
                calls.withLock { $0 += 1 }
                return try CoderRegistry.system().decoder(for: .webp)!.decode(data, options: options)
            }
        }
        let registry = CoderRegistry.system()
        let counting = CountingDecoder()
        registry.register(counting)
        _ = try registry.decode(try Self.demo("flower.webp"))
        #expect(counting.calls.withLock { $0 } == 1)
        #expect(registry.decoder(for: .jpeg) != nil)  // other formats untouched
    }

    @Test func orientationIsAppliedOnceForEveryDecoderUnlessTurnedOff() throws {
        let registry = CoderRegistry.system()
        let data = try Self.demo("hopper_orientation_6.jpg")
        let upright = try registry.decode(data)
        var options = ImageDecodingOptions()
        options.appliesOrientation = false
        let stored = try registry.decode(data, options: options)
        #expect(upright.orientation == .right && stored.orientation == .right)
        #expect(upright.image == stored.image.oriented(.right))
    }

    @Test(arguments: [ImageDecodingOptions.Thumbnail.maxPixelSize(100), .size(width: 100, height: 50, contentMode: .fill),
                      .size(width: 100, height: 50, contentMode: .fit), .size(width: 90, height: 90, contentMode: .stretch)])
    func thumbnailsComeOutAtExactlyTheComputedSize(thumbnail: ImageDecodingOptions.Thumbnail) throws {
        let registry = CoderRegistry.system()
        for name in ["flower.webp", "thumb-Kite.jpg", "Spring.png", "chi-animated.gif"] {
            let data = try Self.demo(name)
            let full = try registry.decode(data)
            var options = ImageDecodingOptions()
            options.thumbnail = thumbnail
            let image = try registry.decode(data, options: options)
            var expected = thumbnail.outputSize(width: full.image.width, height: full.image.height)
            // A fill covers the box, then is cropped to it: exactly the box.
            if case .size(let width, let height, .fill) = thumbnail {
                expected = (min(width, expected.width), min(height, expected.height))
                #expect(expected == (100, 50))
            }
            #expect(image.image.width == expected.width && image.image.height == expected.height, "\(name): \(image.image.width)×\(image.image.height), expected \(expected)")
            for frame in image.animation?.frames ?? [] {
                #expect(frame.bitmap.width == expected.width && frame.bitmap.height == expected.height, "\(name)")
            }
        }
    }
}
