import CJPEGReference
import CWebP
import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Inputs the fuzz-incremental target found (Tests/Fixtures/fuzz/fuzz-incremental): fed in
/// chunks, the incremental decoder's final image must equal the one-shot decode's whenever both
/// succeed.
@Suite struct FuzzIncrementalRegressionTests {
    static let corruptJPEG = "fuzz/fuzz-incremental/jpeg-corrupt-scan-differs"

    /// A JPEG whose entropy-coded data is damaged: both decodes succeed, and the incremental
    /// decoder given the whole file at once equals the one-shot decode.
    @Test func corruptJPEGInOnePieceEqualsTheOneShotDecode() throws {
        let data = try JPEGTests.fixture(Self.corruptJPEG)
        let oneShot = try CoderRegistry.system().decode(data)
        let incremental = try JPEGIncrementalTests.feed(data, chunkSize: data.count).final
        #expect(incremental.image == oneShot.image)
    }

    /// Finding #3, explained: in pieces, the same file decodes to different pixels after the
    /// damage (132 bytes from row 32 on), because libjpeg-turbo decodes an MCU with its fast
    /// Huffman decoder only when enough input is buffered, and its fast and slow decoders
    /// treat corrupt codes differently. So the contract is: on damaged data both decodes say so
    /// (`isComplete == false`) and agree on the size; their pixels may differ after the damage.
    @Test(arguments: [1, 7, 64, 512])
    func corruptJPEGInPiecesIsMarkedIncompleteByBothDecodes(chunkSize: Int) throws {
        let data = try JPEGTests.fixture(Self.corruptJPEG)
        let oneShot = try CoderRegistry.system().decode(data)
        let incremental = try JPEGIncrementalTests.feed(data, chunkSize: chunkSize).final
        #expect(incremental.image.width == oneShot.image.width && incremental.image.height == oneShot.image.height)
        #expect(!oneShot.isComplete)
        #expect(!incremental.isComplete)
        // Up to the damage (the first 32 rows) the pixels agree.
        let intactBytes = 32 * oneShot.image.bytesPerRow
        #expect(incremental.image.pixels.prefix(intactBytes) == oneShot.image.pixels.prefix(intactBytes))
    }

    static let corruptWebP = "fuzz/fuzz-incremental/webp-corrupt-partition-split-differs"

