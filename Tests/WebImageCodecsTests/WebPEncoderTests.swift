import CCodecShims
import CWebP
import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

@Suite struct WebPEncoderTests {
    let encoder = WebPEncoder()
    let decoder = WebPDecoder()

    func decoded(_ fixture: String) throws -> ImageContainer {
        try decoder.decode(try WebPTestFiles.fixture(fixture), options: .init())
    }

    static func options(quality: Int = 80, lossless: Bool = false, strip: Bool = false, firstFrameOnly: Bool = false) -> ImageEncodingOptions {
        var options = ImageEncodingOptions()
        options.quality = quality
        options.lossless = lossless
        options.stripsMetadata = strip
        options.firstFrameOnly = firstFrameOnly
        return options
    }

    /// Lossy round trip of the 128 px hopper at quality 90: PSNR (R, G, B, A) at least 38 dB
    /// (measured: 42.0 dB with libwebp 1.2.4), and the file is a lossy `VP8 ` bitstream.
    /// Every code libwebp's encoder can report, VP8_ENC_OK included (what libwebp 1.2 leaves
    /// after a failed allocation), is named in words, never as "error N".
    @Test func everyEncoderErrorNamesItsCause() {
        var reasons: Set<String> = []
        for raw in 0..<VP8_ENC_ERROR_LAST.rawValue {
            let reason = WebPEncodingFailure.reason(WebPEncodingError(rawValue: raw))
            #expect(!reason.contains("(code "), "\(raw): \(reason)")
            reasons.insert(reason)
        }
        #expect(reasons.count == Int(VP8_ENC_ERROR_LAST.rawValue))
        #expect(WebPEncodingFailure.reason(VP8_ENC_OK).hasPrefix("out of memory"))
        guard case .tooLarge(let message) = WebPEncodingFailure.error(VP8_ENC_OK, "encoding the picture") else {
            Issue.record("an allocation failure is not tooLarge")
            return
        }
        #expect(message == "WebP: libwebp failed encoding the picture: out of memory (libwebp gave no code)")
    }

    @Test func lossyRoundTripStaysCloseToTheSource() throws {
        let source = try decoded("hopper.webp").image
        let data = try encoder.encode(ImageContainer(image: source), options: Self.options(quality: 90))
        #expect(ImageHeader(sniffing: data)?.webPEncoding == .lossy)
        let back = try decoder.decode(data, options: .init()).image
        #expect(back.width == 128 && back.height == 128)
        let psnr = WebPTestFiles.psnr(source, back)
        #expect(psnr >= 38, "PSNR \(psnr) dB")
        #expect(psnr.isFinite, "lossy is not bit-exact")
    }

    /// A real photo (flower.webp, 480×360) re-encoded at the default quality 80: PSNR at least
    /// 36 dB (measured: 41.0 dB).
    @Test(.enabled(if: WebPTestFiles.corpusIsPresent, "../shared/corpus is absent: the WebP corpus tests are skipped"))
    func lossyRoundTripOfACorpusPhoto() throws {
        let entry = try #require(WebPTestFiles.corpusEntries.first { $0.file == "edge/flower.webp" })
        let source = try decoder.decode(try Reference.data(entry), options: .init()).image
        let back = try decoder.decode(try encoder.encode(ImageContainer(image: source), options: Self.options()), options: .init()).image
        let psnr = WebPTestFiles.psnr(source, back)
        #expect(psnr >= 36, "PSNR \(psnr) dB")
    }

