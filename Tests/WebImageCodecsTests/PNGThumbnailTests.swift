import Foundation
import Testing
import WebImageTestSupport
import WebImageCore
@testable import WebImageCodecs

/// The PNG thumbnail path (`wi_png_decode_reduced`: libdeflate, row unfiltering and block
/// averaging while the rows go by) against the full libpng decode: the decoder's reduced
/// bitmap must equal an exact block average of the full decode, and the finished thumbnail
/// must match the full decode resized. Files it does not take (16-bit, interlaced, damaged)
/// must come out as the full path makes them.
@Suite struct PNGThumbnailTests {
    typealias Pixel = PNGBuilder.Pixel

    /// Scanlines filtered with None, Sub, Up, Average and Paeth, with runs of one to four Paeth
    /// rows (the builder writes only None), split over several IDAT chunks.
    static func filteredPNG(_ pixels: [[Pixel]], bitDepth: Int, colorType: UInt8, before: [(String, [UInt8])] = [],
                            idatParts: Int = 3, extraData: [UInt8] = []) -> [UInt8] {
        let width = pixels[0].count, height = pixels.count
        let channels = PNGBuilder.channels(colorType: colorType)
        let bpp = max(1, channels * bitDepth / 8)
        let rows = pixels.map { PNGBuilder.pack($0, bitDepth: bitDepth) }
        var data: [UInt8] = []
        for y in 0..<height {
            // Runs of Paeth rows of every parity (the C unfilters Paeth pairs together).
            let filter = [4, 4, 4, 0, 1, 4, 2, 3, 4, 4][y % 10]
            let row = rows[y]
            let prior = y > 0 ? rows[y - 1] : [UInt8](repeating: 0, count: row.count)
            data.append(UInt8(filter))
            for i in row.indices {
                let a = i >= bpp ? Int(row[i - bpp]) : 0, b = Int(prior[i]), c = i >= bpp ? Int(prior[i - bpp]) : 0
                let predictor: Int
                switch filter {
                case 1: predictor = a
                case 2: predictor = b
                case 3: predictor = (a + b) / 2
                case 4:
                    // The specification's wording, not the C code's rearrangement.
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
                default: predictor = 0
                }
                data.append(UInt8(truncatingIfNeeded: Int(row[i]) - predictor))
            }
        }
        let stream = PNGBuilder.zlibStored(data + extraData)
        var out = PNGBuilder.signature
            + PNGBuilder.chunk("IHDR", PNGBuilder.ihdr(width: width, height: height, bitDepth: bitDepth, colorType: colorType, interlaced: false))
        for (type, bytes) in before { out += PNGBuilder.chunk(type, bytes) }
        let part = (stream.count + idatParts - 1) / idatParts
        for start in stride(from: 0, to: stream.count, by: part) {
            out += PNGBuilder.chunk("IDAT", Array(stream[start..<min(stream.count, start + part)]))
        }
        return out + PNGBuilder.chunk("IEND", [])
    }

    /// A pattern that is not smooth (so every filter changes the bytes) at `bitDepth`.
    static func noise(width: Int, height: Int, channels: Int, bitDepth: Int) -> [[Pixel]] {
        let maximum = (1 << bitDepth) - 1
        var state: UInt32 = 12345
        return (0..<height).map { y in
            (0..<width).map { x in
                (0..<channels).map { c in
                    state = state &* 1_103_515_245 &+ 12345
                    // Smooth enough to look like an image, noisy enough to exercise the filters.
                    let base = (x * 5 + y * 3 + c * 40) % (maximum + 1)
                    return UInt16((base + Int(state >> 16) % max(1, maximum / 4 + 1)) % (maximum + 1))
                }
            }
        }
    }

