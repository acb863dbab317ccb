import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// The JPEG XL encoder, its files read back by djxl (libjxl's own decoder, run at test time).
@Suite struct JXLEncoderTests {
    typealias Files = ISOBMFFTestFiles
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `data` written to a file and decoded by djxl to PNG, read by our PNG decoder.
    static func djxl(_ data: Data) throws -> ImageContainer {
        let folder = TemporaryDirectory("jxl-encoder")
        defer { folder.remove() }
        let input = folder.url.appendingPathComponent("in.jxl"), output = folder.url.appendingPathComponent("out.png")
        try data.write(to: input)
        _ = try Files.run(["djxl", "--num_threads=0", input.path, output.path])
        return try CoderRegistry.system().decode(try Data(contentsOf: output))
    }

    static func photo() throws -> ImageContainer {
        try CoderRegistry.system().decode(try Data(contentsOf: repository.appendingPathComponent("Demo/images/flower.webp")))
    }

    /// Lossless: djxl gives back exactly the samples, with and without alpha.
    @Test func losslessRoundTripsExactly() throws {
        var options = ImageEncodingOptions()
        options.lossless = true
        let photo = try Self.photo()
        let opaque = try Self.djxl(try JXLEncoder().encode(photo, options: options))
        #expect(ColorManagementTests.largestDifference(opaque.image, photo.image) == 0)
        let alpha = try CoderRegistry.system().decode(try Data(contentsOf: Self.repository.appendingPathComponent("Tests/Fixtures/hopper-rgba-32.png")))
        let roundTrip = try Self.djxl(try JXLEncoder().encode(alpha, options: options))
        #expect(roundTrip.image.pixelFormat.hasAlpha)
        #expect(ColorManagementTests.largestDifference(roundTrip.image, alpha.image) == 0)
    }

    /// Lossy: close to the source (quality 90 is libjxl's visually lossless distance 1), smaller
    /// at a lower quality, and smaller than a JPEG of the same quality.
    @Test func lossyQualityTradesSizeForFidelity() throws {
        let photo = try Self.photo()
        var options = ImageEncodingOptions()
        options.quality = 90
        let high = try JXLEncoder().encode(photo, options: options)
        options.quality = 40
        let low = try JXLEncoder().encode(photo, options: options)
        #expect(low.count < high.count)
        options.quality = 90
        #expect(high.count < (try JPEGEncoder().encode(photo, options: options)).count)
        let decoded = try Self.djxl(high).image
        var total = 0
        for y in 0..<decoded.height {
            for x in 0..<decoded.width {
                let a = y * decoded.bytesPerRow + x * decoded.pixelFormat.bytesPerPixel, b = y * photo.image.bytesPerRow + x * photo.image.pixelFormat.bytesPerPixel
                for channel in 0..<3 { total += abs(Int(decoded.pixels[a + channel]) - Int(photo.image.pixels[b + channel])) }
            }
        }
        let mean = Double(total) / Double(decoded.width * decoded.height * 3)
        #expect(mean < 3, "mean difference \(mean) at quality 90")
    }

    /// An animation stays one: frames, durations and loop count, read back by our decoder.
    @Test func animationsKeepTheirFramesDurationsAndLoops() throws {
        let frames = try [255, 0].map { red in
            AnimatedImage.Frame(bitmap: try Bitmap(width: 8, height: 8, pixelFormat: .rgba8, pixels: Array(Array(repeating: [UInt8(red), 0, 200, 255], count: 64).joined())),
                                duration: .milliseconds(red == 255 ? 120 : 70))
        }
        let container = ImageContainer(image: frames[0].bitmap, animation: AnimatedImage(frames: frames, loopCount: 3))
        var options = ImageEncodingOptions()
        options.lossless = true
        let decoded = try JXLDecoder().decode(try JXLEncoder().encode(container, options: options), options: .init())
        let animation = try #require(decoded.animation)
        #expect(animation.frames.count == 2 && animation.loopCount == 3)
        #expect(animation.frames.map(\.duration) == [.milliseconds(120), .milliseconds(70)])
        #expect(animation.frames[1].bitmap.pixels.prefix(3) == [0, 0, 200])
    }
}
