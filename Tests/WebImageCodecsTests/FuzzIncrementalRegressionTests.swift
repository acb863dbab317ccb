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
}