    /// Finding #6: `hopper-alpha-32.webp` with one byte inserted into the VP8 mode partition.
    /// Every decode succeeds, but fed in 1- or 7-byte pieces libwebp's own incremental decoder
    /// gives other RGB than its one-shot decode (2,984 bytes of 4,096; the alpha plane agrees),
    /// in 64-byte pieces the same: where the chunk boundaries fall decides the pixels of a corrupt
    /// lossy bitstream, in libwebp (Debian's 1.2.4), not in our code. The contract: our
    /// incremental decoder gives exactly what libwebp's does for the same pieces, and the size
    /// of the one-shot decode; in one piece, the one-shot decode itself.
    @Test(arguments: [1, 7, 64, 677])
    func corruptWebPInPiecesDecodesAsLibwebpDoesForThoseChunks(chunkSize: Int) throws {
        let data = try WebPTestFiles.fixture(Self.corruptWebP)
        let oneShot = try CoderRegistry.system().decode(data)
        let decoder = try #require(WebPDecoder().makeIncrementalDecoder(options: .init()))
        var offset = 0
        while offset < data.count {
            let end = min(offset + chunkSize, data.count)
            try decoder.append(data[offset..<end])
            offset = end
        }
        let incremental = try decoder.finish()
        #expect(incremental.image.width == oneShot.image.width && incremental.image.height == oneShot.image.height)
        let libwebp = try #require(Self.libwebpIncrementalRGBA(data, chunkSize: chunkSize))
        #expect(incremental.image.pixels.elementsEqual(libwebp))
        if chunkSize >= 64 { #expect(incremental.image == oneShot.image) }
        if chunkSize <= 7 { #expect(incremental.image != oneShot.image) }
    }

    /// libwebp's incremental decoder fed `data` in `chunkSize` pieces (each call given all the
    /// bytes so far), as straight RGBA rows.
    static func libwebpIncrementalRGBA(_ data: Data, chunkSize: Int) -> [UInt8]? {
        let bytes = [UInt8](data)
        return bytes.withUnsafeBufferPointer { buffer -> [UInt8]? in
            guard let decoder = WebPINewRGB(MODE_RGBA, nil, 0, 0) else { return nil }
            defer { WebPIDelete(decoder) }
            var end = 0
            var status = VP8_STATUS_SUSPENDED
            while end < bytes.count {
                end = min(end + chunkSize, bytes.count)
                status = WebPIUpdate(decoder, buffer.baseAddress, end)
            }
            var rows: Int32 = 0, width: Int32 = 0, height: Int32 = 0, stride: Int32 = 0
            guard status == VP8_STATUS_OK, let pixels = WebPIDecGetRGB(decoder, &rows, &width, &height, &stride) else { return nil }
            var result: [UInt8] = []
            for row in 0..<Int(height) {
                result += UnsafeBufferPointer(start: pixels + row * Int(stride), count: Int(width) * 4)
            }
            return result
        }
    }

    static let splitJPEG = "fuzz/fuzz-incremental/jpeg-split-differs"

    /// Finding #7: `Demo/images/thumb-Path.jpg` (400 × 250) with four `0xFF` bytes inserted into
    /// its entropy-coded data. libjpeg reports no damage, yet fed in small pieces it decodes
    /// other pixels from row 80 on than from the whole buffer: its fast Huffman path runs only
    /// with enough input buffered. libjpeg-turbo alone, through a suspending source shown the
    /// same pieces (`CJPEGReference`, none of our code), does exactly the same. The contract: our
    /// incremental decoder gives libjpeg's pixels for those pieces, and the one-shot decode
    /// libjpeg's whole-buffer pixels.
    @Test(arguments: [1, 7, 64, 512, 4096, 1 << 20])
    func splitJPEGDecodesAsLibjpegDoesForThosePieces(chunkSize: Int) throws {
        let data = try JPEGTests.fixture(Self.splitJPEG)
        let oneShot = try CoderRegistry.system().decode(data)
        let incremental = try JPEGIncrementalTests.feed(data, chunkSize: chunkSize).final
        let whole = try #require(Self.libjpegRGBA(data, chunkSize: data.count))
        let pieces = try #require(Self.libjpegRGBA(data, chunkSize: chunkSize))
        #expect(oneShot.image.pixels.elementsEqual(whole.pixels))
        #expect(incremental.image.pixels.elementsEqual(pieces.pixels))
        #expect(whole.warnings == 0 && pieces.warnings == 0)
        #expect(oneShot.isComplete && incremental.isComplete)
        // The split matters in libjpeg for small pieces only: it is the library's, not ours.
        #expect((incremental.image == oneShot.image) == (chunkSize >= 4096))
    }

    static let splitCMYKJPEG = "fuzz/fuzz-incremental/jpeg-cmyk-split-differs"

    /// Finding #22: a 32 × 32 Adobe CMYK JPEG the fuzzer damaged, found by CI's 5 s smoke run on
    /// 2026-11-29. The same as #7: fed in pieces, libjpeg decodes other samples than from the
    /// whole buffer. The fuzz target could not tell, because its libjpeg reference asked for
    /// RGBA, which libjpeg does not make from CMYK, so the reference failed and the difference
    /// was reported as ours. The reference now decodes CMYK files to their CMYK samples. The
    /// contract, for each piece size: our incremental decode differs from the one-shot decode
    /// only where libjpeg's own samples for those pieces differ from its whole-buffer ones.
    @Test(arguments: [1, 7, 64, 512, 4096])
    func splitCMYKJPEGDiffersOnlyWhereLibjpegDoes(chunkSize: Int) throws {
        let data = try JPEGTests.fixture(Self.splitCMYKJPEG)
        let oneShot = try CoderRegistry.system().decode(data)
        let incremental = try JPEGIncrementalTests.feed(data, chunkSize: chunkSize).final
        let whole = try #require(Self.libjpegRGBA(data, chunkSize: data.count), "the reference decodes a CMYK file")
        let pieces = try #require(Self.libjpegRGBA(data, chunkSize: chunkSize))
        #expect(incremental.image.width == oneShot.image.width && incremental.image.height == oneShot.image.height)
        if pieces.pixels == whole.pixels { #expect(incremental.image == oneShot.image) }
    }

    /// Shown that file in pieces of 1, 7, 64 or 512 bytes, libjpeg alone decodes other samples
    /// than from the whole buffer for at least one of them: the difference the fuzzer reported is
    /// the library's. (With the reference fixed, the fuzz target passes the smoke run's input.)
    @Test func theFuzzersSplitOfTheCMYKJPEGChangesLibjpegsSamples() throws {
        let data = try JPEGTests.fixture(Self.splitCMYKJPEG)
        let whole = try #require(Self.libjpegRGBA(data, chunkSize: data.count))
        let anyPieceSizeDiffers = [1, 7, 64, 512].contains { Self.libjpegRGBA(data, chunkSize: $0)?.pixels != whole.pixels }
        #expect(anyPieceSizeDiffers)
    }

    /// libjpeg-turbo's decode of `data` shown `chunkSize` more bytes each time it suspends.
    static func libjpegRGBA(_ data: Data, chunkSize: Int) -> (pixels: [UInt8], warnings: Int)? {
        let bytes = [UInt8](data)
        let ends = stride(from: chunkSize, to: bytes.count + chunkSize, by: chunkSize).map { size_t(min($0, bytes.count)) }
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0, height: Int32 = 0
        var warnings = 0
        guard wi_reference_jpeg_decode(bytes, bytes.count, ends, ends.count, 1 << 24, &pixels, &width, &height, &warnings) == 0,
              let pixels else { return nil }
        defer { free(pixels) }
        return ([UInt8](UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height) * 4)), warnings)
    }
}
