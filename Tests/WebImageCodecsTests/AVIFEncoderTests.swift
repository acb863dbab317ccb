import Foundation
import Testing
import WebImageCore
@testable import WebImageCodecs

/// The AVIF encoder's files read back by avifdec (libavif's own tool) and by the decoder.
@Suite struct AVIFEncoderTests {
    typealias Files = ISOBMFFTestFiles

    /// The gradient the fixtures are drawn from (R = 8x, G = 8y, B = 128), with alpha falling
    /// from 255 on the left to 0 on the right when `alpha`.
    static func gradient(alpha: Bool) throws -> Bitmap {
        let channels = alpha ? 4 : 3
        var pixels: [UInt8] = []
        for y in 0..<32 {
            for x in 0..<32 {
                pixels += [UInt8(x * 8), UInt8(y * 8), 128]
                if alpha { pixels.append(UInt8(255 - x * 255 / 31)) }
            }
        }
        return try Bitmap(width: 32, height: 32, pixelFormat: channels == 4 ? .rgba8 : .rgb8, pixels: pixels)
    }

    func writeAndDecodeWithAvifdec(_ data: Data) throws -> ISOBMFFTestFiles.Samples {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("encoded-\(UUID().uuidString).avif")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try Files.referenceDecode("avifdec", ["--depth", "8", "--jobs", "1"], path: url.path)
    }

    @Test func losslessIsExactForAvifdec() throws {
        for alpha in [false, true] {
            let bitmap = try Self.gradient(alpha: alpha)
            var options = ImageEncodingOptions()
            options.lossless = true
            let data = try AVIFEncoder().encode(ImageContainer(image: bitmap), options: options)
            #expect(ImageFormat(sniffing: data) == .avif)
            let reference = try writeAndDecodeWithAvifdec(data)
            #expect(try #require(Files.maximumDifference(bitmap, reference)) == 0, "alpha \(alpha)")
        }
    }

    /// Lossy at quality 90 stays close (within 12 per sample in avifdec's decode, alpha
    /// included), so RGB and RGBA reach libyuv's conversion in the right channel order; a lower
    /// quality gives a smaller file.
    @Test(arguments: [false, true]) func qualityMapsToTheQuantizer(alpha: Bool) throws {
        let bitmap = try Self.gradient(alpha: alpha)
        var options = ImageEncodingOptions()
        options.quality = 90
        let high = try AVIFEncoder(speed: 10).encode(ImageContainer(image: bitmap), options: options)
        let reference = try writeAndDecodeWithAvifdec(high)
        let difference = try #require(Files.maximumDifference(bitmap, reference))
        #expect(difference <= 12, "quality 90 differs by \(difference)")
        options.quality = 10
        let low = try AVIFEncoder(speed: 10).encode(ImageContainer(image: bitmap), options: options)
        #expect(low.count < high.count, "quality 10: \(low.count) bytes, quality 90: \(high.count)")
    }

    /// A premultiplied bitmap takes libavif's own conversion (which divides the alpha out), a
    /// grey one is widened to RGB for libyuv's; both read back within the same bound.
    @Test func premultipliedAndGreyBitmaps() throws {
        let straight = try Self.gradient(alpha: true)
        var premultiplied = straight.pixels
        for index in stride(from: 0, to: premultiplied.count, by: 4) {
            let alpha = Int(premultiplied[index + 3])
            for channel in 0..<3 { premultiplied[index + channel] = UInt8((Int(premultiplied[index + channel]) * alpha + 127) / 255) }
        }
        var options = ImageEncodingOptions()
        options.quality = 90
        let bitmap = try Bitmap(width: 32, height: 32, pixelFormat: .rgba8Premultiplied, pixels: premultiplied)
        let reference = try writeAndDecodeWithAvifdec(try AVIFEncoder().encode(ImageContainer(image: bitmap), options: options))
        // Only where alpha leaves enough of the colour to unpremultiply it closely.
        var worst = 0
        for index in stride(from: 0, to: straight.pixels.count, by: 4) where straight.pixels[index + 3] >= 128 {
            for channel in 0..<4 { worst = max(worst, abs(Int(straight.pixels[index + channel]) - reference.values[index + channel])) }
        }
        #expect(worst <= 12, "premultiplied differs by \(worst)")

        let grey = try Bitmap(width: 32, height: 32, pixelFormat: .gray8, pixels: (0..<1024).map { UInt8($0 % 32 * 8) })
        let greyReference = try writeAndDecodeWithAvifdec(try AVIFEncoder().encode(ImageContainer(image: grey), options: options))
        let greyWorst = zip(grey.pixels, stride(from: 0, to: greyReference.values.count, by: greyReference.channels)).map { abs(Int($0) - greyReference.values[$1]) }.max() ?? .max
        #expect(greyWorst <= 12, "grey differs by \(greyWorst)")
    }

