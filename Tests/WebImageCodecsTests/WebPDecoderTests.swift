import CWebP
import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Files and helpers the WebP tests share.
enum WebPTestFiles {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    /// The WebP fixtures in the repository: lossy, lossless, lossy + alpha, animated.
    static let fixtureNames = [
        "hopper.webp", "hopper-lossless-32.webp", "hopper-alpha-32.webp", "hopper-animated-16.webp",
    ]

    /// Every WebP entry of reference.json (empty without the corpus).
    static let corpusEntries: [ReferenceImage] = Reference.images.filter { $0.file.hasSuffix(".webp") }

    static let corpusIsPresent = Reference.corpus != nil

    /// A registry with only the WebP coders, so these tests do not depend on the other coders.
    static func registry() -> CoderRegistry {
        CoderRegistry(decoders: [WebPDecoder()], encoders: [WebPEncoder()])
    }

    /// Peak signal-to-noise ratio over R, G, B and A, in dB (infinite when equal).
    static func psnr(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var squared = 0.0
        for y in 0..<a.height {
            for x in 0..<(a.width * 4) {
                let d = Double(a.pixels[y * a.bytesPerRow + x]) - Double(b.pixels[y * b.bytesPerRow + x])
                squared += d * d
            }
        }
        let mse = squared / Double(a.width * a.height * 4)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// `image` with one metadata chunk (`EXIF`, `ICCP`, …) added by libwebpmux: a real file
    /// built by the real library, with the `VP8X` header and flags libwebpmux writes.
    static func muxing(_ fourCC: String, _ payload: [UInt8], into image: Data) throws -> Data {
        try image.withUnsafeBytes { file in
            try payload.withUnsafeBufferPointer { chunkBytes in
                var bitstream = WebPData(bytes: file.baseAddress?.assumingMemoryBound(to: UInt8.self), size: file.count)
                let mux = try #require(WebPMuxCreate(&bitstream, 0))
                defer { WebPMuxDelete(mux) }
                var chunk = WebPData(bytes: chunkBytes.baseAddress, size: chunkBytes.count)
                #expect(WebPMuxSetChunk(mux, fourCC, &chunk, 1) == WEBP_MUX_OK)
                var assembled = WebPData()
                defer { WebPDataClear(&assembled) }
                #expect(WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK)
                return Data(bytes: try #require(assembled.bytes), count: assembled.size)
            }
        }
    }

    /// hopper's top half, 128×64, encoded losslessly here, with an `EXIF` chunk holding
    /// `orientation`: a non-square image whose thumbnail size depends on the turn.
    static func halfHopper(orientation: Int) throws -> Data {
        let hopper = try WebPDecoder().decode(try fixture("hopper.webp"), options: .init()).image
        let half = try Bitmap(width: 128, height: 64, pixelFormat: .rgba8, pixels: Array(hopper.pixels[..<(128 * 64 * 4)]))
        var lossless = ImageEncodingOptions()
        lossless.lossless = true
        let encoded = try WebPEncoder().encode(ImageContainer(image: half), options: lossless)
        return try muxing("EXIF", exifTIFF(orientation: orientation), into: encoded)
    }

    /// A little-endian TIFF structure whose IFD0 holds one Orientation tag.
    static func exifTIFF(orientation: Int) -> [UInt8] {
        [0x49, 0x49, 42, 0, 8, 0, 0, 0,  // "II", 42, IFD0 at 8
         1, 0,                           // one entry
         0x12, 0x01, 3, 0, 1, 0, 0, 0, UInt8(orientation), 0, 0, 0,  // 0x0112 SHORT ×1
         0, 0, 0, 0]                     // no next IFD
    }
}

@Suite struct WebPDecoderTests {
    let decoder = WebPDecoder()

    @Test func lossyStillDecodesToOpaqueRGBA() throws {
        let container = try decoder.decode(try WebPTestFiles.fixture("hopper.webp"), options: .init())
        #expect(container.image.width == 128 && container.image.height == 128)
        #expect(container.image.pixelFormat == .rgba8)
        #expect(container.image.bytesPerRow == 128 * 4)
        #expect(container.animation == nil)
        #expect(container.format == .webp)
        #expect(container.orientation == .up)
        #expect(container.iccProfile == nil)
        // Opaque everywhere, and a photo, not a blank buffer.
        #expect(stride(from: 3, to: container.image.pixels.count, by: 4).allSatisfy { container.image.pixels[$0] == 255 })
        #expect(Set(container.image.pixels).count > 100)
    }

    @Test func losslessDecodesExactlyWhatLibwebpDecodes() throws {
        let data = try WebPTestFiles.fixture("hopper-lossless-32.webp")
        let container = try decoder.decode(data, options: .init())
        // The plain libwebp call, for comparison.
        var width: Int32 = 0, height: Int32 = 0
        let raw = try #require(data.withUnsafeBytes {
            WebPDecodeRGBA($0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count, &width, &height)
        })
        defer { WebPFree(raw) }
        #expect(width == 32 && height == 32)
        #expect(container.image.pixels == Array(UnsafeBufferPointer(start: raw, count: 32 * 32 * 4)))
    }

