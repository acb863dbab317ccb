import Foundation
import WebImageTestSupport
import Testing
import WebImageCore
@testable import WebImageCodecs

/// APNG: composition (dispose and blend ops), timing, loop count, the default image, limits
/// and hostile control chunks, on files built from the APNG specification.
@Suite struct PNGAnimationTests {
    typealias Frame = PNGBuilder.Frame

    static func decode(_ bytes: [UInt8], options: ImageDecodingOptions = .init()) throws -> ImageContainer {
        try PNGDecoder().decode(Data(bytes), options: options)
    }

    static let red: PNGBuilder.Pixel = [255, 0, 0, 255]
    static let green: PNGBuilder.Pixel = [0, 255, 0, 255]
    static let blue: PNGBuilder.Pixel = [0, 0, 255, 255]
    static let clear: PNGBuilder.Pixel = [0, 0, 0, 0]

    @Test func fixtures() throws {
        let delay = try PNGDecoder().decode(try PNGGIFReference.fixture("apng-delay.png"), options: .init())
        let animation = try #require(delay.animation)
        #expect(delay.format == .apng)
        #expect(animation.width == 128 && animation.height == 64)
        // Its default image is not part of the animation: four fcTL frames.
        #expect(animation.frames.map(\.duration) == [.milliseconds(500), .seconds(1), .milliseconds(500), .seconds(1)])
        #expect(animation.loopCount == 0)

        let single = try PNGDecoder().decode(try PNGGIFReference.fixture("apng-single_frame.png"), options: .init())
        #expect(single.animation == nil, "one frame is a still image")
        #expect(single.image.width == 128 && single.image.height == 64)
    }

    /// Dispose ops: none keeps the frame, background clears its region to transparent,
    /// previous puts back what was there before it.
    @Test func disposeOps() throws {
        let base = Frame(pixels: PNGBuilder.solid(4, 4, Self.red))
        func animation(dispose: UInt8) throws -> AnimatedImage {
            let patch = Frame(pixels: PNGBuilder.solid(2, 2, Self.green), x: 1, y: 1, dispose: dispose)
            let last = Frame(pixels: PNGBuilder.solid(1, 1, Self.blue), x: 3, y: 3)
            return try #require(try Self.decode(PNGBuilder.apng(width: 4, height: 4, frames: [base, patch, last])).animation)
        }
        for dispose: UInt8 in 0...2 {
            let frames = try animation(dispose: dispose).frames.map(\.bitmap)
            #expect(frames.count == 3)
            #expect(frames[1].pixel(1, 1) == [0, 255, 0, 255], "the patch is drawn")
            #expect(frames[1].pixel(0, 0) == [255, 0, 0, 255])
            let expected: [UInt8] = switch dispose {
            case 0: [0, 255, 0, 255]  // none: the patch stays
            case 1: [0, 0, 0, 0]      // background: cleared to transparent
            default: [255, 0, 0, 255] // previous: the red beneath comes back
            }
            #expect(frames[2].pixel(1, 1) == expected, "dispose op \(dispose)")
            #expect(frames[2].pixel(3, 3) == [0, 0, 255, 255])
            #expect(frames[2].pixel(0, 0) == [255, 0, 0, 255], "outside the region nothing changes")
        }
    }

    /// "Previous" on the first frame means "background" (the specification), and a first
    /// frame blended "over" still replaces the transparent canvas.
    @Test func firstFrameOps() throws {
        let first = Frame(pixels: PNGBuilder.solid(2, 2, [10, 20, 30, 0]), dispose: 2, blend: 1)
        let second = Frame(pixels: PNGBuilder.solid(1, 1, Self.green), blend: 1)
        let frames = try #require(try Self.decode(PNGBuilder.apng(width: 2, height: 2, frames: [first, second])).animation).frames
        // Source semantics on the first frame: its transparent pixels keep their stored colour.
        #expect(frames[0].bitmap.pixel(1, 1) == [10, 20, 30, 0])
        #expect(frames[1].bitmap.pixel(0, 0) == [0, 255, 0, 255])
        #expect(frames[1].bitmap.pixel(1, 1) == [0, 0, 0, 0], "cleared as background")
    }

