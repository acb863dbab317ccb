import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// GIF frames whose LZW minimum code size is above 8 (9, 10 and 11, codes starting at 10 to
/// 12 bits): Chromium refuses them, and so does every GIF path here (whole decode, first frame
/// only, thumbnail, incremental preview and finish) with a typed error, never a transparent
/// frame passed off as the image. A first frame of which nothing decodes fails the same way.
@Suite struct GIFCodeSizeTests {
    static let palette: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]]
    static let indices: [UInt8] = (0..<16).map { UInt8($0 % 4) }

    /// A 4×4 image block whose data is LZW-coded with `codeSize`.
    static func image(codeSize: Int, indices: [UInt8] = indices) -> [UInt8] {
        let data = codeSize >= 8 ? literalLZW(indices, codeSize: codeSize) : GIFBuilder.lzw(indices, minimumCodeSize: codeSize)
        return [0x2C] + GIFBuilder.le16(0) + GIFBuilder.le16(0) + GIFBuilder.le16(4) + GIFBuilder.le16(4) + [0]
            + [UInt8(codeSize)] + GIFBuilder.subBlocks(data)
    }

    /// LZW data of literal codes only (clear, one code per index, end), valid at any code size
    /// from 8 to 11 (`GIFBuilder.lzw` builds its table of byte strings, so stops at 8). Too few
    /// codes for the decoder's table to reach the next code width, so every code is
    /// `codeSize + 1` bits.
    static func literalLZW(_ indices: [UInt8], codeSize: Int) -> [UInt8] {
        precondition(indices.count + 2 < 1 << codeSize)
        let clear = 1 << codeSize, width = codeSize + 1
        var bits = 0, count = 0
        var out: [UInt8] = []
        for code in [clear] + indices.map(Int.init) + [clear + 1] {
            bits |= code << count
            count += width
            while count >= 8 {
                out.append(UInt8(bits & 0xFF))
                bits >>= 8
                count -= 8
            }
        }
        if count > 0 { out.append(UInt8(bits & 0xFF)) }
        return out
    }

    static func gif(_ images: [[UInt8]]) -> [UInt8] {
        GIFBuilder.gif(width: 4, height: 4, globalPalette: palette, blocks: images)
    }

    static func isCorrupt(_ body: () throws -> Any) -> Bool {
        do {
            _ = try body()
            return false
        } catch ImageError.corruptData {
            return true
        } catch {
            return false
        }
    }

    /// The same pixels with code sizes 2 and 8 decode: the files differ only in code size.
    @Test(arguments: [2, 8])
    func codeSizesUpToEightDecode(codeSize: Int) throws {
        let container = try GIFDecoder().decode(Data(Self.gif([Self.image(codeSize: codeSize)])), options: .init())
        #expect(Array(container.image.pixels.prefix(8)) == [255, 0, 0, 255, 0, 255, 0, 255])
    }

    @Test(arguments: [9, 10, 11])
    func codeSizeAboveEightFails(codeSize: Int) throws {
        let bytes = Data(Self.gif([Self.image(codeSize: codeSize)]))
        #expect(Self.isCorrupt { try GIFDecoder().decode(bytes, options: .init()) })
        var first = ImageDecodingOptions()
        first.firstFrameOnly = true
        #expect(Self.isCorrupt { try GIFDecoder().decode(bytes, options: first) })
        var thumbnail = ImageDecodingOptions()
        thumbnail.thumbnail = .maxPixelSize(2)
        #expect(Self.isCorrupt { try CoderRegistry(decoders: [GIFDecoder()]).decode(bytes, options: thumbnail) })

        let incremental = try #require(GIFDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(bytes)
        #expect(Self.isCorrupt { try incremental.preview() as Any })
        #expect(Self.isCorrupt { try incremental.finish() })
    }

    /// A later frame with code size 9 fails the file too: no frame that could not be decoded
    /// is played as the previous canvas.
    @Test func laterFrameWithCodeSizeAboveEightFails() throws {
        let bytes = Data(Self.gif([Self.image(codeSize: 8), Self.image(codeSize: 9)]))
        #expect(Self.isCorrupt { try GIFDecoder().decode(bytes, options: .init()) })
        var first = ImageDecodingOptions()
        first.firstFrameOnly = true
        #expect(try GIFDecoder().decode(bytes, options: first).image.width == 4, "the first frame alone decodes")
    }

    /// A complete first frame whose LZW data is damaged from its first code: nothing of it
    /// decodes, so the decode fails rather than returning a transparent image.
    @Test func firstFrameWithNothingDecodedFails() throws {
        var image = Self.image(codeSize: 8)
        // After the 10-byte descriptor and the code size: codes that are not in the table.
        image.replaceSubrange(11..<image.count, with: [5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0])
        let bytes = Data(Self.gif([image]))
        #expect(Self.isCorrupt { try GIFDecoder().decode(bytes, options: .init()) })
        let incremental = try #require(GIFDecoder().makeIncrementalDecoder(options: .init()))
        try incremental.append(bytes)
        #expect(Self.isCorrupt { try incremental.preview() as Any })
    }
}
