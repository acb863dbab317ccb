import Foundation
import WebImageTestSupport
import Testing
@testable import WebImageCore

/// The built-in processors: output sizes, a pixel-level property of each, identifiers, and
/// animated images.
@Suite struct ProcessingProcessorsTests {
    /// A picture whose pixels say where they are: R = x, G = y, B = 100, opaque.
    static func coordinates(width: Int, height: Int, format: PixelFormat = .rgba8) -> Bitmap {
        Bitmap.make(width: width, height: height) { x, y in [UInt8(x), UInt8(y), 100, 255] }.converted(to: format)
    }

    static func dims(_ bitmap: Bitmap) -> [Int] {
        [bitmap.width, bitmap.height]
    }

    static func container(_ bitmap: Bitmap) -> ImageContainer {
        ImageContainer(image: bitmap)
    }

    /// The size `processor` makes of a `width` × `height` image, from its plan (resizing real
    /// images of these sizes is slow in a debug build; `resizeOutputFollowsThePlan` checks that
    /// the processor does what its plan says).
    static func size(_ processor: ImageProcessors.Resize, _ width: Int, _ height: Int) throws -> [Int] {
        let size = processor.plan(width: width, height: height).size
        return [size.width, size.height]
    }

    // MARK: Resize

    @Test func resizeSizes() throws {
        typealias Resize = ImageProcessors.Resize
        // One side given: the other follows the aspect ratio; no upscaling unless asked.
        #expect(try Self.size(Resize(width: 100), 400, 300) == [100, 75])
        #expect(try Self.size(Resize(height: 100), 400, 300) == [133, 100])
        #expect(try Self.size(Resize(width: 800), 400, 300) == [400, 300])
        #expect(try Self.size(Resize(width: 800, upscale: true), 400, 300) == [800, 600])
        // Fit: inside the box.
        #expect(try Self.size(Resize(width: 100, height: 100), 400, 300) == [100, 75])
        #expect(try Self.size(Resize(width: 100, height: 100), 300, 400) == [75, 100])
        #expect(try Self.size(Resize(width: 1000, height: 1000), 400, 300) == [400, 300])
        #expect(try Self.size(Resize(width: 1000, height: 1000, upscale: true), 400, 300) == [1000, 750])
        // Fill: covers the box, cropped to it.
        #expect(try Self.size(Resize(width: 100, height: 100, contentMode: .fill), 400, 300) == [100, 100])
        #expect(try Self.size(Resize(width: 200, height: 50, contentMode: .fill), 400, 300) == [200, 50])
        #expect(try Self.size(Resize(width: 500, height: 100, contentMode: .fill), 400, 300) == [400, 100])
        #expect(try Self.size(Resize(width: 500, height: 100, contentMode: .fill, upscale: true), 400, 300) == [500, 100])
        // Stretch: exactly the box (each side capped without upscaling).
        #expect(try Self.size(Resize(width: 100, height: 100, contentMode: .stretch), 400, 300) == [100, 100])
        #expect(try Self.size(Resize(width: 500, height: 100, contentMode: .stretch), 400, 300) == [400, 100])
        #expect(try Self.size(Resize(width: 500, height: 100, contentMode: .stretch, upscale: true), 400, 300) == [500, 100])
        // Nothing asked: unchanged. Extreme ratios never reach 0.
        #expect(try Self.size(Resize(), 400, 300) == [400, 300])
        #expect(try Self.size(Resize(width: 10), 1000, 3) == [10, 1])
    }

    @Test func resizeOutputFollowsThePlan() throws {
        let image = Self.coordinates(width: 40, height: 30)
        for resize in [ImageProcessors.Resize(width: 10), .init(height: 12), .init(width: 20, height: 20),
                       .init(width: 20, height: 10, contentMode: .fill), .init(width: 25, height: 5, contentMode: .stretch),
                       .init(width: 60, height: 60, contentMode: .fill), .init(width: 50, upscale: true), .init(width: 50)] {
            let output = try resize.process(Self.container(image)).image
            let plan = resize.plan(width: 40, height: 30)
            #expect(Self.dims(output) == [plan.size.width, plan.size.height], "\(resize.identifier)")
        }
    }

