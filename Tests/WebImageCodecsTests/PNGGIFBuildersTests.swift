import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// PNG, APNG and GIF files written byte by byte from the specifications, for the cases no
/// corpus file shows: every colour type and bit depth, interlacing, crafted animations and
/// hostile variants. The writers are deliberately independent of the libraries under test:
/// their own CRC-32, Adler-32, zlib "stored" blocks (no compression needed to be valid) and a
/// plain LZW encoder (`GIFBuilder`, in Tests/Support: `webimage convert`'s tests write GIFs too).
enum PNGBuilder {
    /// One pixel's samples at the file's bit depth: 1 (grey, palette index), 2 (grey, alpha),
    /// 3 (RGB) or 4 (RGBA) of them.
    typealias Pixel = [UInt16]

    private static let crcTable: [UInt32] = (0..<256).map { (n: Int) -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        crcTable.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return ~crc
    }

    static func be32(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
    static func be16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }

    /// A zlib stream holding `data` in stored (uncompressed) deflate blocks.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, data.count - offset)
            let final: UInt8 = offset + count == data.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        // Adler-32, reducing modulo 65521 every 5552 bytes (zlib's bound before overflow).
        var a: UInt32 = 1, b: UInt32 = 0
        var start = 0
        while start < data.count {
            for byte in data[start..<min(start + 5552, data.count)] {
                a += UInt32(byte)
                b += a
            }
            a %= 65521
            b %= 65521
            start += 5552
        }
        return out + be32(Int(b << 16 | a))
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(data.count) + body + be32(Int(crc32(body)))
    }

    static func channels(colorType: UInt8) -> Int {
        switch colorType {
        case 0, 3: 1
        case 4: 2
        case 2: 3
        default: 4
        }
    }

    /// The filtered (filter type 0) scanlines of the image, Adam7 order when interlaced.
    static func scanlines(_ pixels: [[Pixel]], bitDepth: Int, interlaced: Bool) -> [UInt8] {
        let height = pixels.count, width = pixels.first?.count ?? 0
        let passes: [(x: Int, y: Int, dx: Int, dy: Int)] = interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        var out: [UInt8] = []
        for pass in passes {
            for y in stride(from: pass.y, to: height, by: pass.dy) {
                let row = stride(from: pass.x, to: width, by: pass.dx).map { pixels[y][$0] }
                guard !row.isEmpty else { continue }
                out.append(0)
                out += pack(row, bitDepth: bitDepth)
            }
        }
        return out
    }

    static func pack(_ row: [Pixel], bitDepth: Int) -> [UInt8] {
        let samples = row.flatMap { $0 }
        switch bitDepth {
        case 16: return samples.flatMap { be16(Int($0)) }
        case 8: return samples.map { UInt8($0) }
        default:
            var out: [UInt8] = [], bits = 0, current: UInt8 = 0
            for sample in samples {
                current |= UInt8(sample) << UInt8(8 - bitDepth - bits)
                bits += bitDepth
                if bits == 8 {
                    out.append(current)
                    current = 0
                    bits = 0
                }
            }
            if bits > 0 { out.append(current) }
            return out
        }
    }

    static func ihdr(width: Int, height: Int, bitDepth: Int, colorType: UInt8, interlaced: Bool) -> [UInt8] {
        be32(width) + be32(height) + [UInt8(bitDepth), colorType, 0, 0, interlaced ? 1 : 0]
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A complete PNG: IHDR, `before` chunks, one IDAT, `after` chunks, IEND.
    static func png(_ pixels: [[Pixel]], bitDepth: Int = 8, colorType: UInt8 = 6, interlaced: Bool = false,
                    before: [(String, [UInt8])] = [], after: [(String, [UInt8])] = []) -> [UInt8] {
        let width = pixels.first?.count ?? 0, height = pixels.count
        var out = signature + chunk("IHDR", ihdr(width: width, height: height, bitDepth: bitDepth, colorType: colorType, interlaced: interlaced))
        for (type, data) in before { out += chunk(type, data) }
        out += chunk("IDAT", zlibStored(scanlines(pixels, bitDepth: bitDepth, interlaced: interlaced)))
        for (type, data) in after { out += chunk(type, data) }
        return out + chunk("IEND", [])
    }

    /// A `width` × `height` image of one RGBA colour.
    static func solid(_ width: Int, _ height: Int, _ rgba: Pixel) -> [[Pixel]] {
        Array(repeating: Array(repeating: rgba, count: width), count: height)
    }

    /// An APNG frame: its pixels (RGBA8), place, delay and ops.
    struct Frame {
        var pixels: [[Pixel]]
        var x = 0
        var y = 0
        var delay: (numerator: Int, denominator: Int) = (1, 10)
        var dispose: UInt8 = 0
        var blend: UInt8 = 0
    }

    static func fctl(sequence: Int, _ frame: Frame) -> [UInt8] {
        be32(sequence) + be32(frame.pixels[0].count) + be32(frame.pixels.count) + be32(frame.x) + be32(frame.y)
            + be16(frame.delay.numerator) + be16(frame.delay.denominator) + [frame.dispose, frame.blend]
    }

    /// An RGBA8 APNG on a `width` × `height` canvas. With `defaultImage`, that image is the
    /// IDAT and not part of the animation; otherwise the first frame is the IDAT.
    static func apng(width: Int, height: Int, frames: [Frame], plays: Int = 0, defaultImage: [[Pixel]]? = nil,
                     declaredFrames: Int? = nil) -> [UInt8] {
        var out = signature + chunk("IHDR", ihdr(width: width, height: height, bitDepth: 8, colorType: 6, interlaced: false))
        out += chunk("acTL", be32(declaredFrames ?? frames.count) + be32(plays))
        var sequence = 0
        var remaining = frames[...]
        if let defaultImage {
            out += chunk("IDAT", zlibStored(scanlines(defaultImage, bitDepth: 8, interlaced: false)))
        } else {
            let first = remaining.removeFirst()
            out += chunk("fcTL", fctl(sequence: sequence, first))
            sequence += 1
            out += chunk("IDAT", zlibStored(scanlines(first.pixels, bitDepth: 8, interlaced: false)))
        }
        for frame in remaining {
            out += chunk("fcTL", fctl(sequence: sequence, frame))
            sequence += 1
            out += chunk("fdAT", be32(sequence) + zlibStored(scanlines(frame.pixels, bitDepth: 8, interlaced: false)))
            sequence += 1
        }
        return out + chunk("IEND", [])
    }

    /// A PNG signature and a chunk list with arbitrary (possibly lying) fields.
    static func raw(_ chunks: [[UInt8]]) -> [UInt8] {
        chunks.reduce(signature, +)
    }
}