    @Test func alphaIsStraightAndVaries() throws {
        // hopper-alpha-32.webp (VP8X + ALPH + VP8): alpha rises from 4 at the left edge to 255
        // at the right (measured with libwebp's dwebp-equivalent WebPDecodeRGBA).
        let image = try decoder.decode(try WebPTestFiles.fixture("hopper-alpha-32.webp"), options: .init()).image
        let alphas = (0..<32).map { image.pixels[16 * image.bytesPerRow + $0 * 4 + 3] }
        #expect(alphas.first! < 16 && alphas.last! > 240)
        #expect(zip(alphas, alphas.dropFirst()).allSatisfy { $0 <= $1 })
        // Straight alpha: the colour does not fade with alpha as it would premultiplied. The mean
        // colour of the left, nearly transparent columns stays far from black.
        var sum = 0
        for y in 0..<32 { for x in 0..<8 { for c in 0..<3 { sum += Int(image.pixels[y * image.bytesPerRow + x * 4 + c]) } } }
        #expect(sum / (32 * 8 * 3) > 40)
    }

    @Test func animatedDecodesComposedFramesWithDurationsAndLoop() throws {
        let container = try decoder.decode(try WebPTestFiles.fixture("hopper-animated-16.webp"), options: .init())
        let animation = try #require(container.animation)
        #expect(animation.frames.count == 3)
        #expect(animation.frames.map(\.duration) == [.milliseconds(100), .milliseconds(100), .milliseconds(100)])
        #expect(animation.loopCount == 0)
        #expect(animation.width == 16 && animation.height == 16)
        #expect(container.image == animation.frames[0].bitmap)
        // The frames are the hopper rotated by 0°, 90°, 180°: all different.
        #expect(Set(animation.frames.map(\.bitmap.pixels)).count == 3)
    }

    @Test func firstFrameOnlyDecodesOneFrameAndNoAnimation() throws {
        let data = try WebPTestFiles.fixture("hopper-animated-16.webp")
        var options = ImageDecodingOptions()
        options.firstFrameOnly = true
        let first = try decoder.decode(data, options: options)
        #expect(first.animation == nil)
        #expect(first.image == (try decoder.decode(data, options: .init())).image)
    }

    // MARK: EXIF orientation and ICC

    /// No corpus or fixture WebP has an orientation other than 1 (flower.webp's EXIF chunk has
    /// none), so these files are built by libwebpmux from hopper.webp plus an `EXIF` chunk,
    /// once as the specification says (the TIFF structure itself) and once with the `Exif\0\0`
    /// prefix some writers copy from JPEG.
    @Test(arguments: [(6, false), (3, true), (8, false), (5, true)])
    func exifOrientationIsReportedNotApplied(orientation: Int, prefixed: Bool) throws {
        let tiff = WebPTestFiles.exifTIFF(orientation: orientation)
        let payload = prefixed ? Array("Exif\0\0".utf8) + tiff : tiff
        let source = try WebPTestFiles.fixture("hopper.webp")
        let data = try WebPTestFiles.muxing("EXIF", payload, into: source)
        #expect(data.count > source.count)

        var options = ImageDecodingOptions()
        options.appliesOrientation = false
        let raw = try decoder.decode(data, options: options)
        #expect(raw.orientation == ImageOrientation(exifValue: orientation))
        let plain = try decoder.decode(source, options: .init())
        #expect(raw.image == plain.image, "the decoder reports the orientation and leaves the pixels as stored")

        // Through the registry the orientation is applied (hopper is square, so compare pixels).
        let upright = try WebPTestFiles.registry().decode(data)
        #expect(upright.image == plain.image.oriented(ImageOrientation(exifValue: orientation)!))
    }