    /// The SSE2 conversion of opaque pixels equals BT.601's studio-swing matrix in 15-bit fixed
    /// point (the header's comment gives the coefficients), worked out here pixel by pixel, at
    /// every width from 1 to 70 and on odd heights: the vector bodies and the scalar tails.
    @Test func opaqueConversionIsBT601() {
        var random = SystemRandomNumberGenerator()
        for width in 1...70 {
            for height in [1, 2, 5] {
                let rgba = (0..<width * height * 4).map { _ in UInt8.random(in: 0...255, using: &random) }
                let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
                var y = [UInt8](repeating: 0, count: width * height)
                var u = [UInt8](repeating: 0, count: chromaWidth * chromaHeight), v = u
                wi_webp_rgba_to_yuv420(rgba, width * 4, Int32(width), Int32(height), &y, Int32(width), &u, &v, Int32(chromaWidth))
                func channel(_ x: Int, _ row: Int, _ c: Int) -> Int { Int(rgba[(row * width + x) * 4 + c]) }
                for row in 0..<height {
                    for x in 0..<width {
                        let luma = (8421 * channel(x, row, 0) + 16530 * channel(x, row, 1) + 3208 * channel(x, row, 2) + (16 << 15) + (1 << 14)) >> 15
                        #expect(Int(y[row * width + x]) == luma, "Y at \(x), \(row) of \(width)×\(height)")
                    }
                }
                for row in 0..<chromaHeight {
                    for x in 0..<chromaWidth {
                        // The 2 × 2 block's sums, the last column or row repeated on odd sides.
                        var r = 0, g = 0, b = 0
                        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                            let px = min(2 * x + dx, width - 1), py = min(2 * row + dy, height - 1)
                            r += channel(px, py, 0); g += channel(px, py, 1); b += channel(px, py, 2)
                        }
                        let clamp = { (value: Int) in min(max(value, 0), 255) }
                        let expectedU = clamp((-4860 * r - 9540 * g + 14400 * b + (128 << 17) + (1 << 16)) >> 17)
                        let expectedV = clamp((14400 * r - 12059 * g - 2341 * b + (128 << 17) + (1 << 16)) >> 17)
                        #expect(Int(u[row * chromaWidth + x]) == expectedU && Int(v[row * chromaWidth + x]) == expectedV,
                                "U/V at \(x), \(row) of \(width)×\(height)")
                    }
                }
            }
        }
    }

    /// Flat colours, opaque (our conversion) and half transparent (libwebp's), come back within a
    /// few units through a real encode and decode, at odd sizes: the channels are in their places.
    @Test(arguments: [[200, 30, 90, 255], [20, 180, 240, 255], [250, 250, 10, 255], [200, 30, 90, 128]] as [[UInt8]])
    func flatColoursSurviveALossyRoundTrip(colour: [UInt8]) throws {
        let source = try Bitmap(width: 37, height: 23, pixelFormat: .rgba8, pixels: Array((0..<37 * 23).map { _ in colour }.joined()))
        let data = try encoder.encode(ImageContainer(image: source), options: Self.options(quality: 90))
        let back = try decoder.decode(data, options: .init()).image
        #expect(back.width == 37 && back.height == 23)
        for index in stride(from: 0, to: back.pixels.count, by: 4) {
            let pixel = (0..<4).map { Int(back.pixels[index + $0]) }
            #expect(zip(pixel, colour).allSatisfy { abs($0 - Int($1)) <= 3 }, "\(pixel) for \(colour)")
        }
    }

    @Test func qualityTradesSizeForFidelity() throws {
        let source = try decoded("hopper.webp").image
        let low = try encoder.encode(ImageContainer(image: source), options: Self.options(quality: 20))
        let high = try encoder.encode(ImageContainer(image: source), options: Self.options(quality: 95))
        #expect(low.count < high.count)
        let lowPSNR = WebPTestFiles.psnr(source, try decoder.decode(low, options: .init()).image)
        let highPSNR = WebPTestFiles.psnr(source, try decoder.decode(high, options: .init()).image)
        #expect(lowPSNR < highPSNR)
    }

    /// Lossless keeps every byte, including the colour under fully transparent pixels.
    @Test func losslessRoundTripIsExact() throws {
        var pixels = try decoded("hopper-alpha-32.webp").image.pixels
        // Make some pixels fully transparent but coloured, which a non-exact encoder would zero.
        for index in stride(from: 0, to: 32 * 4 * 4, by: 4) {
            pixels[index + 3] = 0
            pixels[index] = 200
        }
        let source = try Bitmap(width: 32, height: 32, pixelFormat: .rgba8, pixels: pixels)
        let data = try encoder.encode(ImageContainer(image: source), options: Self.options(lossless: true))
        #expect(ImageHeader(sniffing: data)?.webPEncoding == .lossless)
        #expect(try decoder.decode(data, options: .init()).image == source)
    }

    /// Lossy with alpha: the alpha plane is stored losslessly (alpha quality 100), so alpha comes
    /// back exact while colour is lossy.
    @Test func lossyKeepsAlpha() throws {
        let source = try decoded("hopper-alpha-32.webp").image
        let data = try encoder.encode(ImageContainer(image: source), options: Self.options(quality: 80))
        #expect(ImageHeader(sniffing: data)?.hasAlpha == true)
        let back = try decoder.decode(data, options: .init()).image
        let alpha = { (bitmap: Bitmap) in stride(from: 3, to: bitmap.pixels.count, by: 4).map { bitmap.pixels[$0] } }
        #expect(alpha(back) == alpha(source))
    }

    @Test func opaqueImagesGetNoAlphaPlane() throws {
        let source = try decoded("hopper.webp").image
        let data = try encoder.encode(ImageContainer(image: source), options: Self.options())
        #expect(ImageHeader(sniffing: data)?.hasAlpha == false)
        #expect(data.count < 40_000)
    }

    @Test func otherPixelFormatsAreConverted() throws {
        let rgba = try decoded("hopper-lossless-32.webp").image
        let rgbPixels = stride(from: 0, to: rgba.pixels.count, by: 4).flatMap { rgba.pixels[$0..<$0 + 3] }
        let rgb = try Bitmap(width: 32, height: 32, pixelFormat: .rgb8, pixels: rgbPixels)
        #expect(try decoder.decode(try encoder.encode(ImageContainer(image: rgb), options: Self.options(lossless: true)), options: .init()).image == rgba)

        let grayPixels = stride(from: 0, to: rgba.pixels.count, by: 4).map { rgba.pixels[$0 + 1] }
        let gray = try Bitmap(width: 32, height: 32, pixelFormat: .gray8, pixels: grayPixels)
        let grayBack = try decoder.decode(try encoder.encode(ImageContainer(image: gray), options: Self.options(lossless: true)), options: .init()).image
        let expanded: [UInt8] = grayPixels.flatMap { [$0, $0, $0, 255] }
        #expect(grayBack.pixels == expanded)

        // Premultiplied (50% alpha everywhere): written straight, so colour doubles back.
        let premultiplied = try Bitmap(width: 2, height: 1, pixelFormat: .rgba8Premultiplied, pixels: [50, 100, 0, 128, 0, 0, 0, 0])
        let straight = try decoder.decode(try encoder.encode(ImageContainer(image: premultiplied), options: Self.options(lossless: true)), options: .init()).image
        #expect(Array(straight.pixels[0..<4]) == [100, 199, 0, 128])
        #expect(straight.pixels[7] == 0)
    }

    @Test func strideIsHonoured() throws {
        // Rows of 40 bytes for 8 pixels (32 bytes): the 8 padding bytes must not leak in.
        var pixels = [UInt8](repeating: 0xEE, count: 40 * 4)
        for y in 0..<4 { for x in 0..<8 { pixels[y * 40 + x * 4 ..< y * 40 + x * 4 + 4] = [UInt8(x * 30), UInt8(y * 60), 7, 255] } }
        let padded = try Bitmap(width: 8, height: 4, pixelFormat: .rgba8, bytesPerRow: 40, pixels: pixels)
        let back = try decoder.decode(try encoder.encode(ImageContainer(image: padded), options: Self.options(lossless: true)), options: .init()).image
        for y in 0..<4 { for x in 0..<8 { #expect(Array(back.pixels[y * 32 + x * 4 ..< y * 32 + x * 4 + 4]) == [UInt8(x * 30), UInt8(y * 60), 7, 255]) } }
    }

    @Test func iccProfileIsKeptUnlessStripped() throws {
        let profile = Data((0..<300).map { UInt8(truncatingIfNeeded: $0) })
        var container = try decoded("hopper-alpha-32.webp")
        container.iccProfile = profile
        let kept = try encoder.encode(container, options: Self.options())
        #expect(try decoder.decode(kept, options: .preservingColor).iccProfile == profile)
        let stripped = try encoder.encode(container, options: Self.options(strip: true))
        #expect(try decoder.decode(stripped, options: .init()).iccProfile == nil)
        #expect(stripped.count < kept.count)
    }

    // MARK: Animation

    @Test func animatedRoundTripKeepsFramesDurationsAndLoop() throws {
        let source = try #require(try decoded("hopper-animated-16.webp").animation)
        var animation = source
        animation.loopCount = 3
        animation.frames[0].duration = .milliseconds(40)
        animation.frames[1].duration = .milliseconds(250)
        animation.frames[2].duration = .milliseconds(1000)
        let container = ImageContainer(image: animation.frames[0].bitmap, animation: animation)
        let data = try encoder.encode(container, options: Self.options(lossless: true))
        #expect(ImageHeader(sniffing: data)?.isAnimated == true)
        let back = try #require(try decoder.decode(data, options: .init()).animation)
        #expect(back.frames.count == 3)
        #expect(back.loopCount == 3)
        #expect(back.frames.map(\.duration) == [.milliseconds(40), .milliseconds(250), .milliseconds(1000)])
        #expect(back.frames.map(\.bitmap) == animation.frames.map(\.bitmap), "lossless frames come back exact")
    }

    /// Semi-transparent frames (the alpha gradient hopper, and it mirrored) through the
    /// animation encoder and decoder: lossless, so every byte returns, which also shows the
    /// decoder's composed canvas is straight alpha, not premultiplied.
    @Test func translucentAnimationRoundTripIsExactAndStraight() throws {
        let first = try decoded("hopper-alpha-32.webp").image
        let second = first.oriented(.upMirrored)
        let animation = AnimatedImage(frames: [
            .init(bitmap: first, duration: .milliseconds(80)),
            .init(bitmap: second, duration: .milliseconds(120)),
        ], loopCount: 0)
        let data = try encoder.encode(ImageContainer(image: first, animation: animation), options: Self.options(lossless: true))
        let back = try #require(try decoder.decode(data, options: .init()).animation)
        let exact = back.frames.map(\.bitmap) == [first, second]
        #expect(exact, "frames come back byte for byte, colour straight under partial alpha")
        #expect(back.frames.map(\.duration) == [.milliseconds(80), .milliseconds(120)])
    }

    @Test func lossyAnimationStaysClose() throws {
        let container = try decoded("hopper-animated-16.webp")
        let data = try encoder.encode(container, options: Self.options(quality: 90))
        let back = try #require(try decoder.decode(data, options: .init()).animation)
        let source = try #require(container.animation)
        #expect(back.frames.count == 3 && back.loopCount == 0)
        for (a, b) in zip(source.frames, back.frames) {
            // Measured 37.0–37.8 dB at quality 90.
            #expect(WebPTestFiles.psnr(a.bitmap, b.bitmap) >= 33)
        }
    }

    @Test func animationWithICCAndFirstFrameOnly() throws {
        var container = try decoded("hopper-animated-16.webp")
        container.iccProfile = Data([1, 2, 3, 4, 5])
        let animated = try decoder.decode(try encoder.encode(container, options: Self.options(lossless: true)), options: .preservingColor)
        #expect(animated.iccProfile == Data([1, 2, 3, 4, 5]))
        #expect(animated.animation?.frames.count == 3)
        let still = try decoder.decode(try encoder.encode(container, options: Self.options(lossless: true, firstFrameOnly: true)), options: .init())
        #expect(still.animation == nil)
        #expect(still.image == container.image)
    }

    /// iss634.webp: 42 lossless frames, the first stored with 0 ms, loop forever. Re-encoded
    /// losslessly, every frame, duration and the loop come back.
    @Test(.enabled(if: WebPTestFiles.corpusIsPresent, "../shared/corpus is absent: the WebP corpus tests are skipped"))
    func corpusAnimationRoundTrip() throws {
        let entry = try #require(WebPTestFiles.corpusEntries.first { $0.file == "edge/iss634.webp" })
        let container = try decoder.decode(try Reference.data(entry), options: .init())
        let source = try #require(container.animation)
        let back = try #require(try decoder.decode(try encoder.encode(container, options: Self.options(lossless: true)), options: .init()).animation)
        #expect(back.frames.count == 42)
        #expect(back.loopCount == 0)
        #expect(back.frames.map(\.duration) == source.frames.map(\.duration))
        #expect(back.frames.first?.duration == .zero)
        #expect(back.frames.map(\.bitmap) == source.frames.map(\.bitmap))
    }

    @Test func tooLargeForWebPIsRefused() throws {
        let wide = try Bitmap(width: 16384, height: 1, pixelFormat: .gray8, pixels: [UInt8](repeating: 0, count: 16384))
        #expect(throws: ImageError.self) { try encoder.encode(ImageContainer(image: wide), options: Self.options()) }
    }

    @Test func theRegistryEncodesWebP() throws {
        let registry = CoderRegistry.system()
        let data = try registry.encode(try decoded("hopper.webp"), as: .webp)
        #expect(ImageFormat(sniffing: data) == .webp)
    }
}
