import Foundation
import Testing
import WebImageCore
@testable import WebImageCodecs

/// APNG control chunks judged as browsers judge them (Chromium's PNG reader where the APNG
/// specification leaves the choice): files built chunk by chunk, with correct CRCs, whose
/// `acTL`, `fcTL` and `fdAT` chunks break one rule each. Each case states what a browser shows:
/// the animation, or the still default image (the `IDAT` image, red here).
@Suite struct APNGChunkRulesTests {
    typealias Frame = PNGBuilder.Frame

    static let red: PNGBuilder.Pixel = [255, 0, 0, 255]
    static let green: PNGBuilder.Pixel = [0, 255, 0, 255]
    static let blue: PNGBuilder.Pixel = [0, 0, 255, 255]

    // MARK: - Chunks of a 1×1 APNG

    static let ihdr = PNGBuilder.chunk("IHDR", PNGBuilder.ihdr(width: 1, height: 1, bitDepth: 8, colorType: 6, interlaced: false))
    static let iend = PNGBuilder.chunk("IEND", [])

    static func zlib(_ pixel: PNGBuilder.Pixel) -> [UInt8] {
        PNGBuilder.zlibStored(PNGBuilder.scanlines([[pixel]], bitDepth: 8, interlaced: false))
    }

    static func actl(_ frames: Int, plays: Int = 0) -> [UInt8] {
        PNGBuilder.chunk("acTL", PNGBuilder.be32(frames) + PNGBuilder.be32(plays))
    }

    static func fctl(_ sequence: Int) -> [UInt8] {
        PNGBuilder.chunk("fcTL", PNGBuilder.fctl(sequence: sequence, Frame(pixels: [[red]])))
    }

    static func fdat(_ sequence: Int, _ payload: [UInt8]) -> [UInt8] {
        PNGBuilder.chunk("fdAT", PNGBuilder.be32(sequence) + payload)
    }

    static let idat = PNGBuilder.chunk("IDAT", zlib(red))

    /// IHDR, `chunks`, IEND.
    static func file(_ chunks: [[UInt8]]) -> [UInt8] {
        PNGBuilder.raw([ihdr] + chunks + [iend])
    }

    /// The well-formed three-frame animation the cases below break: red (the default image),
    /// green, blue; sequence numbers 0 to 4.
    static let valid = file([actl(3), fctl(0), idat, fctl(1), fdat(2, zlib(green)), fctl(3), fdat(4, zlib(blue))])

    /// The colour of each frame shown (the image alone for a still).
    static func shown(_ bytes: [UInt8], options: ImageDecodingOptions = .init()) throws -> [[UInt8]] {
        let container = try PNGDecoder().decode(Data(bytes), options: options)
        return (container.animation?.frames.map(\.bitmap) ?? [container.image]).map { Array($0.pixels) }
    }

    static let stillRed: [[UInt8]] = [[255, 0, 0, 255]]

    @Test func wellFormedAnimationPlays() throws {
        #expect(try Self.shown(Self.valid) == [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]])
    }

    // MARK: - fdAT holding only its sequence number

