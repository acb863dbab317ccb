import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCore

/// `Bitmap.resized`: Lanczos-3 quality against independent references, alpha handled
/// premultiplied (no dark fringes), every pixel format, and the edge cases of the filter tables.
@Suite struct ProcessingResamplingTests {
    /// The area average (box filter) of `factor` × `factor` blocks, computed here independently of
    /// the library: premultiplied when the bitmap has straight alpha, then divided back.
    static func areaAverage(_ bitmap: Bitmap, factor: Int) -> Bitmap {
        let channels = bitmap.pixelFormat.bytesPerPixel
        let hasAlpha = bitmap.pixelFormat.alpha == .straight
        return Bitmap.make(width: bitmap.width / factor, height: bitmap.height / factor, format: bitmap.pixelFormat) { x, y in
            var sums = [Double](repeating: 0, count: channels)
            for sy in y * factor..<(y + 1) * factor {
                for sx in x * factor..<(x + 1) * factor {
                    let p = bitmap.pixel(sx, sy).map(Double.init)
                    let weight = hasAlpha ? p[channels - 1] / 255 : 1
                    for c in 0..<channels { sums[c] += c == channels - 1 && hasAlpha ? p[c] : p[c] * weight }
                }
            }
            let count = Double(factor * factor)
            let alpha = hasAlpha ? sums[channels - 1] / count : 255
            return (0..<channels).map { c in
                let mean = sums[c] / count
                let value = hasAlpha && c != channels - 1 ? (alpha > 0 ? mean * 255 / alpha : 0) : mean
                return UInt8(min(max(value.rounded(), 0), 255))
            }
        }
    }

    // MARK: Quality

    /// The issue's bound: a 4× downscale of a photograph within 35 dB of the area average. Lanczos
    /// is sharper than a box, so they differ a little on detail (Pillow's LANCZOS scores 38.6 dB
    /// here); an aliasing filter such as nearest neighbour scores 28.8 dB and a misaligned one
    /// far less.
    @Test(arguments: [PixelFormat.rgb8, .rgba8])
    func fourTimesDownscaleOfAPhotoIsWithinThePSNRBoundOfTheAreaAverage(format: PixelFormat) throws {
        let photo = try Netpbm.bitmap("flower-240x180.ppm", as: format)
        let resized = try photo.resized(width: 60, height: 45)
        let reference = Self.areaAverage(photo, factor: 4)
        // Over the colour channels only (an opaque alpha channel would flatter the figure).
        let score = psnr(resized.converted(to: .rgb8).pixels, reference.converted(to: .rgb8).pixels)
        print("resize quality: flower 240×180 → 60×45 (\(format)), PSNR against the area average \(score) dB")
        #expect(score >= 35, "PSNR \(score) dB")
    }