    /// Blend "over" with straight alpha: α = αs + αd(1 − αs) and C = (Cs·αs + Cd·αd(1 − αs)) / α,
    /// rounded; "source" replaces the pixels, alpha included.
    @Test func blendOps() throws {
        let base = Frame(pixels: [[[200, 100, 0, 255], [200, 100, 0, 128], [200, 100, 0, 0], [0, 0, 0, 255]]])
        let top: [[PNGBuilder.Pixel]] = [[[0, 0, 200, 128], [0, 0, 200, 128], [0, 0, 200, 128], [9, 9, 9, 0]]]
        let over = try #require(try Self.decode(PNGBuilder.apng(width: 4, height: 1, frames: [base, Frame(pixels: top, blend: 1)])).animation)
        let composed = over.frames[1].bitmap
        func expected(_ source: [Double], _ target: [Double]) -> [UInt8] {
            let sa = source[3] / 255, ta = target[3] / 255
            let alpha = sa + ta * (1 - sa)
            let colour = (0..<3).map { UInt8(((source[$0] * sa + target[$0] * ta * (1 - sa)) / alpha).rounded()) }
            return colour + [UInt8((alpha * 255).rounded())]
        }
        #expect(composed.pixel(0, 0) == expected([0, 0, 200, 128], [200, 100, 0, 255]))
        #expect(composed.pixel(1, 0) == expected([0, 0, 200, 128], [200, 100, 0, 128]))
        #expect(composed.pixel(2, 0) == [0, 0, 200, 128], "over a transparent pixel: the source")
        #expect(composed.pixel(3, 0) == [0, 0, 0, 255], "a transparent source leaves the pixel")

        let source = try #require(try Self.decode(PNGBuilder.apng(width: 4, height: 1, frames: [base, Frame(pixels: top, blend: 0)])).animation)
        #expect(Self.rgbaRow(source.frames[1].bitmap) == top[0].map { $0.map(UInt8.init) })
    }

    static func rgbaRow(_ bitmap: Bitmap) -> [[UInt8]] {
        (0..<bitmap.width).map { bitmap.pixel($0, 0) }
    }

    /// delay_num / delay_den seconds; a zero denominator means hundredths. Loop count is
    /// num_plays.
    @Test func timingAndLoopCount() throws {
        var frames = [Frame(pixels: PNGBuilder.solid(1, 1, Self.red)), Frame(pixels: PNGBuilder.solid(1, 1, Self.green))]
        frames[0].delay = (3, 0)
        frames[1].delay = (1, 3)
        let animation = try #require(try Self.decode(PNGBuilder.apng(width: 1, height: 1, frames: frames, plays: 3)).animation)
        #expect(animation.frames[0].duration == .milliseconds(30))
        #expect(animation.frames[1].duration == .nanoseconds(333_333_333))
        #expect(animation.loopCount == 3)
    }

    /// A default image kept out of the animation is not a frame; the canvas starts
    /// transparent for the first fcTL frame, not with the default image under it.
    @Test func defaultImageOutsideTheAnimation() throws {
        let frames = [Frame(pixels: [[Self.green, Self.clear]]), Frame(pixels: [[Self.blue, Self.blue]])]
        let bytes = PNGBuilder.apng(width: 2, height: 1, frames: frames, defaultImage: [[Self.red, Self.red]])
        let animation = try #require(try Self.decode(bytes).animation)
        #expect(animation.frames.count == 2)
        #expect(Self.rgbaRow(animation.frames[0].bitmap) == [[0, 255, 0, 255], [0, 0, 0, 0]])

        var options = ImageDecodingOptions()
        options.firstFrameOnly = true
        let first = try Self.decode(bytes, options: options)
        #expect(first.animation == nil)
        #expect(Self.rgbaRow(first.image) == [[0, 255, 0, 255], [0, 0, 0, 0]])
    }

    // MARK: - Limits and hostile control chunks

    /// Frames times canvas are checked against maximumAnimationBytes before decoding.
    @Test func animationByteLimit() throws {
        let frames = (0..<5).map { _ in Frame(pixels: PNGBuilder.solid(8, 8, Self.red)) }
        let bytes = PNGBuilder.apng(width: 8, height: 8, frames: frames)
        var options = ImageDecodingOptions()
        options.maximumAnimationBytes = 4 * 8 * 8 * 4
        #expect(throws: ImageError.self) { try Self.decode(bytes, options: options) }
        options.maximumAnimationBytes = 5 * 8 * 8 * 4
        #expect(try Self.decode(bytes, options: options).animation?.frames.count == 5)
        options.maximumAnimationBytes = 1
        options.firstFrameOnly = true
        #expect(try Self.decode(bytes, options: options).animation == nil, "one frame needs no animation budget")
    }

