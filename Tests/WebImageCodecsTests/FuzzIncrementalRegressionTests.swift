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

    /// Open finding: in pieces, the same file decodes to different pixels (132 bytes from row 32
    /// on). Only `finish()` is affected (the pipeline's final image comes from the one-shot
    /// decode; incremental decoding only makes its previews). When this is fixed, the known
    /// issue is no longer recorded and this test fails: turn it into a plain expectation.
    @Test(arguments: [1, 7, 64, 512])
    func corruptJPEGInPiecesEqualsTheOneShotDecode(chunkSize: Int) throws {
        let data = try JPEGTests.fixture(Self.corruptJPEG)
        let oneShot = try CoderRegistry.system().decode(data)
        let incremental = try JPEGIncrementalTests.feed(data, chunkSize: chunkSize).final
        #expect(incremental.image.width == oneShot.image.width && incremental.image.height == oneShot.image.height)
        // Compared outside the expectation, so that a mismatch does not print both bitmaps.
        let differingBytes = zip(incremental.image.pixels, oneShot.image.pixels).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) }
        withKnownIssue("libjpeg's result on corrupt scan data depends on how the input was split") {
            #expect(differingBytes == 0)
        }
    }
}