    /// Cross-check against Pillow's `resize(..., LANCZOS)` of the same pixels, made at dev time:
    /// the same filter, so equal within rounding. (Pillow works in fixed point and rounds to
    /// bytes between its two passes, we keep floats: 88 % of bytes agree exactly, a handful
    /// differ by 2 or 3.)
    @Test(arguments: [PixelFormat.rgb8, .rgba8])
    func fourTimesDownscaleMatchesPillowsLanczos(format: PixelFormat) throws {
        let photo = try Netpbm.bitmap("flower-240x180.ppm", as: format)
        let pillow = try Netpbm.bitmap("flower-240x180-lanczos-60x45.ppm", as: format)
        let resized = try photo.resized(width: 60, height: 45)
        #expect(maximumDifference(resized.pixels, pillow.pixels) <= 3)
        let meanDifference = Double(zip(resized.pixels, pillow.pixels).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(resized.pixels.count)
        #expect(meanDifference < 0.2)
        #expect(psnr(resized.pixels, pillow.pixels) >= 50)
    }

    /// Large reductions go through a box pre-reduction (here 30×: a box of 10, then Lanczos by 3);
    /// the result stays close to the direct Lanczos filter and to the area average.
    @Test func largeDownscaleWithBoxPreReductionStaysCloseToTheDirectFilter() throws {
        let tile = try Netpbm.bitmap("flower-240x180.ppm", as: .rgba8)
        // 720 × 540: the photo tiled 3 × 3, mirrored so the seams are not sharp edges.
        let big = Bitmap.make(width: 720, height: 540) { x, y in
            let (tx, ty) = (x / 240, y / 180)
            let sx = tx % 2 == 0 ? x % 240 : 239 - x % 240
            let sy = ty % 2 == 0 ? y % 180 : 179 - y % 180
            return tile.pixel(sx, sy)
        }
        #expect(Resampler.reductionFactor(source: 720, output: 24) == 10)
        let resized = try big.resized(width: 24, height: 18)
        let direct = try Resampler.filter(
            big,
            horizontal: .lanczos3(source: 720, reduction: 1, output: 24),
            vertical: .lanczos3(source: 540, reduction: 1, output: 18)
        )
        #expect(maximumDifference(resized.pixels, direct.pixels) <= 4)
        #expect(psnr(resized.pixels, direct.pixels) >= 45)
        // At 30× the area average is much blurrier than Lanczos on this detailed picture: the
        // direct filter itself scores about 34 dB against it; the reduced one must not be worse.
        let reference = Self.areaAverage(big, factor: 30).pixels
        #expect(psnr(resized.pixels, reference) >= psnr(direct.pixels, reference) - 0.5)
        #expect(psnr(resized.pixels, reference) >= 30)
    }

    @Test func reductionFactorLeavesTheLanczosFilterAtLeastAFactorOfThree() {
        #expect(Resampler.reductionFactor(source: 2560, output: 640) == 1)
        #expect(Resampler.reductionFactor(source: 1000, output: 200) == 1)
        #expect(Resampler.reductionFactor(source: 1200, output: 200) == 2)
        #expect(Resampler.reductionFactor(source: 5120, output: 256) == 6)
        #expect(Resampler.reductionFactor(source: 100, output: 400) == 1)
        for (source, output) in [(5120, 256), (4000, 3), (999, 100), (7, 1)] {
            let factor = Resampler.reductionFactor(source: source, output: output)
            #expect(Double(source) / Double(factor) / Double(output) >= 3)
        }
    }

    // MARK: Alpha

    /// The brief's fringe test: transparent pixels whose hidden colour is black beside opaque
    /// white. Filtering straight alpha would average the black in; premultiplied, every pixel
    /// that is not fully transparent stays white.
    @Test(arguments: [(64, 16), (64, 23), (64, 100), (61, 7)])
    func noDarkFringeBetweenTransparentBlackAndOpaqueWhite(size: Int, target: Int) throws {
        let image = Bitmap.make(width: size, height: size) { x, y in
            x < size / 2 || y < size / 3 ? [0, 0, 0, 0] : [255, 255, 255, 255]
        }
        let resized = try image.resized(width: target, height: target)
        var edgePixels = 0, dark: [String] = []
        for y in 0..<target {
            for x in 0..<target {
                let p = resized.pixel(x, y)
                guard p[3] > 0 else { continue }
                if p[3] < 255 { edgePixels += 1 }
                if p[0] < 250 || p[1] < 250 || p[2] < 250 { dark.append("(\(x), \(y)) = \(p)") }
            }
        }
        #expect(edgePixels > 0, "the downscale makes partially transparent edge pixels")
        #expect(dark.isEmpty, "\(dark.count) dark pixels: \(dark.prefix(5))")
    }

    /// The colour stored under alpha 0 is invisible and must not matter: `transparent.png`
    /// (dice with soft edges over transparent black) gives the same result with that colour
    /// replaced by white or by noise.
    @Test func hiddenColourUnderZeroAlphaDoesNotChangeTheResult() throws {
        let dice = try Netpbm.bitmap("transparent-200x150.pam")
        var generator = SeededGenerator(seed: 42)
        let noise = Bitmap.make(width: dice.width, height: dice.height) { x, y in
            let p = dice.pixel(x, y)
            return p[3] == 0 ? [UInt8.random(in: 0...255, using: &generator), 255, UInt8.random(in: 0...255, using: &generator), 0] : p
        }
        let hiddenPixels = dice.pixels.enumerated().filter { $0.offset % 4 == 3 && $0.element == 0 }.count
        #expect(hiddenPixels > 10_000)
        for (width, height) in [(50, 37), (77, 41), (300, 200)] {
            #expect(try dice.resized(width: width, height: height) == noise.resized(width: width, height: height))
        }
    }

    /// On `transparent.png`'s soft edges, against the premultiplied area average: no systematic
    /// darkening. (Straight-alpha averaging darkens these pixels by 7 levels on average; ours
    /// differ by about 1, from Lanczos being sharper than a box.)
    @Test func noDarkFringeOnTransparentPNGsEdges() throws {
        let dice = try Netpbm.bitmap("transparent-200x150.pam").cropped(x: 0, y: 0, width: 200, height: 148)
        let resized = try dice.resized(width: 50, height: 37)
        let reference = Self.areaAverage(dice, factor: 4)
        var differences: [Double] = []
        for y in 0..<37 {
            for x in 0..<50 {
                let ours = resized.pixel(x, y), theirs = reference.pixel(x, y)
                guard (16...240).contains(theirs[3]) else { continue }
                let luma = { (p: [UInt8]) in (Double(p[0]) + Double(p[1]) + Double(p[2])) / 3 }
                differences.append(luma(ours) - luma(theirs))
            }
        }
        #expect(differences.count > 200, "the soft edges cover \(differences.count) output pixels")
        let mean = differences.reduce(0, +) / Double(differences.count)
        #expect(mean > -3, "edge pixels darker than the premultiplied average by \(-mean) on average")
    }

    @Test func premultipliedInputStaysPremultiplied() throws {
        // Colour ≤ alpha everywhere, and a hard edge whose ringing would overshoot.
        let image = Bitmap.make(width: 40, height: 40, format: .rgba8Premultiplied) { x, _ in
            x < 20 ? [0, 0, 0, 0] : [200, 100, 50, 200]
        }
        let resized = try image.resized(width: 13, height: 13)
        #expect(resized.pixelFormat == .rgba8Premultiplied)
        let pixels: [[UInt8]] = (0..<13).flatMap { y in (0..<13).map { x in resized.pixel(x, y) } }
        let overflowing = pixels.filter { (p: [UInt8]) -> Bool in p[0] > p[3] || p[1] > p[3] || p[2] > p[3] }
        #expect(overflowing.isEmpty, "colour above alpha: \(overflowing.prefix(5))")
        #expect(resized.pixel(12, 6) == [200, 100, 50, 200])
        #expect(resized.pixel(0, 6) == [0, 0, 0, 0])
    }

    // MARK: Invariants

    @Test(arguments: [PixelFormat.rgba8, .rgb8, .gray8, .grayAlpha8, .rgba8Premultiplied])
    func identityResizeReturnsTheSamePixels(format: PixelFormat) throws {
        let image = try Netpbm.bitmap("flower-240x180.ppm", as: format == .rgba8Premultiplied ? .rgba8 : format)
        let input = format == .rgba8Premultiplied
            ? try Bitmap(width: image.width, height: image.height, pixelFormat: format, pixels: image.pixels)
            : image
        let same = try input.resized(width: 240, height: 180)
        #expect(same == input)
        // Resizing one axis leaves the other an exact copy: each row of a narrower image is that
        // row resized on its own.
        #expect(FilterKernel.lanczos3(source: 180, reduction: 1, output: 180).isIdentity)
        let narrow = try input.resized(width: 120, height: 180)
        for y in [0, 1, 90, 179] {
            let row = try input.cropped(x: 0, y: y, width: 240, height: 1).resized(width: 120, height: 1)
            #expect(row == (try narrow.cropped(x: 0, y: y, width: 120, height: 1)))
        }
    }

    /// A constant image stays exactly constant, in every format and at every size: the weights
    /// of each output sum to 1, including at the edges.
    @Test(arguments: [PixelFormat.rgba8, .rgb8, .gray8, .grayAlpha8, .rgba8Premultiplied,
                      PixelFormat(channels: .rgba, alpha: .none), PixelFormat(channels: .grayAlpha, alpha: .none),
                      PixelFormat(channels: .grayAlpha, alpha: .premultiplied)])
    func constantImageStaysConstant(format: PixelFormat) throws {
        let value: [UInt8] = Array([90, 160, 30, 200].prefix(format.bytesPerPixel))
        let expected: [UInt8] = switch (format.channels, format.alpha) {
        case (.rgba, .none): [90, 160, 30, 255]
        case (.grayAlpha, .none): [90, 255]
        case (.grayAlpha, .premultiplied): [90, 160]
        default: value
        }
        let image = Bitmap.make(width: 37, height: 23, format: format) { _, _ in value }
        for (width, height) in [(1, 1), (5, 3), (36, 22), (37, 40), (111, 69), (200, 7)] {
            let resized = try image.resized(width: width, height: height)
            #expect(resized.pixelFormat == format)
            #expect((resized.width, resized.height) == (width, height))
            for y in 0..<height {
                for x in 0..<width where resized.pixel(x, y) != expected {
                    Issue.record("\(format) \(width)×\(height): (\(x), \(y)) = \(resized.pixel(x, y))")
                }
            }
        }
    }

    /// The opaque and grey paths agree with the RGBA path on the same picture: to the unit (the
    /// straight-alpha path divides by a filtered alpha that can be 255 ± a float rounding, which
    /// may tip a value sitting on a half the other way).
    @Test func everyFormatPathAgreesWithRGBA() throws {
        let photo = try Netpbm.bitmap("flower-240x180.ppm", as: .rgba8)
        let reference = try photo.resized(width: 70, height: 53)
        let rgb = try photo.converted(to: .rgb8).resized(width: 70, height: 53)
        #expect(maximumDifference(rgb.pixels, reference.converted(to: .rgb8).pixels) <= 1)
        let grey = photo.converted(to: .gray8).converted(to: .rgba8)
        let greyReference = try grey.resized(width: 70, height: 53)
        for format in [PixelFormat.gray8, .grayAlpha8] {
            let resized = try grey.converted(to: format).resized(width: 70, height: 53)
            #expect(resized.pixelFormat == format)
            #expect(maximumDifference(resized.pixels, greyReference.converted(to: format).pixels) <= 1)
        }
    }

    @Test func paddedRowsAreReadByTheirStride() throws {
        let photo = try Netpbm.bitmap("flower-240x180.ppm", as: .rgba8)
        let stride = 240 * 4 + 12
        var padded = [UInt8](repeating: 0xEE, count: stride * 180)
        for y in 0..<180 {
            padded.replaceSubrange(y * stride..<y * stride + 960, with: photo.pixels[y * 960..<(y + 1) * 960])
        }
        let image = try Bitmap(width: 240, height: 180, pixelFormat: .rgba8, bytesPerRow: stride, pixels: padded)
        #expect(try image.resized(width: 61, height: 47) == photo.resized(width: 61, height: 47))
        #expect(try image.resized(width: 16, height: 12) == photo.resized(width: 16, height: 12))
    }

    @Test func upscaleThenDownscaleComesBack() throws {
        let photo = try Netpbm.bitmap("flower-240x180.ppm", as: .rgba8)
        let small = try photo.resized(width: 60, height: 45)
        let roundTrip = try small.resized(width: 180, height: 135).resized(width: 60, height: 45)
        #expect(psnr(small.pixels, roundTrip.pixels) >= 35)
        // Upscaling interpolates: a 3× enlargement sampled at the original centres is close.
        let large = try small.resized(width: 180, height: 135)
        var centres: [UInt8] = []
        for y in 0..<45 { for x in 0..<60 { centres += large.pixel(3 * x + 1, 3 * y + 1) } }
        #expect(psnr(centres, small.pixels) >= 35)
    }

    @Test func tinyInputsAndOutputs() throws {
        let dot = try Bitmap(width: 1, height: 1, pixelFormat: .rgba8, pixels: [10, 20, 30, 40])
        let grown = try dot.resized(width: 5, height: 3)
        #expect(grown.pixels == Array([[UInt8]](repeating: [10, 20, 30, 40], count: 15).joined()))
        let row = try Bitmap(width: 3, height: 1, pixelFormat: .gray8, pixels: [0, 90, 180])
        // 3 → 1: the Lanczos weights (stretched ×3) are symmetric about the middle pixel.
        #expect(try row.resized(width: 1, height: 1).pixels == [90])
        let column = try row.oriented(.right).resized(width: 1, height: 7)
        #expect(column.pixels == column.pixels.sorted() && column.pixels.first! < column.pixels.last!, "a ramp stays a ramp")
    }

    @Test func rejectsNonPositiveSizes() throws {
        let image = Bitmap.make(width: 4, height: 4) { _, _ in [1, 2, 3, 4] }
        #expect(throws: ImageError.self) { try image.resized(width: 0, height: 4) }
        #expect(throws: ImageError.self) { try image.resized(width: 4, height: -1) }
        // Sizes whose bytes overflow fail before any table or buffer is allocated.
        #expect(throws: ImageError.self) { try image.resized(width: Int.max / 2, height: 3) }
        #expect(throws: ImageError.self) { try image.resized(width: 3, height: Int.max) }
        #expect(throws: ImageError.self) { try image.resized(width: 1 << 31, height: 1 << 31) }
    }

    @Test func filterTablesStayInsideTheInputAndSumToOne() {
        for (input, output) in [(2560, 640), (7, 3), (3, 7), (1, 9), (9, 1), (100, 100), (5120, 256)] {
            for reduction in [1, Resampler.reductionFactor(source: input, output: output)] {
                let kernel = FilterKernel.lanczos3(source: input, reduction: reduction, output: output)
                #expect(kernel.taps <= kernel.inputCount)
                #expect(kernel.starts == kernel.starts.sorted(), "starts never decrease (the ring buffer relies on it)")
                for position in 0..<output {
                    #expect(kernel.starts[position] >= 0 && kernel.starts[position] + kernel.taps <= kernel.inputCount)
                    let sum = kernel.weights[position * kernel.taps..<(position + 1) * kernel.taps].reduce(0, +)
                    #expect(abs(sum - 1) < 1e-5)
                }
            }
        }
        // A 4× reduction reaches 12 source pixels either side: 24 or 25 taps.
        #expect((24...25).contains(FilterKernel.lanczos3(source: 2560, reduction: 1, output: 640).taps))
    }
}
