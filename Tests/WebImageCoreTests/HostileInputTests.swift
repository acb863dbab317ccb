import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCore

/// Sniffing runs on bytes from anywhere. These inputs must never crash, read out of bounds or
/// hang; where a result is defined, it is checked too. (Run under the address sanitizer with
/// `swift test --sanitize=address` to catch a stray read that happens not to crash.)
@Suite(.timeLimit(.minutes(10 * Deadlines.stretch))) struct HostileInputTests {
    /// `partial` is what sniffing said about a prefix of a file whose full header is `full`.
    /// A prefix may know less, never something else: the same format (or, for APNG and
    /// AVIF/HEIC, the family it was still indistinguishable from), and every fact it does
    /// state equal to the full file's.
    static func isConsistent(_ partial: ImageHeader, with full: ImageHeader) -> Bool {
        let family: [ImageFormat: ImageFormat] = [.apng: .png, .avif: .heif, .heic: .heif]
        guard partial.format == full.format || partial.format == family[full.format] else { return false }
        func agrees<T: Equatable>(_ part: T?, _ whole: T?) -> Bool { part == nil || part == whole }
        // Facts under a family answer come from another reading of the bytes; compare only
        // those of the same format.
        guard partial.format == full.format else { return true }
        return agrees(partial.webPEncoding, full.webPEncoding) && agrees(partial.isAnimated, full.isAnimated)
            && agrees(partial.hasAlpha, full.hasAlpha) && agrees(partial.pixelWidth, full.pixelWidth)
            && agrees(partial.pixelHeight, full.pixelHeight)
    }

    static func checkPrefixes(of data: Data, name: String, lengths: some Sequence<Int>) {
        let full = ImageHeader(sniffing: data)
        for length in lengths where length <= data.count {
            let prefix = data.prefix(length)
            let partial = ImageHeader(sniffing: prefix)
            #expect(ImageFormat(sniffing: prefix) == partial?.format, "\(name), \(length) bytes: both entry points agree")
            guard let partial else { continue }
            guard let full else {
                Issue.record("\(name): a \(length)-byte prefix sniffs as \(partial.format), the whole file as nothing")
                continue
            }
            #expect(Self.isConsistent(partial, with: full), "\(name), \(length) bytes: \(partial) vs \(full)")
        }
    }

    @Test func emptyInput() {
        #expect(ImageFormat(sniffing: Data()) == nil)
        #expect(ImageHeader(sniffing: Data()) == nil)
        #expect(ImageHeader(sniffing: UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
    }

    @Test(arguments: try TestFiles.fixtureImageNames())
    func everyPrefixOfAFixture(name: String) throws {
        let data = try TestFiles.fixture(name)
        // Every length up to 16 bytes (the brief's minimum), then every length up to 512, then
        // a spread to the end: the walks stop at every possible point in their first steps.
        Self.checkPrefixes(of: data, name: name, lengths: Array(0...512) + Array(stride(from: 513, to: data.count, by: 97)))
    }

    @Test func randomBytes() {
        var generator = SeededGenerator(seed: 0x5EED_0001)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...256, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let header = ImageHeader(sniffing: bytes)
            #expect(ImageFormat(sniffing: bytes) == header?.format)
        }
    }

    @Test(arguments: try TestFiles.fixtureImageNames())
    func realSignatureThenRandomBytes(name: String) throws {
        // A valid opening sends sniffing into each format's walk, which then meets garbage.
        let data = try TestFiles.fixture(name)
        var generator = SeededGenerator(seed: 0x5EED_0002 &+ UInt64(data.count))
        for _ in 0..<300 {
            let keep = Int.random(in: 1...min(data.count, 48), using: &generator)
            var bytes = [UInt8](data.prefix(keep))
            bytes += (0..<Int.random(in: 0...600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(ImageFormat(sniffing: bytes) == ImageHeader(sniffing: bytes)?.format)
        }
    }

    @Test(arguments: try TestFiles.fixtureImageNames())
    func mutatedFixtures(name: String) throws {
        // Flipped bytes in the headers: lengths that lie, offsets that point anywhere.
        let data = [UInt8](try TestFiles.fixture(name))
        var generator = SeededGenerator(seed: 0x5EED_0003 &+ UInt64(data.count))
        for _ in 0..<300 {
            var bytes = data
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let index = Int.random(in: 0..<min(bytes.count, 256), using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            #expect(ImageFormat(sniffing: bytes) == ImageHeader(sniffing: bytes)?.format)
        }
    }

    // MARK: PNG

    @Test func pngChunkLengthsThatLie() {
        // A chunk claiming 2 GB, in a file of 60 bytes.
        let huge = Bytes.png(chunks: [("tEXt", [0, 0]), ("acTL", Bytes.be32(2) + Bytes.be32(0)), ("IDAT", [0])])
        var lying = huge
        lying.replaceSubrange(33..<37, with: Bytes.be32(0x7FFF_FFF0))
        #expect(ImageHeader(sniffing: lying) == .init(format: .png, pixelWidth: 4, pixelHeight: 3))
        // Over the spec's 2^31 - 1 limit: corrupt, the walk stops.
        lying.replaceSubrange(33..<37, with: Bytes.be32(0xFFFF_FFFF))
        #expect(ImageHeader(sniffing: lying) == .init(format: .png, pixelWidth: 4, pixelHeight: 3))
        // A length that lands in the middle of the next chunk reads garbage as a chunk and
        // stops there without crashing.
        lying.replaceSubrange(33..<37, with: Bytes.be32(5))
        #expect(ImageFormat(sniffing: lying) == .png)
        // Unchanged, the same file is an animation.
        #expect(ImageHeader(sniffing: huge)?.format == .apng)
    }

    @Test func pngChunkWalkIsCapped() {
        // 2 000 empty chunks before acTL: past the cap, so the answer is PNG with animation
        // unknown, found in bounded time.
        let chunks = Array(repeating: ("tEXt", [UInt8]()), count: 2_000) + [("acTL", Bytes.be32(2) + Bytes.be32(0)), ("IDAT", [0])]
        let header = ImageHeader(sniffing: Bytes.png(chunks: chunks))
        #expect(header?.format == .png)
        #expect(header?.isAnimated == nil)
    }

    @Test func pngWithHugeOrZeroDimensionsIsReportedAsStored() {
        let huge = Bytes.png(width: 0xFFFF_FFFF, height: 0x7FFF_FFFF, chunks: [("IDAT", [0])])
        #expect(ImageHeader(sniffing: huge)?.pixelWidth == 0xFFFF_FFFF)
        #expect(ImageHeader(sniffing: huge)?.pixelCount == 0xFFFF_FFFF * 0x7FFF_FFFF)
        let zero = Bytes.png(width: 0, height: 0, chunks: [("IDAT", [0])])
        #expect(ImageHeader(sniffing: zero)?.pixelCount == 0)
    }

    // MARK: JPEG

    @Test func jpegSegmentsThatRunPastTheEnd() {
        let soi: [UInt8] = [0xFF, 0xD8]
        let expected = ImageHeader(format: .jpeg, isAnimated: false, hasAlpha: false)
        // APP0 claiming 65 535 bytes with 10 present.
        #expect(ImageHeader(sniffing: soi + [0xFF, 0xE0, 0xFF, 0xFF] + Array(repeating: 0, count: 10)) == expected)
        // A frame header cut after its length.
        #expect(ImageHeader(sniffing: soi + [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01]) == expected)
        // A frame header whose length is too short to hold the dimensions.
        #expect(ImageHeader(sniffing: soi + [0xFF, 0xC0, 0x00, 0x05, 0x08, 0x01, 0x00, 0x01, 0x00]) == expected)
        // Lengths 0 and 1 are impossible (the length counts itself).
        #expect(ImageHeader(sniffing: soi + [0xFF, 0xE1, 0x00, 0x00] + Bytes.jpegSOF(width: 9, height: 9)) == expected)
        #expect(ImageHeader(sniffing: soi + [0xFF, 0xE1, 0x00, 0x01] + Bytes.jpegSOF(width: 9, height: 9)) == expected)
        // Scan data before any frame header.
        #expect(ImageHeader(sniffing: soi + [0xFF, 0xDA, 0x00, 0x02] + Bytes.jpegSOF(width: 9, height: 9)) == expected)
        // A marker prefix at the very end.
        #expect(ImageHeader(sniffing: soi + [0xFF, 0xFF, 0xFF]) == expected)
    }

    @Test func jpegWalksAreCapped() {
        let soi: [UInt8] = [0xFF, 0xD8, 0xFF]
        // A megabyte of fill bytes, then a frame header: beyond the stray-byte budget.
        let fill = soi + [UInt8](repeating: 0xFF, count: 1 << 20) + [0xC0] + Bytes.jpegSOF(width: 9, height: 9).dropFirst(2)
        #expect(ImageHeader(sniffing: fill) == .init(format: .jpeg, isAnimated: false, hasAlpha: false))
        // 2 000 empty APP segments, then a frame header: beyond the segment cap.
        let empty = [0xFF, 0xD8] + Array(repeating: [0xFF, 0xE5, 0x00, 0x02], count: 2_000).flatMap { $0 } + Bytes.jpegSOF(width: 9, height: 9)
        #expect(ImageHeader(sniffing: empty) == .init(format: .jpeg, isAnimated: false, hasAlpha: false))
        // 100 of them are fine.
        let some = [0xFF, 0xD8] + Array(repeating: [0xFF, 0xE5, 0x00, 0x02], count: 100).flatMap { $0 } + Bytes.jpegSOF(width: 9, height: 9)
        #expect(ImageHeader(sniffing: some)?.pixelWidth == 9)
        // 10 KB of stray bytes after a segment are skipped, like libjpeg does; 200 KB are
        // beyond the budget, and so are 100 000 stuffed FF 00 pairs.
        let app0: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00]
        let someStray = app0 + [UInt8](repeating: 0x41, count: 10_000) + Bytes.jpegSOF(width: 9, height: 9)
        #expect(ImageHeader(sniffing: someStray)?.pixelWidth == 9)
        let stray = app0 + [UInt8](repeating: 0x41, count: 200_000) + Bytes.jpegSOF(width: 9, height: 9)
        #expect(ImageHeader(sniffing: stray) == .init(format: .jpeg, isAnimated: false, hasAlpha: false))
        let stuffed = app0 + Array(repeating: [0xFF, 0x00], count: 100_000).flatMap { $0 } + Bytes.jpegSOF(width: 9, height: 9)
        #expect(ImageHeader(sniffing: stuffed) == .init(format: .jpeg, isAnimated: false, hasAlpha: false))
    }

    // MARK: GIF

    @Test func gifBlocksThatRunPastTheEnd() {
        let screen = Bytes.ascii("GIF89a") + Bytes.le16(5) + Bytes.le16(6) + [0x00, 0, 0]
        let expected = ImageHeader(format: .gif, pixelWidth: 5, pixelHeight: 6)
        // A sub-block claiming 255 bytes, with 3 present.
        #expect(ImageHeader(sniffing: screen + [0x21, 0xFE, 0xFF, 1, 2, 3]) == expected)
        // A colour table flag for 768 bytes that are not there.
        #expect(ImageHeader(sniffing: Bytes.ascii("GIF89a") + Bytes.le16(5) + Bytes.le16(6) + [0x87, 0, 0, 1, 2]) == expected)
        // An image descriptor cut in half.
        #expect(ImageHeader(sniffing: screen + [0x2C, 0, 0, 0]) == expected)
        // An unknown block type.
        #expect(ImageHeader(sniffing: screen + [0x99, 0x3B]) == expected)
    }

    @Test func gifWalkIsCapped() {
        // 70 000 one-byte sub-blocks: past the block budget, so animation stays unknown.
        var bytes = Bytes.gif(images: 0, trailer: false)
        bytes += [0x21, 0xFE] + Array(repeating: [1, 0x41], count: 70_000).flatMap { $0 } + [0]
        bytes += Bytes.gif(images: 2).dropFirst(19)
        #expect(ImageHeader(sniffing: bytes) == .init(format: .gif, pixelWidth: 8, pixelHeight: 8))
    }

    // MARK: Other formats

    @Test func webPChunksCutShort() {
        #expect(ImageHeader(sniffing: Bytes.riff("VP8X", payload: [0x12])) ==
            .init(format: .webp, webPEncoding: .extended, isAnimated: true, hasAlpha: true))
        #expect(ImageHeader(sniffing: Bytes.riff("VP8 ", payload: [0, 0, 0, 0x9D])) ==
            .init(format: .webp, webPEncoding: .lossy, isAnimated: false, hasAlpha: false))
        // A lossless chunk without its signature byte gives no size.
        #expect(ImageHeader(sniffing: Bytes.riff("VP8L", payload: [0x00, 1, 2, 3, 4])) ==
            .init(format: .webp, webPEncoding: .lossless, isAnimated: false))
        #expect(ImageHeader(sniffing: Bytes.riff("ALPH", payload: [1, 2, 3])) == .init(format: .webp))
    }

    @Test func tiffDirectoriesThatPointAnywhere() {
        let expected = ImageHeader(format: .tiff)
        // The first directory past the end, at the largest offset, and at a negative one
        // if read as signed.
        #expect(ImageHeader(sniffing: Bytes.ascii("II*\u{0}") + Bytes.le32(4096)) == expected)
        #expect(ImageHeader(sniffing: Bytes.ascii("II*\u{0}") + Bytes.le32(0xFFFF_FFFF)) == expected)
        #expect(ImageHeader(sniffing: Bytes.ascii("MM\u{0}*") + Bytes.be32(0x8000_0000)) == expected)
        // 65 535 entries announced, one present.
        let entry = Bytes.le16(256) + Bytes.le16(3) + Bytes.le32(1) + Bytes.le16(77) + [0, 0]
        #expect(ImageHeader(sniffing: Bytes.ascii("II*\u{0}") + Bytes.le32(8) + Bytes.le16(0xFFFF) + entry) == expected)
        // ExtraSamples whose values sit at an offset past the end: alpha unknown, not "none".
        let extra = Bytes.le16(338) + Bytes.le16(3) + Bytes.le32(4) + Bytes.le32(9999)
        #expect(ImageHeader(sniffing: Bytes.ascii("II*\u{0}") + Bytes.le32(8) + Bytes.le16(1) + extra) == expected)
    }

    @Test func isoBMFFBoxesThatLie() {
        // A box claiming 16 MB: the brands present are read, the rest is not there.
        var bytes = Bytes.ftyp("mif1", ["avif"])
        bytes.replaceSubrange(0..<4, with: Bytes.be32(0x00FF_FFFF))
        #expect(ImageFormat(sniffing: bytes.prefix(24)) == .avif)
        #expect(ImageFormat(sniffing: bytes.prefix(18)) == .heif)
        // A size smaller than the box's own header and brand.
        bytes.replaceSubrange(0..<4, with: Bytes.be32(9))
        #expect(ImageFormat(sniffing: bytes) == nil)
        // A 64-bit size near 2^64.
        let large = Bytes.be32(1) + Bytes.ascii("ftyp") + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0] + Bytes.ascii("mif1")
        #expect(ImageFormat(sniffing: large) == nil)
        // 10 000 compatible brands, the decisive one last: past the cap, so the family.
        let many = Bytes.ftyp("mif1", Array(repeating: "miaf", count: 10_000) + ["avif"])
        #expect(ImageFormat(sniffing: many) == .heif)
    }

    @Test func svgScanIsBoundedByTheSearchLimit() {
        // A megabyte of white space, and one of an unterminated comment: both nil, quickly.
        #expect(ImageFormat(sniffing: Data((String(repeating: " ", count: 1 << 20) + "<svg/>").utf8)) == nil)
        #expect(ImageFormat(sniffing: Data(("<!--" + String(repeating: "-", count: 1 << 20)).utf8)) == nil)
        #expect(ImageFormat(sniffing: Data(("<!DOCTYPE svg [" + String(repeating: ">", count: 1 << 20)).utf8)) == nil)
    }
}
