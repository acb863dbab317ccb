import Foundation
import Testing
import WebImageTestSupport
import WebImageCore
@testable import WebImageCodecs

/// The GIF decoder on files built from the GIF89a specification and the repository fixtures:
/// palettes, transparency, disposal, clipping, timing, loop counts, limits and damage.
@Suite struct GIFDecoderTests {
    typealias Frame = GIFBuilder.Frame

    static func decode(_ bytes: [UInt8], options: ImageDecodingOptions = .init()) throws -> ImageContainer {
        try GIFDecoder().decode(Data(bytes), options: options)
    }

    static func frames(_ container: ImageContainer) -> [Bitmap] {
        container.animation?.frames.map(\.bitmap) ?? [container.image]
    }

    /// Red, green, blue, white, black.
    static let palette: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255], [0, 0, 0]]

    static func solid(_ width: Int, _ height: Int, _ index: UInt8, x: Int = 0, y: Int = 0,
                      control: (disposal: Int, delay: Int, transparent: Int?)? = nil) -> Frame {
        Frame(x: x, y: y, width: width, height: height, indices: Array(repeating: index, count: width * height), control: control)
    }

    @Test func fixtures() throws {
        let hopper = try GIFDecoder().decode(try PNGGIFReference.fixture("hopper.gif"), options: .init())
        #expect(hopper.image.width == 128 && hopper.image.height == 128)
        #expect(hopper.animation == nil)
        #expect(hopper.format == .gif)

        // Five frames on a 100×100 screen, each disposed to the background colour; NETSCAPE
        // loop 0; delays of 100 hundredths.
        let dispose = try GIFDecoder().decode(try PNGGIFReference.fixture("dispose_bgnd.gif"), options: .init())
        let animation = try #require(dispose.animation)
        #expect(animation.frames.count == 5)
        #expect(animation.loopCount == 0)
        #expect(animation.frames.allSatisfy { $0.duration == .seconds(1) })

        // The decompression bomb: a frame wholly below its 32×32 screen, cut short. Fails
        // without decoding or allocating for 65535×1321 pixels.
        #expect(throws: ImageError.self) { try GIFDecoder().decode(try PNGGIFReference.fixture("decompression_bomb.gif"), options: .init()) }
        #expect(throws: ImageError.corruptData("GIF: the logical screen is 0×32, which holds no pixels")) {
            try GIFDecoder().decode(try PNGGIFReference.fixture("zero_width.gif"), options: .init())
        }
    }

    /// Local palettes override the global one; no palette at all reads indices as grey; an
    /// index past the palette is opaque black.
    @Test func palettes() throws {
        var local = Self.solid(2, 1, 1)
        local.localPalette = [[10, 20, 30], [40, 50, 60]]
        let image = try Self.decode(GIFBuilder.gif(width: 2, height: 1, globalPalette: Self.palette, blocks: [GIFBuilder.image(local)]))
        #expect(image.image.pixel(0, 0) == [40, 50, 60, 255])

        let grey = try Self.decode(GIFBuilder.gif(width: 2, height: 1, globalPalette: nil, blocks: [GIFBuilder.image(Frame(width: 2, height: 1, indices: [0, 200]))]))
        #expect(grey.image.pixel(0, 0) == [0, 0, 0, 255])
        #expect(grey.image.pixel(1, 0) == [200, 200, 200, 255])

        // A 2-entry global table (padded to 2 by the builder); index 7 is past it.
        let past = try Self.decode(GIFBuilder.gif(width: 1, height: 1, globalPalette: [[9, 9, 9], [8, 8, 8]], blocks: [GIFBuilder.image(Frame(width: 1, height: 1, indices: [7]))]))
        #expect(past.image.pixel(0, 0) == [0, 0, 0, 255])
    }

    /// A transparent index leaves what is beneath; on the first frame it keeps the palette
    /// colour with alpha 0.
    @Test func transparency() throws {
        let first = Frame(width: 2, height: 1, indices: [0, 3], control: (1, 10, 3))
        let second = Frame(width: 2, height: 1, indices: [1, 1], control: (1, 10, 1))
        let animation = try #require(try Self.decode(GIFBuilder.gif(width: 2, height: 1, globalPalette: Self.palette, blocks: [GIFBuilder.image(first), GIFBuilder.image(second)])).animation)
        #expect(animation.frames[0].bitmap.pixel(0, 0) == [255, 0, 0, 255])
        #expect(animation.frames[0].bitmap.pixel(1, 0) == [255, 255, 255, 0], "stored colour, alpha 0")
        #expect(animation.frames[1].bitmap.pixel(0, 0) == [255, 0, 0, 255], "transparent over red: red")
        #expect(animation.frames[1].bitmap.pixel(1, 0) == [255, 255, 255, 0], "transparent over nothing: nothing")
    }

    /// Disposal 2 clears to transparent when the frame has a transparent index, and fills the
    /// screen's background colour otherwise; disposal 3 restores what was beneath; 0 and 1 keep.
    @Test(arguments: [0, 1, 2, 3])
    func disposal(method: Int) throws {
        let background = Self.solid(4, 4, 0, control: (1, 5, nil))                 // red screen
        let patch = Self.solid(2, 2, 1, x: 1, y: 1, control: (method, 5, nil))   // green patch
        let patchWithTransparency = Self.solid(2, 2, 1, x: 1, y: 1, control: (method, 5, 4))
        let last = Self.solid(1, 1, 2, x: 3, y: 3, control: (1, 5, nil))          // blue corner
        for (patch, transparent) in [(patch, false), (patchWithTransparency, true)] {
            let bytes = GIFBuilder.gif(width: 4, height: 4, globalPalette: Self.palette, background: 3,
                                       blocks: [GIFBuilder.image(background), GIFBuilder.image(patch), GIFBuilder.image(last)])
            let frames = Self.frames(try Self.decode(bytes))
            #expect(frames.count == 3)
            #expect(frames[1].pixel(1, 1) == [0, 255, 0, 255])
            let expected: [UInt8] = switch method {
            case 2: transparent ? [0, 0, 0, 0] : [255, 255, 255, 255]  // transparent, or background colour 3 (white)
            case 3: [255, 0, 0, 255]                                   // the red beneath
            default: [0, 255, 0, 255]                                  // kept
            }
            #expect(frames[2].pixel(1, 1) == expected, "disposal \(method), transparent index: \(transparent)")
            #expect(frames[2].pixel(0, 0) == [255, 0, 0, 255])
            #expect(frames[2].pixel(3, 3) == [0, 0, 255, 255])
        }
    }

    /// Frames reaching past the screen are clipped; one wholly outside draws nothing.
    @Test func framesOutsideTheScreenAreClipped() throws {
        let base = Self.solid(4, 4, 0, control: (1, 0, nil))
        let overhang = Frame(x: 2, y: 3, width: 5, height: 3, indices: (0..<15).map { UInt8($0 % 3) }, control: (1, 0, nil))
        let outside = Self.solid(10, 10, 2, x: 100, y: 100, control: (1, 0, nil))
        let frames = Self.frames(try Self.decode(GIFBuilder.gif(width: 4, height: 4, globalPalette: Self.palette,
                                                               blocks: [GIFBuilder.image(base), GIFBuilder.image(overhang), GIFBuilder.image(outside)])))
        #expect(frames.count == 3)
        #expect(frames.allSatisfy { $0.width == 4 && $0.height == 4 })
        // Row 0 of the overhanging frame lands on screen row 3, columns 2 and 3: indices 0, 1.
        #expect(frames[1].pixel(2, 3) == [255, 0, 0, 255])
        #expect(frames[1].pixel(3, 3) == [0, 255, 0, 255])
        #expect(frames[2] == frames[1])
    }

    /// Interlaced frames land in the right rows, including heights that leave passes empty.
    @Test(arguments: [1, 2, 3, 5, 8, 9, 17])
    func interlacedRows(height: Int) throws {
        let indices = (0..<(3 * height)).map { UInt8($0 / 3 % 5) }
        var frame = Frame(width: 3, height: height, indices: indices)
        frame.interlaced = true
        let image = try Self.decode(GIFBuilder.gif(width: 3, height: height, globalPalette: Self.palette, blocks: [GIFBuilder.image(frame)]))
        for y in 0..<height {
            #expect(image.image.pixel(1, y) == Self.palette[y % 5] + [255], "row \(y)")
        }
    }

    /// Delays are stored hundredths exactly (0 without a control extension); the loop count is
    /// NETSCAPE's value + 1 plays, 0 forever, 1 without the extension, first extension wins.
    @Test func timingAndLoopCount() throws {
        let a = GIFBuilder.image(Self.solid(1, 1, 0, control: (0, 7, nil)))
        let b = GIFBuilder.image(Self.solid(1, 1, 1))
        func animation(_ blocks: [[UInt8]]) throws -> AnimatedImage {
            try #require(try Self.decode(GIFBuilder.gif(width: 1, height: 1, globalPalette: Self.palette, blocks: blocks)).animation)
        }
        let none = try animation([a, b])
        #expect(none.loopCount == 1)
        #expect(none.frames.map(\.duration) == [.milliseconds(70), .zero])
        #expect(none.frames[1].displayDuration == .milliseconds(100), "browsers' rule for tiny delays")
        #expect(try animation([GIFBuilder.netscape(loop: 0), a, b]).loopCount == 0)
        #expect(try animation([GIFBuilder.netscape(loop: 3), a, b]).loopCount == 4)
        #expect(try animation([GIFBuilder.netscape(loop: 2), a, GIFBuilder.netscape(loop: 9), b]).loopCount == 3)
        // Comments and unknown extensions anywhere are skipped.
        let comment: [UInt8] = [0x21, 0xFE, 3] + Array("hi!".utf8) + [0]
        #expect(try animation([comment, a, comment, b, comment]).frames.count == 2)
    }

    @Test func firstFrameOnly() throws {
        var options = ImageDecodingOptions()
        options.firstFrameOnly = true
        let container = try GIFDecoder().decode(try PNGGIFReference.fixture("dispose_bgnd.gif"), options: options)
        #expect(container.animation == nil)
        #expect(container.image == (try GIFDecoder().decode(try PNGGIFReference.fixture("dispose_bgnd.gif"), options: .init())).animation?.frames[0].bitmap)
    }

    // MARK: - Limits

    @Test func limits() throws {
        var options = ImageDecodingOptions()
        // The screen against the pixel limit.
        options.maximumPixelCount = 15
        let screen = GIFBuilder.gif(width: 4, height: 4, globalPalette: Self.palette, blocks: [GIFBuilder.image(Self.solid(1, 1, 0))])
        #expect(throws: ImageError.self) { try Self.decode(screen, options: options) }
        // A frame's declared size against it, even off-screen.
        options.maximumPixelCount = 100
        let huge = GIFBuilder.gif(width: 2, height: 2, globalPalette: Self.palette, blocks: [GIFBuilder.image(Self.solid(11, 10, 0))])
        #expect(throws: ImageError.self) { try Self.decode(huge, options: options) }
        // Frames against the animation limit.
        options = ImageDecodingOptions()
        options.maximumAnimationBytes = 2 * 4 * 4 * 4
        let three = GIFBuilder.gif(width: 4, height: 4, globalPalette: Self.palette, blocks: (0..<3).map { _ in GIFBuilder.image(Self.solid(4, 4, 0)) })
        #expect(throws: ImageError.self) { try Self.decode(three, options: options) }
        options.maximumAnimationBytes = 3 * 4 * 4 * 4
        #expect(try Self.decode(three, options: options).animation?.frames.count == 3)
    }

    /// LZW work is bounded over the file: frames mostly off-screen still cost their width per
    /// visible row, and too much of that is refused.
    @Test(.timeLimit(.minutes(10 * Sanitizers.slowdown))) func lzwWorkBudget() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 40_000
        options.maximumAnimationBytes = 40_000 * 4
        // Each frame: 20 000 × 2, only 2×2 of it on screen, but both rows decode in full:
        // 40 000 pixels a frame. The budget is 40 000 + 40 000: two frames fit, five do not.
        let frame = GIFBuilder.image(Self.solid(20_000, 2, 0))
        let bytes = GIFBuilder.gif(width: 2, height: 2, globalPalette: Self.palette, blocks: Array(repeating: frame, count: 5))
        #expect(throws: ImageError.self) { try Self.decode(bytes, options: options) }
        let fewer = GIFBuilder.gif(width: 2, height: 2, globalPalette: Self.palette, blocks: Array(repeating: frame, count: 2))
        #expect(try Self.decode(fewer, options: options).animation?.frames.count == 2)
    }

    // MARK: - Damage

    /// Cut anywhere: a typed error, or the complete frames before the cut (a partial first
    /// frame when the cut is inside it).
    @Test func truncatedAtEveryOffset() throws {
        let blocks = [GIFBuilder.netscape(loop: 0)] + (0..<3).map { index in
            GIFBuilder.image(Frame(width: 5, height: 4, indices: (0..<20).map { UInt8(($0 + index) % 5) }, control: (index + 1, 10, index == 1 ? 4 : nil)))
        }
        let bytes = GIFBuilder.gif(width: 5, height: 4, globalPalette: Self.palette, blocks: blocks)
        let full = Self.frames(try Self.decode(bytes))
        #expect(full.count == 3)
        var partials = 0
        for length in 0..<bytes.count {
            do {
                let frames = Self.frames(try Self.decode(Array(bytes.prefix(length))))
                #expect(frames.count <= 3)
                if frames.count > 1 { #expect(frames == Array(full.prefix(frames.count)), "\(length) bytes") }
                if frames.count == 1, frames[0] != full[0] { partials += 1 }
            } catch is ImageError {}
        }
        #expect(partials > 0, "a first frame cut short shows its first rows")
    }

    /// Damaged LZW data keeps the rows before the damage and the frames after it.
    @Test func damagedFrameData() throws {
        let first = Frame(width: 4, height: 4, indices: Array(repeating: 0, count: 16))
        var damaged = GIFBuilder.image(Frame(width: 4, height: 4, indices: Array(repeating: 1, count: 16)))
        // The image descriptor is 10 bytes, then the code size; replace the sub-blocks with one
        // of codes that are not in the table.
        damaged.replaceSubrange(11..<damaged.count, with: [5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0])
        let last = Frame(width: 4, height: 4, indices: Array(repeating: 2, count: 16))
        let frames = Self.frames(try Self.decode(GIFBuilder.gif(width: 4, height: 4, globalPalette: Self.palette,
                                                               blocks: [GIFBuilder.image(first), damaged, GIFBuilder.image(last)])))
        #expect(frames.count == 3)
        #expect(frames[2].pixel(2, 2) == [0, 0, 255, 255])
    }

    /// Random damage anywhere: no crash, only typed errors.
    @Test func flippedBytes() throws {
        let good = GIFBuilder.gif(width: 6, height: 5, globalPalette: Self.palette, blocks: [GIFBuilder.netscape(loop: 1)] + (0..<3).map { index in
            GIFBuilder.image(Frame(width: 6, height: 5, indices: (0..<30).map { UInt8(($0 * (index + 1)) % 5) }, control: (index, 3, 2)))
        })
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            var bytes = good
            for _ in 0..<2 {
                bytes[Int(generator.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            }
            do { _ = try Self.decode(bytes) } catch is ImageError {}
        }
    }
}