    @Test func iccProfileIsExposed() throws {
        let profile = (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let data = try WebPTestFiles.muxing("ICCP", profile, into: try WebPTestFiles.fixture("hopper-alpha-32.webp"))
        let container = try decoder.decode(data, options: .preservingColor)
        #expect(container.iccProfile == Data(profile))
        #expect(container.image == (try decoder.decode(try WebPTestFiles.fixture("hopper-alpha-32.webp"), options: .init())).image)
    }

    // MARK: Thumbnails

    @Test func thumbnailUsesLibwebpScalerAtTheRequestedSize() throws {
        let data = try WebPTestFiles.fixture("hopper.webp")
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(40)
        let thumbnail = try decoder.decode(data, options: options).image
        #expect(thumbnail.width == 40 && thumbnail.height == 40)
        // The same pixels libwebp's scaler writes into a 40×40 buffer of the test's own: the
        // decoder asked libwebp for 40×40 and never had a 128×128 bitmap.
        let direct = try scaledDecode(data, width: 40, height: 40)
        #expect(thumbnail.pixels == direct)
        // Not a full decode resampled afterwards.
        let resampled = try decoder.decode(data, options: .init()).image.resized(width: 40, height: 40)
        #expect(thumbnail.pixels != resampled.pixels)
        #expect(WebPTestFiles.psnr(thumbnail, resampled) > 25, "both are the same picture")
    }

    @Test func thumbnailSizeIsComputedOnTheOrientedImage() throws {
        // A 128×64 image (hopper's top half, encoded here) stored with orientation 6: upright it
        // is 64×128. Fitted into 32×64 it is 32×64 upright, so the decoder scales the stored
        // image to 64×32 — not to the 32×16 the stored shape alone would give.
        let data = try WebPTestFiles.halfHopper(orientation: 6)

        var options = ImageDecodingOptions()
        options.thumbnail = .size(width: 32, height: 64, contentMode: .fit)
        let stored = try decoder.decode(data, options: options)
        #expect(stored.orientation == .right)
        #expect(stored.image.width == 64 && stored.image.height == 32)
        let upright = try WebPTestFiles.registry().decode(data, options: options)
        #expect(upright.image.width == 32 && upright.image.height == 64)
        #expect(upright.image == stored.image.oriented(.right), "the registry only turned it: the size was already exact")
    }

    @Test func thumbnailOfAnAnimationResamplesEveryFrame() throws {
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(8)
        let container = try decoder.decode(try WebPTestFiles.fixture("hopper-animated-16.webp"), options: options)
        let animation = try #require(container.animation)
        #expect(animation.frames.count == 3)
        #expect(animation.frames.allSatisfy { $0.bitmap.width == 8 && $0.bitmap.height == 8 })
        #expect(animation.frames.map(\.duration) == [.milliseconds(100), .milliseconds(100), .milliseconds(100)])
    }

    @Test(.enabled(if: WebPTestFiles.corpusIsPresent, "../shared/corpus is absent: the WebP corpus tests are skipped"))
    func thumbnailOfA4096PhotoNeverMakesTheFullBitmap() throws {
        let entry = try #require(WebPTestFiles.corpusEntries.first { $0.file == "photos/adwaita-4096.webp" })
        let data = try Reference.data(entry)
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(256)
        let thumbnail = try WebPTestFiles.registry().decode(data, options: options).image
        #expect(thumbnail.width == 256 && thumbnail.height == 256)
        #expect(thumbnail.cost == 256 * 256 * 4)
        // Identical to libwebp scaling into a 256×256 buffer the test owns, so the decoder's
        // only pixel buffer was 256 KiB (the full image would be 64 MiB).
        #expect(thumbnail.pixels == (try scaledDecode(data, width: 256, height: 256)))
        // And it shows the same picture as the reference's full-size fingerprint.
        let distance = fingerprintDistance(fingerprint(thumbnail), try #require(entry.fingerprints?.first))
        #expect(distance <= 6, "thumbnail fingerprint within 6 of the full image's: \(distance)")
    }

    /// libwebp's own scaled decode into a buffer owned by the test.
    private func scaledDecode(_ data: Data, width: Int, height: Int) throws -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        var config = WebPDecoderConfig()
        #expect(WebPInitDecoderConfig(&config) != 0)
        let status = pixels.withUnsafeMutableBufferPointer { buffer in
            config.output.colorspace = MODE_RGBA
            config.output.is_external_memory = 1
            config.output.u.RGBA.rgba = buffer.baseAddress
            config.output.u.RGBA.stride = Int32(width * 4)
            config.output.u.RGBA.size = buffer.count
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(width)
            config.options.scaled_height = Int32(height)
            return data.withUnsafeBytes { WebPDecode($0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count, &config) }
        }
        #expect(status == VP8_STATUS_OK)
        return pixels
    }

    // MARK: Limits

    @Test func pixelLimitIsCheckedFromTheHeader() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 128 * 128 - 1
        #expect(throws: ImageError.self) { try decoder.decode(try WebPTestFiles.fixture("hopper.webp"), options: options) }
        options.maximumPixelCount = 128 * 128
        #expect(throws: Never.self) { try decoder.decode(try WebPTestFiles.fixture("hopper.webp"), options: options) }
    }