    @Test func resizeFillKeepsTheCentre() throws {
        // Left and right thirds red, the middle third green: a square fill keeps the middle.
        let image = Bitmap.make(width: 300, height: 100) { x, _ in (100..<200).contains(x) ? [0, 255, 0, 255] : [255, 0, 0, 255] }
        let output = try ImageProcessors.Resize(width: 50, height: 50, contentMode: .fill).process(Self.container(image)).image
        #expect(Self.dims(output) == [50, 50])
        for y in 0..<50 { for x in 0..<50 { #expect(output.pixel(x, y) == [0, 255, 0, 255]) } }
    }

    @Test func resizeKeepsFormatScaleAndLeavesSmallImagesAlone() throws {
        var image = Self.coordinates(width: 40, height: 30, format: .rgb8)
        image.scale = 2
        let output = try ImageProcessors.Resize(width: 20).process(Self.container(image)).image
        #expect(output.pixelFormat == .rgb8 && output.scale == 2 && output.width == 20)
        #expect(try ImageProcessors.Resize(width: 100, height: 100).process(Self.container(image)).image == image)
    }

    // MARK: Crop

    @Test func cropPicksTheRightPixels() throws {
        let image = Self.coordinates(width: 50, height: 40)
        let output = try ImageProcessors.Crop(x: 10, y: 5, width: 20, height: 15).process(Self.container(image)).image
        #expect(Self.dims(output) == [20, 15])
        for y in 0..<15 { for x in 0..<20 { #expect(output.pixel(x, y) == [UInt8(x + 10), UInt8(y + 5), 100, 255]) } }
        // Centred: (50 − 20) / 2 = 15, (40 − 10) / 2 = 15.
        let centred = try ImageProcessors.Crop(width: 20, height: 10).process(Self.container(image)).image
        #expect(Self.dims(centred) == [20, 10])
        #expect(centred.pixel(0, 0) == [15, 15, 100, 255])
        #expect(centred.pixel(19, 9) == [34, 24, 100, 255])
    }

    @Test func cropIsClippedToTheImageAndFailsOutsideIt() throws {
        let image = Self.coordinates(width: 50, height: 40, format: .gray8)
        let clipped = try ImageProcessors.Crop(x: 40, y: -5, width: 20, height: 10).process(Self.container(image)).image
        #expect(Self.dims(clipped) == [10, 5])
        #expect(clipped.pixel(0, 0) == [40])
        let larger = try ImageProcessors.Crop(width: 80, height: 20).process(Self.container(image)).image
        #expect(Self.dims(larger) == [50, 20])
        for crop in [ImageProcessors.Crop(x: 50, y: 0, width: 5, height: 5), .init(x: -10, y: 0, width: 10, height: 5),
                     .init(x: 0, y: 0, width: 0, height: 5), .init(x: Int.max, y: Int.max, width: Int.max, height: 1),
                     .init(x: Int.min, y: 0, width: Int.max, height: 1), .init(width: 0, height: 5), .init(width: 5, height: -1)] {
            #expect(throws: ImageError.self, "\(crop.identifier)") { try crop.process(Self.container(image)) }
        }
        #expect(try ImageProcessors.Crop(x: -5, y: -5, width: Int.max, height: Int.max).process(Self.container(image)).image == image)
    }

    // MARK: Rounded corners and circle

    @Test(arguments: [PixelFormat.rgba8, .rgb8, .gray8, .rgba8Premultiplied])
    func roundedCornersMakeCornersTransparentWithAnAntiAliasedEdge(format: PixelFormat) throws {
        let image = Bitmap.make(width: 60, height: 40) { _, _ in [200, 200, 200, 255] }.converted(to: format == .rgba8Premultiplied ? .rgba8 : format)
        let input = format == .rgba8Premultiplied ? try Bitmap(width: 60, height: 40, pixelFormat: format, pixels: image.pixels) : image
        let output = try ImageProcessors.RoundedCorners(radius: 10).process(Self.container(input)).image
        #expect(Self.dims(output) == [60, 40])
        #expect(output.pixelFormat.hasAlpha)
        let alpha = { (x: Int, y: Int) in output.pixel(x, y).last! }
        for (x, y) in [(0, 0), (59, 0), (0, 39), (59, 39), (1, 1), (58, 38)] { #expect(alpha(x, y) == 0, "(\(x), \(y))") }
        for (x, y) in [(30, 20), (10, 0), (0, 10), (30, 0), (59, 20), (3, 3), (56, 36)] { #expect(alpha(x, y) == 255, "(\(x), \(y))") }
        // Along the diagonal and the top row of a corner the alpha rises from 0 to 255, through
        // partial values where the arc crosses pixels.
        let diagonal = (0..<10).map { alpha($0, $0) }, top = (0..<11).map { alpha($0, 0) }
        #expect(diagonal == diagonal.sorted() && top == top.sorted())
        let partial = (0..<10).flatMap { y in (0..<10).map { x in alpha(x, y) } }.filter { $0 > 0 && $0 < 255 }
        #expect(partial.count >= 10, "anti-aliased: \(partial)")
        // The four corners are mirror images.
        for y in 0..<10 { for x in 0..<10 {
            #expect(alpha(x, y) == alpha(59 - x, y) && alpha(x, y) == alpha(x, 39 - y) && alpha(x, y) == alpha(59 - x, 39 - y))
        } }
        if format == .rgba8Premultiplied {
            for y in 0..<40 { for x in 0..<60 { let p = output.pixel(x, y); #expect(p[0] <= p[3]) } }
        } else {
            #expect(output.pixel(2, 2).first == 200, "straight alpha: the colour is kept")
        }
    }

    @Test func circleCropsToTheCentredSquareAndClearsTheCorners() throws {
        let image = Self.coordinates(width: 80, height: 50, format: .rgb8)
        let output = try ImageProcessors.Circle().process(Self.container(image)).image
        #expect(Self.dims(output) == [50, 50])
        #expect(output.pixelFormat == .rgba8)
        #expect(output.pixel(25, 25) == [40, 25, 100, 255], "the centre pixel is the source's (15 + 25, 25)")
        for (x, y) in [(0, 0), (49, 0), (0, 49), (49, 49), (5, 5), (44, 44)] { #expect(output.pixel(x, y)[3] == 0) }
        for (x, y) in [(25, 0), (0, 25), (49, 25), (25, 49), (25, 25), (10, 10)] { #expect(output.pixel(x, y)[3] > 0) }
        // Inside the circle opaque, outside transparent, a partial band at the edge.
        var partial = 0
        for y in 0..<50 {
            for x in 0..<50 {
                let distance = ((Double(x) + 0.5 - 25) * (Double(x) + 0.5 - 25) + (Double(y) + 0.5 - 25) * (Double(y) + 0.5 - 25)).squareRoot()
                let a = output.pixel(x, y)[3]
                if distance < 24 { #expect(a == 255) }
                if distance > 26 { #expect(a == 0) }
                if a > 0 && a < 255 { partial += 1 }
            }
        }
        #expect(partial > 50)
    }

    // MARK: Blur

    /// From ``Bitmap/boxBlurRadius`` on, three box blurs stand for the Gaussian: on a photo they
    /// stay within a bound of the exact filter at several radii, in every channel.
    @Test(arguments: [4.0, 6.5, 15.0])
    func boxBlurIsCloseToTheExactGaussian(radius: Double) throws {
        #expect(radius >= Bitmap.boxBlurRadius)
        let photo = try Netpbm.bitmap("flower-240x180.ppm", as: .rgba8)
        let boxes = try photo.blurred(radius: radius)
        let exact = try photo.blurredExactly(radius: radius)
        let score = psnr(boxes.converted(to: .rgb8).pixels, exact.converted(to: .rgb8).pixels)
        #expect(score >= 40, "radius \(radius): PSNR \(score) dB against the exact Gaussian")
    }

    /// The box sizes of SVG's and CSS's blur, worked out by hand: d = ⌊σ · 3√(2π)/4 + 0.5⌋ is
    /// 8 for σ = 4 (even: two boxes of 8, shifted either way, and one of 9) and 9 for σ = 5.
    @Test func boxSizesFollowTheFilterEffectsRule() {
        #expect(Resampler.boxes(sigma: 4).map { [$0.before, $0.after] } == [[4, 3], [3, 4], [4, 4]])
        #expect(Resampler.boxes(sigma: 5).map { [$0.before, $0.after] } == [[4, 4], [4, 4], [4, 4]])
    }

    /// A radius far larger than the image (the proxy allows σ = 400): every pixel becomes about
    /// the mean, and a left-to-right ramp keeps its order.
    /// Any finite radius is a blur, however absurd (a box wider than Int can count once trapped).
    @Test func anAbsurdRadiusStillAverages() throws {
        let image = Bitmap.make(width: 30, height: 4) { x, _ in [UInt8(x * 8), 0, 0, 255] }
        let output = try ImageProcessors.GaussianBlur(radius: 1e300).process(Self.container(image)).image
        #expect((0..<30).allSatisfy { abs(Int(output.pixel($0, 1)[0]) - 116) <= 1 })
    }

    @Test func aHugeRadiusAveragesTheImage() throws {
        let image = Bitmap.make(width: 300, height: 5) { x, _ in [UInt8(x * 255 / 299), 0, 0, 255] }
        let output = try ImageProcessors.GaussianBlur(radius: 400).process(Self.container(image)).image
        let row = (0..<300).map { Int(output.pixel($0, 2)[0]) }
        #expect(row == row.sorted())
        #expect(row.allSatisfy { abs($0 - 127) <= 48 }, "\(row.first!) … \(row.last!)")
    }

    @Test(arguments: [PixelFormat.rgba8, .rgb8, .gray8, .grayAlpha8])
    func blurOfAConstantImageStaysConstant(format: PixelFormat) throws {
        let image = Bitmap.make(width: 33, height: 21) { _, _ in [70, 140, 210, 180] }.converted(to: format)
        for radius in [0.5, 2, 8, 40] {
            let output = try ImageProcessors.GaussianBlur(radius: radius).process(Self.container(image)).image
            #expect(output == image, "radius \(radius)")
        }
    }

    @Test func blurOfAStepIsMonotoneAndSmooth() throws {
        let image = Bitmap.make(width: 120, height: 9) { x, _ in x < 60 ? [0, 0, 0, 255] : [255, 255, 255, 255] }
        let output = try ImageProcessors.GaussianBlur(radius: 4).process(Self.container(image)).image
        #expect(Self.dims(output) == [120, 9])
        for y in 0..<9 {
            let row = (0..<120).map { output.pixel($0, y)[0] }
            #expect(row == row.sorted(), "row \(y) is monotone")
            #expect(row[59] > 60 && row[59] < 128 && row[60] > 128 && row[60] < 195, "the step is spread: \(row[55...64])")
            #expect(row[40] == 0 && row[79] == 255, "5 σ from the step nothing changes")
        }
        // A Gaussian blur of a step is the normal distribution function across it: pixel x (centre
        // x + 0.5) gets Φ((x + 0.5 − 60) / σ).
        for x in 40..<80 {
            let expected = 0.5 * (1 + erf((Double(x) + 0.5 - 60) / 4 / 2.0.squareRoot()))
            #expect(abs(Double(output.pixel(x, 4)[0]) / 255 - expected) < 0.02, "x = \(x)")
        }
    }

    /// Radius 3 takes the exact filter, 12 the box blurs: neither darkens the edge.
    @Test(arguments: [3.0, 12.0])
    func blurKeepsTransparentNeighboursFromDarkeningAnEdge(radius: Double) throws {
        let image = Bitmap.make(width: 40, height: 40) { x, y in (10..<30).contains(x) && (10..<30).contains(y) ? [255, 255, 255, 255] : [0, 0, 0, 0] }
        let output = try ImageProcessors.GaussianBlur(radius: radius).process(Self.container(image)).image
        var soft = 0, dark: [String] = []
        for y in 0..<40 {
            for x in 0..<40 {
                let p = output.pixel(x, y)
                guard p[3] > 0 else { continue }
                if p[3] < 255 { soft += 1 }
                if p[0] < 250 { dark.append("(\(x), \(y)) = \(p)") }
            }
        }
        #expect(soft > 100)
        #expect(dark.isEmpty, "\(dark.count) dark pixels: \(dark.prefix(5))")
        #expect(try ImageProcessors.GaussianBlur(radius: 0).process(Self.container(image)).image == image)
    }

    // MARK: Grayscale

    @Test func grayscaleUsesRec601LumaInEveryChannel() throws {
        let image = Bitmap.make(width: 4, height: 1) { x, _ in [[255, 0, 0, 10], [0, 255, 0, 20], [0, 0, 255, 30], [255, 255, 255, 40]][x] }
        let output = try ImageProcessors.Grayscale().process(Self.container(image)).image
        #expect(output.pixels == [76, 76, 76, 10, 150, 150, 150, 20, 29, 29, 29, 30, 255, 255, 255, 40])
        let photo = try Netpbm.bitmap("flower-240x180.ppm")
        let grey = try ImageProcessors.Grayscale().process(Self.container(photo)).image
        #expect(grey.pixelFormat == .rgb8)
        for y in stride(from: 0, to: 180, by: 7) {
            for x in stride(from: 0, to: 240, by: 7) {
                let p = grey.pixel(x, y), q = photo.pixel(x, y)
                #expect(p[0] == p[1] && p[1] == p[2])
                let luma = 0.299 * Double(q[0]) + 0.587 * Double(q[1]) + 0.114 * Double(q[2])
                #expect(abs(Double(p[0]) - luma) <= 0.51)
            }
        }
        let alreadyGrey = photo.converted(to: .gray8)
        #expect(try ImageProcessors.Grayscale().process(Self.container(alreadyGrey)).image == alreadyGrey)
    }

    // MARK: Rotation and flips

    @Test(arguments: [PixelFormat.rgba8, .rgb8, .gray8, .grayAlpha8])
    func quarterTurnsFourTimesAndFlipsTwiceAreIdentity(format: PixelFormat) throws {
        // Every pixel different in every format (grey keeps only the first byte).
        let image = Bitmap.make(width: 7, height: 4) { x, y in [UInt8(x + 7 * y), UInt8(y), 100, 255] }.converted(to: format)
        let quarter = ImageProcessors.Rotate(quarterTurns: 1)
        var turned = Self.container(image)
        for turn in 1...4 {
            turned = try quarter.process(turned)
            #expect(turn == 4 || turned.image != image)
            #expect(Self.dims(turned.image) == (turn % 2 == 1 ? [4, 7] : [7, 4]))
        }
        #expect(turned.image == image)
        for axis in ImageProcessors.Flip.Axis.allCases {
            let once = try ImageProcessors.Flip(axis).process(Self.container(image))
            #expect(once.image != image)
            #expect(try ImageProcessors.Flip(axis).process(once).image == image)
        }
    }

    @Test func rotationAndFlipMovePixelsWhereExpected() throws {
        let image = Self.coordinates(width: 3, height: 2)
        // Clockwise: the bottom-left corner comes to the top-left.
        let right = try ImageProcessors.Rotate(quarterTurns: 1).process(Self.container(image)).image
        #expect(right.pixel(0, 0) == [0, 1, 100, 255] && right.pixel(1, 0) == [0, 0, 100, 255] && right.pixel(1, 2) == [2, 0, 100, 255])
        let half = try ImageProcessors.Rotate(quarterTurns: 2).process(Self.container(image)).image
        #expect(half.pixel(0, 0) == [2, 1, 100, 255])
        let left = try ImageProcessors.Rotate(quarterTurns: -1).process(Self.container(image)).image
        #expect(left.pixel(0, 0) == [2, 0, 100, 255])
        #expect(left == (try ImageProcessors.Rotate(quarterTurns: 3).process(Self.container(image)).image))
        let mirrored = try ImageProcessors.Flip(.horizontal).process(Self.container(image)).image
        #expect(mirrored.pixel(0, 0) == [2, 0, 100, 255] && mirrored.pixel(0, 1) == [2, 1, 100, 255])
        let flipped = try ImageProcessors.Flip(.vertical).process(Self.container(image)).image
        #expect(flipped.pixel(0, 0) == [0, 1, 100, 255] && flipped.pixel(2, 0) == [2, 1, 100, 255])
    }

    // MARK: Identifiers and composition

    @Test func identifiersSpellTheParameters() {
        #expect(ImageProcessors.Resize(width: 256).identifier == "resize(w=256,h=0,fit,up=false)")
        #expect(ImageProcessors.Resize(width: 200, height: 100, contentMode: .fill, upscale: true).identifier == "resize(w=200,h=100,fill,up=true)")
        #expect(ImageProcessors.Crop(x: 1, y: 2, width: 3, height: 4).identifier == "crop(x=1,y=2,w=3,h=4)")
        #expect(ImageProcessors.Crop(width: 3, height: 4).identifier == "crop(center,w=3,h=4)")
        #expect(ImageProcessors.RoundedCorners(radius: 12).identifier == "roundedCorners(r=12)")
        #expect(ImageProcessors.RoundedCorners(radius: 2.5).identifier == "roundedCorners(r=2.5)")
        #expect(ImageProcessors.Circle().identifier == "circle")
        #expect(ImageProcessors.GaussianBlur(radius: 8).identifier == "gaussianBlur(r=8)")
        #expect(ImageProcessors.GaussianBlur(radius: 0.75).identifier == "gaussianBlur(r=0.75)")
        #expect(ImageProcessors.Grayscale().identifier == "grayscale(rec601)")
        #expect(ImageProcessors.Rotate(quarterTurns: 1).identifier == "rotate(90)")
        #expect(ImageProcessors.Flip(.vertical).identifier == "flip(vertical)")
    }

    @Test func identifiersAreEqualForEqualResultsAndDistinctOtherwise() {
        let distinct: [any ImageProcessor] = [
            .resize(width: 256), .resize(width: 255), .resize(height: 256), .resize(width: 256, upscale: true),
            .resize(width: 256, height: 256), .resize(width: 256, height: 256, contentMode: .fill),
            .resize(width: 256, height: 256, contentMode: .stretch), .resize(width: 256, height: 128),
            .crop(x: 0, y: 0, width: 10, height: 10), .crop(x: 1, y: 0, width: 10, height: 10),
            .crop(x: 0, y: 1, width: 10, height: 10), .crop(x: 0, y: 0, width: 11, height: 10),
            .crop(x: 0, y: 0, width: 10, height: 11), .crop(width: 10, height: 10),
            .roundedCorners(radius: 8), .roundedCorners(radius: 8.5), .circle,
            .gaussianBlur(radius: 8), .gaussianBlur(radius: 2), .grayscale,
            .rotate(quarterTurns: 1), .rotate(quarterTurns: 2), .rotate(quarterTurns: 3), .rotate(quarterTurns: 0),
            .flip(.horizontal), .flip(.vertical),
            .composition([.grayscale, .circle]), .composition([.circle, .grayscale]),
        ]
        let identifiers = distinct.map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count, "\(identifiers)")
        // Equal parameters, or parameters meaning the same result, give equal identifiers.
        #expect(ImageProcessors.Resize(width: 256).identifier == ImageProcessors.Resize(width: 256, height: 0).identifier)
        #expect(ImageProcessors.Resize(width: 256, contentMode: .fill).identifier == ImageProcessors.Resize(width: 256).identifier)
        #expect(ImageProcessors.Rotate(quarterTurns: 5).identifier == ImageProcessors.Rotate(quarterTurns: 1).identifier)
        #expect(ImageProcessors.Rotate(quarterTurns: -2).identifier == ImageProcessors.Rotate(quarterTurns: 2).identifier)
        #expect(ImageProcessors.GaussianBlur(radius: 8).identifier == ImageProcessors.GaussianBlur(radius: 8.0).identifier)
        #expect(ImageProcessors.GaussianBlur(radius: 8) == ImageProcessors.GaussianBlur(radius: 8))
        #expect(ImageProcessors.Composition([.resize(width: 96, height: 96, contentMode: .fill), .circle]).identifier
            == "resize(w=96,h=96,fill,up=false)|circle")
    }

    @Test func compositionAppliesItsProcessorsInOrder() throws {
        let image = Self.coordinates(width: 40, height: 30)
        let steps: [any ImageProcessor] = [.crop(x: 10, y: 0, width: 20, height: 10), .rotate(quarterTurns: 1), .grayscale]
        let composed = try ImageProcessors.Composition(steps).process(Self.container(image)).image
        var stepwise = Self.container(image)
        for step in steps { stepwise = try step.process(stepwise) }
        #expect(composed == stepwise.image)
        #expect(Self.dims(composed) == [10, 20])
        let reversed = try ImageProcessors.Composition(steps.reversed()).process(Self.container(image)).image
        #expect(reversed != composed, "order matters")
        #expect(try ImageProcessors.Composition([]).process(Self.container(image)).image == image)
    }

    // MARK: Animated images

    @Test func everyFrameOfAnAnimationIsProcessed() throws {
        // Three frames, each a different flat colour, with a marker pixel in the top-left corner.
        let frames: [AnimatedImage.Frame] = (0..<3).map { index in
            let colour: [UInt8] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]][index]
            let bitmap = Bitmap.make(width: 64, height: 48) { x, y in x == 0 && y == 0 ? [0, 0, 0, 255] : colour }
            return .init(bitmap: bitmap, duration: .milliseconds(100 * (index + 1)))
        }
        let animated = ImageContainer(image: frames[0].bitmap, animation: AnimatedImage(frames: frames, loopCount: 3), format: .gif)
        let processors: [any ImageProcessor] = [
            .resize(width: 32), .resize(width: 20, height: 20, contentMode: .fill), .crop(width: 30, height: 30),
            .roundedCorners(radius: 6), .circle, .gaussianBlur(radius: 2), .grayscale, .rotate(quarterTurns: 1),
            .flip(.horizontal), .composition([.grayscale, .resize(width: 16)]),
            // A closure processor through the public frame-mapping helper.
            ImageProcessors.Anonymous(id: "top-left-8") { image in
                try image.mappingFrames { try $0.cropped(x: 0, y: 0, width: 8, height: 8) }
            },
        ]
        for processor in processors {
            let output = try processor.process(animated)
            let expected = try processor.process(Self.container(frames[0].bitmap)).image
            let outputFrames = try #require(output.animation?.frames, "\(processor.identifier)")
            #expect(outputFrames.count == 3)
            #expect(output.image == outputFrames[0].bitmap, "the still image is the first processed frame")
            #expect(output.image == expected, "\(processor.identifier)")
            for (index, frame) in outputFrames.enumerated() {
                let single = try processor.process(Self.container(frames[index].bitmap)).image
                #expect(frame.bitmap == single, "\(processor.identifier): frame \(index)")
                #expect(frame.duration == frames[index].duration)
            }
            #expect(output.animation?.loopCount == 3 && output.format == .gif)
        }
    }

    @Test func anAnonymousProcessorIsItsClosureUnderItsIdentifier() throws {
        let processor = ImageProcessors.Anonymous(id: "half") { image in
            try image.mappingFrames { try $0.cropped(x: 0, y: 0, width: $0.width / 2, height: $0.height) }
        }
        #expect(processor.identifier == "half")
        let output = try processor.process(Self.container(Self.coordinates(width: 40, height: 10)))
        #expect(Self.dims(output.image) == [20, 10])
        // The identifier enters the cache key: two ids, two variants of one URL.
        let url = URL(string: "https://example.com/a.png")!
        let first = ImageRequest(url: url, processors: [processor])
        let second = ImageRequest(url: url, processors: [ImageProcessors.Anonymous(id: "other") { $0 }])
        #expect(first.imageKey != second.imageKey)
    }

    /// A processor that would make an animation larger than the animation limit stops at the
    /// first frame with a typed error, before the other frames are allocated.
    @Test func growingAnAnimationPastTheLimitIsRefused() throws {
        let frames = (0..<50).map { _ in AnimatedImage.Frame(bitmap: Self.coordinates(width: 4, height: 4), duration: .milliseconds(10)) }
        let animated = ImageContainer(image: frames[0].bitmap, animation: AnimatedImage(frames: frames, loopCount: 0))
        // 50 frames of 64×64 RGBA are 800 KB: past a 500 KB limit, within a 1 MB one.
        #expect(throws: ImageError.self) {
            _ = try animated.mappingFrames(maximumBytes: 500_000) { try $0.resized(width: 64, height: 64) }
        }
        let grown = try animated.mappingFrames(maximumBytes: 1_000_000) { try $0.resized(width: 64, height: 64) }
        #expect(grown.animation?.frames.count == 50)
    }
}