    /// An `fdAT` of length 4 carries an empty share of the frame's data: legal, and the frame
    /// decodes from its other `fdAT` chunks, wherever the empty one falls.
    @Test func emptyFrameDataIsLegal() throws {
        let green = Self.zlib(Self.green)
        let before = Self.file([Self.actl(2), Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, []), Self.fdat(3, green)])
        let after = Self.file([Self.actl(2), Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, green), Self.fdat(3, [])])
        let between = Self.file([Self.actl(2), Self.fctl(0), Self.idat, Self.fctl(1),
                                 Self.fdat(2, Array(green.prefix(4))), Self.fdat(3, []), Self.fdat(4, Array(green.dropFirst(4)))])
        for bytes in [before, after, between] {
            #expect(try Self.shown(bytes) == [[255, 0, 0, 255], [0, 255, 0, 255]])
        }
    }

    // MARK: - Sequence numbers

    /// The sequence numbers that break the rule (0 for the first fcTL, then +1 in file order),
    /// each in a file otherwise like ``valid``.
    static let brokenSequences: [(String, [UInt8])] = {
        let green = zlib(Self.green), blue = zlib(Self.blue)
        let half = green.count / 2
        return [
            ("first fcTL numbered 1", file([actl(3), fctl(1), idat, fctl(2), fdat(3, green), fctl(4), fdat(5, blue)])),
            ("a gap", file([actl(3), fctl(0), idat, fctl(1), fdat(3, green), fctl(4), fdat(5, blue)])),
            ("a duplicated fdAT", file([actl(3), fctl(0), idat, fctl(1), fdat(2, Array(green.prefix(half))),
                                        fdat(3, Array(green.dropFirst(half))), fdat(3, Array(green.dropFirst(half))),
                                        fctl(4), fdat(5, blue)])),
            ("fdAT chunks swapped", file([actl(3), fctl(0), idat, fctl(1), fdat(3, Array(green.dropFirst(half))),
                                          fdat(2, Array(green.prefix(half))), fctl(4), fdat(5, blue)])),
            ("frames in reverse order", file([actl(3), fctl(0), idat, fctl(3), fdat(4, blue), fctl(1), fdat(2, green)])),
            ("a repeated fcTL number", file([actl(3), fctl(0), idat, fctl(1), fdat(2, green), fctl(2), fdat(3, blue)])),
        ]
    }()

    /// A gap, a duplicate or a reordering never plays: the file is the still default image.
    @Test(arguments: brokenSequences.indices)
    func brokenSequenceShowsTheDefaultImage(_ index: Int) throws {
        let (name, bytes) = Self.brokenSequences[index]
        #expect(try Self.shown(bytes) == Self.stillRed, "\(name)")
        let file = try bytes.withUnsafeBytes { try PNGFile($0) }
        #expect(file.animationIgnoredBecause?.contains("sequence number") == true, "\(name)")
    }

    // MARK: - acTL

    /// `num_frames` of 0, above 2³¹ − 1, or different from the fcTL count, and `num_plays`
    /// above 2³¹ − 1: the still default image, not the frames that happen to be there.
    @Test(arguments: [(0, 0), (0x8000_0000, 0), (0xFFFF_FFFF, 0), (2, 0), (4, 0), (0x7FFF_FFFF, 0), (3, 0x8000_0000)])
    func invalidFrameCountShowsTheDefaultImage(frames: Int, plays: Int) throws {
        let bytes = Self.file([Self.actl(frames, plays: plays), Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, Self.zlib(Self.green)),
                               Self.fctl(3), Self.fdat(4, Self.zlib(Self.blue))])
        #expect(try Self.shown(bytes) == Self.stillRed)
        #expect(try PNGDecoder().decode(Data(bytes), options: .init()).format == .png)
    }

    /// A second `acTL`, before or after the image data, turns the animation off (Chromium
    /// trusts neither copy); so does a malformed one.
    @Test func duplicateOrMalformedAnimationControl() throws {
        let rest = [Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, Self.zlib(Self.green)), Self.fctl(3), Self.fdat(4, Self.zlib(Self.blue))]
        let twiceBefore = Self.file([Self.actl(3), Self.actl(3)] + rest)
        let twiceDisagreeing = Self.file([Self.actl(3), Self.actl(2)] + rest)
        let secondAfterImage = Self.file([Self.actl(3)] + rest.prefix(2) + [Self.actl(3)] + rest.dropFirst(2))
        let short = Self.file([PNGBuilder.chunk("acTL", [0, 0, 0, 3])] + rest)
        for bytes in [twiceBefore, twiceDisagreeing, secondAfterImage, short] {
            #expect(try Self.shown(bytes) == Self.stillRed)
        }
    }

    /// An acTL after the image data in a file without one before it is no APNG at all.
    @Test func animationControlAfterTheImageIsIgnored() throws {
        let bytes = Self.file([Self.idat, Self.actl(2), Self.fctl(0), Self.fdat(1, Self.zlib(Self.green))])
        #expect(try Self.shown(bytes) == Self.stillRed)
    }

    // MARK: - fcTL before acTL

    /// An fcTL before acTL, both before IDAT, makes the default image frame 0, exactly as
    /// with the usual order.
    @Test func frameControlBeforeAnimationControl() throws {
        let bytes = Self.file([Self.fctl(0), Self.actl(3), Self.idat, Self.fctl(1), Self.fdat(2, Self.zlib(Self.green)),
                               Self.fctl(3), Self.fdat(4, Self.zlib(Self.blue))])
        #expect(try Self.shown(bytes) == Self.shown(Self.valid))
    }

    /// Faults before the image data that Chromium answers with the still image: an fcTL
    /// that does not cover the canvas, two of them, an fdAT.
    @Test func faultsBeforeTheImageShowTheDefaultImage() throws {
        var partial = Frame(pixels: [[Self.red]])
        partial.x = 1
        let outside = PNGBuilder.chunk("fcTL", PNGBuilder.fctl(sequence: 0, partial))
        let tail = [Self.idat, Self.fctl(1), Self.fdat(2, Self.zlib(Self.green))]
        let cases = [
            Self.file([Self.actl(2), outside] + tail),
            Self.file([Self.actl(2), Self.fctl(0), Self.fctl(1), Self.idat, Self.fctl(2), Self.fdat(3, Self.zlib(Self.green))]),
            Self.file([Self.actl(2), Self.fctl(0), Self.fdat(1, Self.zlib(Self.green))] + tail),
        ]
        for bytes in cases {
            #expect(try Self.shown(bytes) == Self.stillRed)
        }
    }

    // MARK: - The same answer from every path

    static let reordered = file([fctl(0), actl(2), idat, fctl(1), fdat(2, zlib(green))])

    /// Every file above, fed to the incremental decoder in 7-byte pieces with a preview
    /// asked for after each: it finishes with what the whole decode shows.
    @Test func incrementalDecoderAgrees() throws {
        let files = Self.brokenSequences.map(\.1) + [
            Self.file([Self.actl(0x8000_0000), Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, Self.zlib(Self.green))]),
            Self.file([Self.actl(2), Self.actl(2), Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, Self.zlib(Self.green))]),
            Self.file([Self.actl(4), Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, Self.zlib(Self.green))]),
            Self.reordered,
            Self.valid,
        ]
        for bytes in files {
            let whole = try PNGDecoder().decode(Data(bytes), options: .init())
            let incremental = try #require(PNGDecoder().makeIncrementalDecoder(options: .init()))
            for start in stride(from: 0, to: bytes.count, by: 7) {
                try incremental.append(Data(bytes[start..<min(start + 7, bytes.count)]))
                _ = try incremental.preview()
            }
            let finished = try incremental.finish()
            #expect(finished.image == whole.image)
            #expect(finished.animation == whole.animation)
            let plays = bytes == Self.valid || bytes == Self.reordered
            #expect((finished.animation != nil) == plays)
        }
    }

    /// ``ImageMetadata``, what `webimage info` prints, counts the frames the decoder shows for
    /// the files above: both read the control chunks through WebImageCore's `APNGChunks`
    /// (issue 26: `info` printed the `fcTL` count of animations the decoder set aside).
    @Test func metadataFrameCountIsTheDecoders() throws {
        let green = Self.zlib(Self.green), blue = Self.zlib(Self.blue)
        var partial = Frame(pixels: [[Self.red]])
        partial.x = 1
        let outside = PNGBuilder.chunk("fcTL", PNGBuilder.fctl(sequence: 0, partial))
        let rest: [[UInt8]] = [Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, green), Self.fctl(3), Self.fdat(4, blue)]
        let secondAfterImage: [[UInt8]] = [Self.actl(3)] + rest.prefix(2) + [Self.actl(3)] + rest.dropFirst(2)
        let files: [[UInt8]] = Self.brokenSequences.map(\.1) + [
            Self.valid,
            Self.reordered,
            Self.file([Self.actl(2), Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, []), Self.fdat(3, green)]),
            Self.file([Self.actl(4)] + rest),
            Self.file([Self.actl(2)] + rest),
            Self.file([Self.actl(3, plays: 0x8000_0000)] + rest),
            Self.file([Self.actl(3), Self.actl(3)] + rest),
            Self.file(secondAfterImage),
            Self.file([PNGBuilder.chunk("acTL", [0, 0, 0, 3])] + rest),
            Self.file([Self.idat, Self.actl(2), Self.fctl(0), Self.fdat(1, green)]),
            Self.file([Self.actl(2), outside, Self.idat, Self.fctl(1), Self.fdat(2, green)]),
            Self.file([Self.actl(2), Self.fctl(0), Self.fctl(1), Self.idat, Self.fctl(2), Self.fdat(3, green)]),
            Self.file([Self.actl(2), Self.fctl(0), Self.fdat(1, green), Self.idat, Self.fctl(2), Self.fdat(3, green)]),
        ]
        for (index, bytes) in files.enumerated() {
            let decoded = try PNGDecoder().decode(Data(bytes), options: .init())
            let metadata = try ImageMetadata(reading: Data(bytes))
            #expect(metadata.frameCount == max(decoded.animation?.frames.count ?? 0, 1), "file \(index)")
            #expect(metadata.isAnimated == decoded.isAnimated, "file \(index)")
            #expect(metadata.frameDurations == (decoded.animation?.frames.map(\.duration) ?? []), "file \(index)")
        }
    }

    /// A thumbnail of an APNG whose animation is set aside is the default image's, whichever
    /// path (the reducing one, for a still PNG) makes it.
    @Test func thumbnailShowsTheDefaultImage() throws {
        let size = 12
        func zlib(_ pixel: PNGBuilder.Pixel) -> [UInt8] {
            PNGBuilder.zlibStored(PNGBuilder.scanlines(PNGBuilder.solid(size, size, pixel), bitDepth: 8, interlaced: false))
        }
        let header = PNGBuilder.chunk("IHDR", PNGBuilder.ihdr(width: size, height: size, bitDepth: 8, colorType: 6, interlaced: false))
        let frame = PNGBuilder.chunk("fcTL", PNGBuilder.fctl(sequence: 0, Frame(pixels: PNGBuilder.solid(size, size, Self.red))))
        // An fdAT before the image data: Chromium, and this decoder, show the still image.
        let bytes = PNGBuilder.raw([header, Self.actl(2), frame, Self.fdat(1, zlib(Self.green)),
                                    PNGBuilder.chunk("IDAT", zlib(Self.red)), Self.iend])
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(2)
        let thumbnail = try CoderRegistry(decoders: [PNGDecoder()]).decode(Data(bytes), options: options)
        #expect(thumbnail.animation == nil)
        #expect(thumbnail.image.width == 2 && thumbnail.image.height == 2)
        #expect(Array(thumbnail.image.pixels) == Array([[UInt8]](repeating: [255, 0, 0, 255], count: 4).joined()))
    }

    /// The header sniff does not promise an animation for the acTL faults it can see (all
    /// before IDAT), and does for the animations that play.
    @Test func headerDoesNotPromiseAnimation() throws {
        let tail = [Self.fctl(0), Self.idat, Self.fctl(1), Self.fdat(2, Self.zlib(Self.green))]
        let still = [
            Self.file([Self.actl(0x8000_0000)] + tail),
            Self.file([Self.actl(2), Self.actl(2)] + tail),
            Self.file([Self.actl(2, plays: 0x8000_0000)] + tail),
            Self.file([PNGBuilder.chunk("acTL", [0, 0, 0, 2])] + tail),
        ]
        for bytes in still {
            #expect(ImageHeader(sniffing: Data(bytes))?.isAnimated == false)
            #expect(try PNGDecoder().decode(Data(bytes), options: .init()).isAnimated == false)
        }
        for bytes in [Self.valid, Self.reordered] {
            #expect(ImageHeader(sniffing: Data(bytes))?.isAnimated == true)
            #expect(try PNGDecoder().decode(Data(bytes), options: .init()).isAnimated == true)
        }
    }
}