    @Test func aHugeCanvasInAHeaderIsRefusedBeforeAnyAllocation() throws {
        // A VP8X header claiming 16384×16384 (268 Mpx) followed by nothing: refused as too
        // large from the header, never allocated.
        let header = Self.riff(Self.vp8x(width: 16384, height: 16384, flags: 0x02) + Self.chunk("ANIM", [0, 0, 0, 0, 0, 0]))
        do {
            _ = try decoder.decode(Data(header), options: .init())
            Issue.record("decoded a 268-megapixel canvas")
        } catch let error as ImageError {
            guard case .tooLarge = error else { Issue.record("expected tooLarge, got \(error)"); return }
        }
    }

    @Test func animationLimitCountsEveryFrameBeforeDecoding() throws {
        let data = try WebPTestFiles.fixture("hopper-animated-16.webp")
        var options = ImageDecodingOptions()
        options.maximumAnimationBytes = 3 * 16 * 16 * 4 - 1
        #expect(throws: ImageError.tooLarge("WebP animation: 3 frames of 16×16 exceed the limit of 3071 bytes")) {
            try decoder.decode(data, options: options)
        }
        options.maximumAnimationBytes = 3 * 16 * 16 * 4
        #expect(try decoder.decode(data, options: options).animation?.frames.count == 3)
        // One frame fits a one-frame budget.
        options.maximumAnimationBytes = 16 * 16 * 4
        options.firstFrameOnly = true
        #expect(try decoder.decode(data, options: options).image.width == 16)
    }

    @Test(.enabled(if: WebPTestFiles.corpusIsPresent, "../shared/corpus is absent: the WebP corpus tests are skipped"))
    func animationLimitOnTheCorpusAnimation() throws {
        // iss634.webp: 42 frames of 245×245 = 10,084,200 bytes.
        let data = try Reference.data(try #require(WebPTestFiles.corpusEntries.first { $0.file == "edge/iss634.webp" }))
        var options = ImageDecodingOptions()
        options.maximumAnimationBytes = 10_084_199
        #expect(throws: ImageError.self) { try decoder.decode(data, options: options) }
        options.maximumAnimationBytes = 10_084_200
        #expect(try decoder.decode(data, options: options).animation?.frames.count == 42)
    }

    // MARK: Helpers building headers byte by byte

    static func chunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(payload.count)
        return Array(fourCC.utf8) + withUnsafeBytes(of: size.littleEndian, Array.init) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    static func vp8x(width: Int, height: Int, flags: UInt8) -> [UInt8] {
        let w = width - 1, h = height - 1
        let payload: [UInt8] = [flags, 0, 0, 0,
                                UInt8(w & 0xff), UInt8(w >> 8 & 0xff), UInt8(w >> 16 & 0xff),
                                UInt8(h & 0xff), UInt8(h >> 8 & 0xff), UInt8(h >> 16 & 0xff)]
        return chunk("VP8X", payload)
    }

    static func riff(_ body: [UInt8]) -> [UInt8] {
        Array("RIFF".utf8) + withUnsafeBytes(of: UInt32(body.count + 4).littleEndian, Array.init) + Array("WEBP".utf8) + body
    }
}