    /// An animation becomes a sequence: the frame count and millisecond durations survive.
    @Test func animationBecomesASequence() throws {
        let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255]]
        let frames = try zip(colours, [100, 250, 40]).map { colour, milliseconds in
            AnimatedImage.Frame(
                bitmap: try Bitmap(width: 16, height: 16, pixelFormat: .rgb8, pixels: Array((0..<256).map { _ in colour }.joined())),
                duration: .milliseconds(milliseconds))
        }
        let animation = AnimatedImage(frames: frames, loopCount: 0)
        var options = ImageEncodingOptions()
        options.lossless = true
        let data = try AVIFEncoder().encode(ImageContainer(image: frames[0].bitmap, animation: animation), options: options)
        let decoded = try #require(try AVIFDecoder().decode(data, options: .init()).animation)
        #expect(decoded.frames.map(\.duration) == [.milliseconds(100), .milliseconds(250), .milliseconds(40)])
        #expect(decoded.frames.map(\.bitmap) == frames.map(\.bitmap))
        options.firstFrameOnly = true
        let still = try AVIFDecoder().decode(try AVIFEncoder().encode(ImageContainer(image: frames[0].bitmap, animation: animation), options: options), options: .init())
        #expect(still.animation == nil)
    }

    /// The loop count is written as an edit list (libavif 0.11 writes none): the sniffer finds
    /// it and the decoder plays 1, 3 or forever, and avifdec still decodes every frame exactly,
    /// so the offsets into `mdat` moved with the inserted boxes, in both tracks of a sequence
    /// with alpha. The frames differ only a little (the blue channel), which lossless inter
    /// frames got wrong (each came back as the first frame).
    @Test(arguments: [1, 3, 0]) func loopCountIsWrittenAsAnEditList(loopCount: Int) throws {
        let gradient = try Self.gradient(alpha: true)
        let frames = try (0..<3).map { index in
            AnimatedImage.Frame(
                bitmap: try Bitmap(width: 32, height: 32, pixelFormat: .rgba8, pixels: gradient.pixels.enumerated().map { offset, value in
                    offset % 4 == 2 ? UInt8(index * 100) : value
                }),
                duration: .milliseconds(100))
        }
        var options = ImageEncodingOptions()
        options.lossless = true
        let animation = AnimatedImage(frames: frames, loopCount: loopCount)
        let data = try AVIFEncoder().encode(ImageContainer(image: frames[0].bitmap, animation: animation), options: options)
        let plays = data.withUnsafeBytes { ISOBMFFSequence.plays($0) }
        #expect(plays == loopCount)
        #expect(try AVIFDecoder().decode(data, options: .init()).animation?.loopCount == loopCount)

        let url = FileManager.default.temporaryDirectory.appendingPathComponent("looped-\(UUID().uuidString).avif")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        for (index, frame) in frames.enumerated() {
            let reference = try Files.referenceDecode("avifdec", ["--depth", "8", "--jobs", "1", "--index", "\(index)"], path: url.path)
            #expect(try #require(Files.maximumDifference(frame.bitmap, reference)) == 0, "frame \(index)")
        }
    }
}