/// The builders themselves, checked against the libraries, so that a failing decoder test
/// points at the decoder.
@Suite struct PNGGIFBuildersTests {
    @Test func crcMatchesZlib() {
        let bytes = Array("IEND".utf8)
        #expect(PNGBuilder.crc32(bytes) == 0xAE42_6082)
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(data.withUnsafeBytes { LibPNG.crc32($0, 0..<1000) } == PNGBuilder.crc32(data))
    }

    @Test func storedZlibInflates() throws {
        let data = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 * 31) }
        let stream = PNGBuilder.zlibStored(data)
        let inflated = try stream.withUnsafeBytes { try LibPNG.inflate($0, 0..<stream.count, limit: 1 << 20, what: "test") }
        #expect(Array(inflated) == data)
    }

    @Test func lzwRoundTripsThroughGiflib() throws {
        let indices: [UInt8] = (0..<(40 * 30)).map { (i: Int) -> UInt8 in UInt8((i / 7 + i % 40) % 200) }
        let greys: [[UInt8]] = (0..<256).map { (i: Int) -> [UInt8] in [UInt8(i), 0, 0] }
        let bytes = GIFBuilder.gif(width: 40, height: 30, globalPalette: greys,
                                   blocks: [GIFBuilder.image(.init(width: 40, height: 30, indices: indices))])
        let container = try GIFDecoder().decode(Data(bytes), options: .init())
        let reds = stride(from: 0, to: container.image.pixels.count, by: 4).map { container.image.pixels[$0] }
        #expect(reds == indices)
    }
}