    /// The block average `wi_png_decode_reduced` promises, computed from the full decode: colours
    /// weighted by alpha, rounded half up, a transparent block transparent black.
    static func boxAverage(_ full: Bitmap, _ rx: Int, _ ry: Int) throws -> Bitmap {
        let width = (full.width + rx - 1) / rx, height = (full.height + ry - 1) / ry
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for by in 0..<height {
            for bx in 0..<width {
                var sums = [0, 0, 0, 0], count = 0
                for y in (by * ry)..<min(full.height, (by + 1) * ry) {
                    for x in (bx * rx)..<min(full.width, (bx + 1) * rx) {
                        let p = full.pixel(x, y)
                        let alpha = Int(p[3])
                        for c in 0..<3 { sums[c] += Int(p[c]) * alpha }
                        sums[3] += alpha
                        count += 1
                    }
                }
                let o = (by * width + bx) * 4
                if sums[3] > 0 {
                    for c in 0..<3 { out[o + c] = UInt8((sums[c] + sums[3] / 2) / sums[3]) }
                    out[o + 3] = UInt8((sums[3] + count / 2) / count)
                }
            }
        }
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8, pixels: out)
    }

    /// Mean and largest absolute difference per channel of two same-sized RGBA bitmaps, colour
    /// counted only where both are not transparent (a transparent pixel's colour is invisible).
    static func difference(_ a: Bitmap, _ b: Bitmap) -> (mean: Double, max: Int) {
        precondition(a.width == b.width && a.height == b.height)
        var total = 0, count = 0, largest = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let p = a.pixel(x, y), q = b.pixel(x, y)
                let channels = p[3] == 0 && q[3] == 0 ? 3...3 : 0...3
                for c in channels {
                    let d = abs(Int(p[c]) - Int(q[c]))
                    total += d
                    count += 1
                    largest = max(largest, d)
                }
            }
        }
        return (Double(total) / Double(max(1, count)), largest)
    }

    static func thumbnailOptions(_ side: Int) -> ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(side)
        return options
    }

    struct Case: CustomTestStringConvertible {
        var colorType: UInt8
        var bitDepth: Int
        var transparency: Bool
        var testDescription: String { "colour type \(colorType), \(bitDepth)-bit\(transparency ? ", tRNS" : "")" }
    }

    static let cases: [Case] = [(0, [1, 2, 4, 8, 16]), (2, [8, 16]), (3, [1, 2, 4, 8]), (4, [8, 16]), (6, [8, 16])]
        .flatMap { type, depths in
            depths.flatMap { depth in (type == 4 || type == 6 ? [false] : [false, true]).map { Case(colorType: type, bitDepth: depth, transparency: $0) } }
        }

    /// Every colour type and bit depth, with and without tRNS, every filter type, the data over
    /// several IDAT chunks: at 8 bits or less the decoder returns the exact block average of
    /// the full decode (61×47 by 2×2 blocks, so the last column and row of blocks are partial);
    /// 16-bit files take the full path. Either way the finished thumbnail is within 1 unit of
    /// the full decode resized (mean below 0.25: the block averages are rounded to 8 bits).
    @Test(arguments: cases)
    func everyColourTypeAndBitDepth(_ test: Case) throws {
        let width = 61, height = 47
        let channels = PNGBuilder.channels(colorType: test.colorType)
        let pixels = Self.noise(width: width, height: height, channels: channels, bitDepth: test.bitDepth)
        var before: [(String, [UInt8])] = []
        switch test.colorType {
        case 3:
            let entries = 1 << test.bitDepth
            // Fewer palette entries than indices at 8 bits: the rest decode as opaque black.
            let palette: [UInt8] = (0..<min(entries, 200)).flatMap { (index: Int) -> [UInt8] in
                let red = UInt8(index * 255 / max(1, entries - 1))
                return [red, UInt8((index * 91) % 256), UInt8(255 - index % 256)]
            }
            before.append(("PLTE", palette))
            if test.transparency { before.append(("tRNS", (0..<min(entries, 5)).map { UInt8($0 * 60) })) }
        case 0 where test.transparency:
            before.append(("tRNS", PNGBuilder.be16(Int(pixels[5][7][0]))))
        case 2 where test.transparency:
            before.append(("tRNS", pixels[5][7].flatMap { PNGBuilder.be16(Int($0)) }))
        default:
            break
        }
        let bytes = Data(Self.filteredPNG(pixels, bitDepth: test.bitDepth, colorType: test.colorType, before: before))
        let options = Self.thumbnailOptions(8)
        let full = try PNGDecoder().decode(bytes, options: .init()).image
        let decoded = try PNGDecoder().decode(bytes, options: options).image
        if test.bitDepth <= 8 {
            let file = try bytes.withUnsafeBytes { try PNGFile($0) }
            #expect(PNGDecoder.libdeflateReduction(file, orientation: .up, options: options)! == (2, 2))
            // The full decode took libdeflate's path too: it writes what libpng writes.
            #expect(PNGDecoder.libdeflateReduction(file, orientation: .up, options: .init())! == (1, 1))
            #expect(full == (try Self.viaLibPNG(bytes, full)))
            #expect(decoded == (try Self.boxAverage(full, 2, 2)))
        } else {
            #expect(decoded == full, "16-bit files take the full path")
        }
        let thumbnail = try CoderRegistry(decoders: [PNGDecoder()]).decode(bytes, options: options).image
        let reference = try full.resized(width: 8, height: 6)
        #expect(thumbnail.width == 8 && thumbnail.height == 6)
        let difference = Self.difference(thumbnail, reference)
        #expect(difference.max <= 1 && difference.mean < 0.25, "\(difference)")
    }

    /// The repository's PNG fixtures and every PNG of the shared corpus: the thumbnail through
    /// the reducing path against the full decode resized, mean absolute difference ≤ 0.15 and no
    /// channel more than 1 apart (measured: mean ≤ 0.10, max 1, on the six corpus photos at 16
    /// and 256 px), and the reducing path is really taken where it applies.
    @Test func fixturesAndCorpus() throws {
        var files: [(String, Data)] = try ["hopper.png", "hopper-rgba-32.png"].map { ($0, try PNGGIFReference.fixture($0)) }
        // A large PNG the repository keeps (the demo's), so that a clone without the corpus
        // still takes the reducing path on more than one file.
        let demo = PNGGIFReference.fixtures.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Demo/images/Spring.png")
        files.append(("Demo/images/Spring.png", try Data(contentsOf: demo)))
        if let corpus = Reference.corpus {
            for image in Reference.images where image.format == "PNG" && image.decodable && (image.frames ?? 1) == 1 {
                files.append((image.file, try Data(contentsOf: corpus.appendingPathComponent(image.file))))
            }
        }
        var reduced = 0
        for (name, bytes) in files {
            for side in [16, 256] {
                let options = Self.thumbnailOptions(side)
                let registry = CoderRegistry(decoders: [PNGDecoder()])
                guard let file = try? bytes.withUnsafeBytes({ try PNGFile($0) }),
                      let full = try? registry.decode(bytes) else { continue }
                let thumbnail = try registry.decode(bytes, options: options).image
                let reference = try full.image.resized(width: thumbnail.width, height: thumbnail.height)
                let difference = Self.difference(thumbnail, reference)
                #expect(difference.mean <= 0.15 && difference.max <= 1, "\(name) at \(side) px: \(difference)")
                let raw = try PNGDecoder().decode(bytes, options: options).image
                if side == 16, PNGDecoder.libdeflateReduction(file, orientation: .up, options: .init()) != nil {
                    #expect(full.image == (try Self.viaLibPNG(bytes, full.image)), "\(name): libdeflate's full decode is libpng's")
                }
                if let reduction = PNGDecoder.libdeflateReduction(file, orientation: .up, options: options), reduction != (1, 1), file.exif == nil {
                    #expect(raw.width < file.header.width || raw.height < file.header.height, "\(name): the reducing path was taken")
                    reduced += 1
                }
            }
        }
        #expect(reduced >= 2)
    }

    /// `bytes` decoded by libpng (`LibPNG.decode`), as large as `like`.
    static func viaLibPNG(_ bytes: Data, _ like: Bitmap) throws -> Bitmap {
        try Bitmap(width: like.width, height: like.height, pixelFormat: .rgba8) { pixels in
            try bytes.withUnsafeBytes { try LibPNG.decode($0, width: like.width, height: like.height, into: pixels, stride: like.width * 4) }
        }
    }

    /// Interlaced files take libpng's path: the decoder returns the full image.
    @Test func interlacedFallsBack() throws {
        let pixels = Self.noise(width: 40, height: 30, channels: 4, bitDepth: 8)
        let bytes = Data(PNGBuilder.png(pixels, interlaced: true))
        let options = Self.thumbnailOptions(4)
        let full = try PNGDecoder().decode(bytes, options: .init()).image
        #expect(try PNGDecoder().decode(bytes, options: options).image == full)
        let thumbnail = try CoderRegistry(decoders: [PNGDecoder()]).decode(bytes, options: options).image
        #expect(thumbnail == (try full.resized(width: 4, height: 3)))
    }

    /// An eXIf orientation that swaps the axes: the blocks are chosen on the stored axes, and
    /// the registry's upright thumbnail matches the full decode turned and resized.
    @Test func orientationSwapsTheAxes() throws {
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
        let pixels = Self.noise(width: 180, height: 60, channels: 3, bitDepth: 8)
        let bytes = Data(Self.filteredPNG(pixels, bitDepth: 8, colorType: 2, before: [("eXIf", tiff)]))
        var options = ImageDecodingOptions()
        // Upright the image is 60×180, stretched to 10×60; stored, that is 60×10 from 180×60:
        // blocks of 1×2. Without the swap they would be 6×1.
        options.thumbnail = .size(width: 10, height: 60, contentMode: .stretch)
        let file = try bytes.withUnsafeBytes { try PNGFile($0) }
        #expect(PNGDecoder.libdeflateReduction(file, orientation: .right, options: options)! == (1, 2))
        let registry = CoderRegistry(decoders: [PNGDecoder()])
        let thumbnail = try registry.decode(bytes, options: options).image
        let upright = try registry.decode(bytes).image
        #expect(thumbnail.width == 10 && thumbnail.height == 60)
        let difference = Self.difference(thumbnail, try upright.resized(width: 10, height: 60))
        #expect(difference.max <= 1, "\(difference)")
    }

    /// Damage on the reducing path: every prefix of a filtered multi-IDAT file decodes only when
    /// the image data is whole (and then as the whole file does) and otherwise throws an
    /// ``ImageError``; a bad filter type, a bad IDAT CRC and a zlib stream that is not one are
    /// errors; extra data after the scanlines is left to libpng, which shows the image.
    @Test func damagedFiles() throws {
        let pixels = Self.noise(width: 24, height: 18, channels: 4, bitDepth: 8)
        let good = Self.filteredPNG(pixels, bitDepth: 8, colorType: 6)
        let options = Self.thumbnailOptions(4)
        let decoder = PNGDecoder()
        let whole = try decoder.decode(Data(good), options: options).image
        #expect(whole.width == 12 && whole.height == 9)
        let iend = PNGBuilder.chunk("IEND", []).count
        for length in 0..<good.count {
            do {
                let partial = try decoder.decode(Data(good.prefix(length)), options: options)
                #expect(length >= good.count - iend, "\(length) bytes decoded")
                #expect(partial.image == whole)
            } catch is ImageError {
                #expect(length < good.count - iend, "\(length) bytes failed although the image data is whole")
            }
        }

        // Filter type 5 on the first row (the byte after the zlib header and the stored block's
        // 5-byte header in the first IDAT).
        var badFilter = good
        let firstIDATData = 33 + 8
        badFilter[firstIDATData + 2 + 5] = 5
        let crcRange = (firstIDATData - 4)..<(firstIDATData + Int(UInt32(badFilter[33]) << 24 | UInt32(badFilter[34]) << 16 | UInt32(badFilter[35]) << 8 | UInt32(badFilter[36])))
        badFilter.replaceSubrange(crcRange.upperBound..<(crcRange.upperBound + 4), with: PNGBuilder.be32(Int(PNGBuilder.crc32(Array(badFilter[crcRange])))))
        #expect(throws: ImageError.self) { try decoder.decode(Data(badFilter), options: options) }

        var badCRC = good
        badCRC[firstIDATData + 20] ^= 0x40
        #expect(throws: ImageError.self) { try decoder.decode(Data(badCRC), options: options) }

        let notZlib = PNGBuilder.signature
            + PNGBuilder.chunk("IHDR", PNGBuilder.ihdr(width: 24, height: 18, bitDepth: 8, colorType: 6, interlaced: false))
            + PNGBuilder.chunk("IDAT", [UInt8](repeating: 0xAB, count: 3000)) + PNGBuilder.chunk("IEND", [])
        #expect(throws: ImageError.self) { try decoder.decode(Data(notZlib), options: options) }

        // Empty IDAT chunks on an image small enough to pass the header's data-size check.
        let empty = PNGBuilder.signature
            + PNGBuilder.chunk("IHDR", PNGBuilder.ihdr(width: 12, height: 12, bitDepth: 8, colorType: 6, interlaced: false))
            + PNGBuilder.chunk("IDAT", []) + PNGBuilder.chunk("IDAT", []) + PNGBuilder.chunk("IEND", [])
        #expect(throws: ImageError.self) { try decoder.decode(Data(empty), options: Self.thumbnailOptions(2)) }

        let extra = Self.filteredPNG(pixels, bitDepth: 8, colorType: 6, extraData: [UInt8](repeating: 0, count: 97))
        let shown = try decoder.decode(Data(extra), options: options).image
        #expect(shown == (try decoder.decode(Data(extra), options: .init()).image), "libpng's full decode, not the reduced one")
    }

    /// The pixel limit applies before the reducing path allocates anything.
    @Test func pixelLimit() throws {
        let bytes = Data(Self.filteredPNG(Self.noise(width: 30, height: 30, channels: 4, bitDepth: 8), bitDepth: 8, colorType: 6))
        var options = Self.thumbnailOptions(4)
        options.maximumPixelCount = 899
        #expect(throws: ImageError.tooLarge("PNG: 30×30 is more than the 899-pixel limit")) { try PNGDecoder().decode(bytes, options: options) }
    }
}