    /// acTL claiming two billion frames allocates nothing for them; as its fcTL count differs,
    /// the file is the still default image (see APNGChunkRulesTests for every count rule).
    @Test(.timeLimit(.minutes(10 * Sanitizers.slowdown))) func hugeDeclaredFrameCount() throws {
        let frames = [Frame(pixels: PNGBuilder.solid(2, 2, Self.red)), Frame(pixels: PNGBuilder.solid(2, 2, Self.green))]
        let huge = try Self.decode(PNGBuilder.apng(width: 2, height: 2, frames: frames, declaredFrames: 0x7FFF_FFFF))
        #expect(huge.animation == nil)
        #expect(Self.rgbaRow(huge.image) == [[255, 0, 0, 255], [255, 0, 0, 255]])
        // Fewer declared than present: not the declared frames, the still image.
        let three = frames + [Frame(pixels: PNGBuilder.solid(2, 2, Self.blue))]
        #expect(try Self.decode(PNGBuilder.apng(width: 2, height: 2, frames: three, declaredFrames: 2)).animation == nil)
    }

    /// A frame reaching outside the canvas, or with zero size, is corrupt data.
    @Test(arguments: [(3, 0, 2, 2), (0, 3, 2, 2), (0, 0, 5, 1), (0, 0, 0, 1), (0x7FFF_FFFF, 0, 2, 2), (0, 0xFFFF_FFFF, 1, 1)])
    func framesOutsideTheCanvas(x: Int, y: Int, width: Int, height: Int) throws {
        var bytes = PNGBuilder.apng(width: 4, height: 4, frames: [Frame(pixels: PNGBuilder.solid(4, 4, Self.red)), Frame(pixels: PNGBuilder.solid(2, 2, Self.green), x: 1, y: 1)])
        // Rewrite the second fcTL (sequence 1) in place, with a correct CRC.
        let marker = Array("fcTL".utf8) + PNGBuilder.be32(1)
        let start = try #require(bytes.indices.first { bytes[$0..<min($0 + 8, bytes.count)].elementsEqual(marker) })
        var data = Array(bytes[(start + 4)..<(start + 30)])
        data.replaceSubrange(4..<20, with: PNGBuilder.be32(width) + PNGBuilder.be32(height) + PNGBuilder.be32(x) + PNGBuilder.be32(y))
        bytes.replaceSubrange((start - 4)..<(start + 34), with: PNGBuilder.chunk("fcTL", data))
        #expect(throws: ImageError.self) { try Self.decode(bytes) }
    }

    /// Damaged fdAT data, a frame without data, an unknown op: typed errors. (A malformed
    /// acTL only sets the animation aside: APNGChunkRulesTests.)
    @Test func damagedAnimationChunks() throws {
        let frames = [Frame(pixels: PNGBuilder.solid(2, 2, Self.red)), Frame(pixels: PNGBuilder.solid(2, 2, Self.green))]
        let good = PNGBuilder.apng(width: 2, height: 2, frames: frames)
        func offset(of type: String) -> Int { good.indices.first { good[$0..<min($0 + 4, good.count)].elementsEqual(Array(type.utf8)) }! }
        // A flipped byte inside fdAT's data: its CRC no longer matches.
        var fdat = good
        fdat[offset(of: "fdAT") + 12] ^= 0x40
        #expect(throws: ImageError.self) { try Self.decode(fdat) }
        // fdAT with only a sequence number, the frame's only one: the frame has no data.
        var empty = good
        let start = offset(of: "fdAT") - 4
        let length = Int(good[start]) << 24 | Int(good[start + 1]) << 16 | Int(good[start + 2]) << 8 | Int(good[start + 3])
        empty.replaceSubrange(start..<(start + 12 + length), with: PNGBuilder.chunk("fdAT", [0, 0, 0, 2]))
        #expect(throws: ImageError.self) { try Self.decode(empty) }
        // An unknown dispose op.
        let frames2 = [frames[0], Frame(pixels: PNGBuilder.solid(2, 2, Self.green), dispose: 7)]
        #expect(throws: ImageError.self) { try Self.decode(PNGBuilder.apng(width: 2, height: 2, frames: frames2)) }
    }

    /// Cut anywhere, an APNG gives a typed error or the frames that arrived whole; never a
    /// crash, and never more frames than it has.
    @Test func truncatedAtEveryOffset() throws {
        let frames = (0..<3).map { index in Frame(pixels: PNGBuilder.solid(3, 2, [UInt16(index * 100), 50, 0, 255]), dispose: UInt8(index % 3), blend: 1) }
        let bytes = PNGBuilder.apng(width: 3, height: 2, frames: frames)
        let full = try #require(try Self.decode(bytes).animation)
        for length in 0..<bytes.count {
            do {
                let partial = try Self.decode(Array(bytes.prefix(length)))
                let decoded = partial.animation?.frames.map(\.bitmap) ?? [partial.image]
                #expect(decoded.count <= 3)
                #expect(decoded == Array(full.frames.map(\.bitmap).prefix(decoded.count)), "\(length) bytes: frames that decode are the real ones")
            } catch is ImageError {}
        }
    }
}
