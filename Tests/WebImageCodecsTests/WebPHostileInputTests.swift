import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Bad bytes never crash, hang or allocate without bound: each case ends in an ``ImageError``
/// or, where the damage leaves a decodable file, an image of the header's size.
@Suite(.timeLimit(.minutes(10 * Sanitizers.slowdown))) struct WebPHostileInputTests {
    let decoder = WebPDecoder()

    /// Decodes `data`, requiring a typed error or a sane image. Any other error fails the test.
    func outcome(_ data: Data, _ label: String) -> HostileInput.Outcome {
        HostileInput.outcome(data, label, decode: { try decoder.decode($0, options: $1) }) { Issue.record("\($0)") }
    }

    /// Every prefix of every fixture (the animated and alpha ones at every byte) fails with a
    /// typed error: a WebP cut short anywhere is refused, never half-decoded.
    @Test(arguments: WebPTestFiles.fixtureNames)
    func everyTruncationIsATypedError(fixture: String) throws {
        let data = try WebPTestFiles.fixture(fixture)
        let step = max(1, data.count / 400)
        var errors = 0, checked = 0
        for length in stride(from: 0, to: data.count, by: step) {
            checked += 1
            if outcome(data.prefix(length), "\(fixture) cut at \(length)") == .error { errors += 1 }
        }
        #expect(errors == checked, "\(checked - errors) of \(checked) truncations of \(fixture) decoded")
        #expect(outcome(data, fixture) == .image)
    }

    @Test(.enabled(if: WebPTestFiles.corpusIsPresent, "../shared/corpus is absent: the WebP corpus tests are skipped"))
    func truncatedCorpusFilesAreTypedErrors() throws {
        for entry in WebPTestFiles.corpusEntries where entry.bytes < 300_000 {
            let data = try Reference.data(entry)
            for fraction in [0.1, 0.5, 0.9, 0.999] {
                let length = Int(Double(data.count) * fraction)
                #expect(outcome(data.prefix(length), "\(entry.file) cut at \(length)") == .error)
            }
        }
    }

    /// The RIFF size field (bytes 4–7) set to values that disagree with the file.
    @Test(arguments: [UInt32(0), 4, 11, 12, 0xFFFF_FFFF, 0x7FFF_FFFF, 0xFFFF_FFF6])
    func corruptRIFFSizes(size: UInt32) throws {
        for fixture in WebPTestFiles.fixtureNames {
            var bytes = [UInt8](try WebPTestFiles.fixture(fixture))
            withUnsafeBytes(of: size.littleEndian) { bytes.replaceSubrange(4..<8, with: $0) }
            _ = outcome(Data(bytes), "\(fixture) with RIFF size \(size)")
        }
    }

    /// The first chunk's size (bytes 16–19) corrupted: huge, zero, one short, one long.
    @Test func corruptChunkSizes() throws {
        for fixture in WebPTestFiles.fixtureNames {
            let original = [UInt8](try WebPTestFiles.fixture(fixture))
            let stored = UInt32(original[16]) | UInt32(original[17]) << 8 | UInt32(original[18]) << 16 | UInt32(original[19]) << 24
            for size in [0, 0xFFFF_FFFF, 0xFFFF_FFF0, stored &- 1, stored &+ 1, stored &+ 1000] as [UInt32] {
                var bytes = original
                withUnsafeBytes(of: size.littleEndian) { bytes.replaceSubrange(16..<20, with: $0) }
                _ = outcome(Data(bytes), "\(fixture) with first chunk size \(size)")
            }
        }
    }

    /// Random bytes behind a valid RIFF/WEBP header and each chunk type, and random flips in
    /// real files: a seeded generator, so a failure reproduces.
    @Test func randomBytesAndBitFlips() throws {
        var generator = SeededGenerator(seed: 0x5EED_CAFE)
        for chunk in ["VP8 ", "VP8L", "VP8X", "ALPH", "ANIM"] {
            for length in [0, 1, 10, 30, 100, 1000] {
                let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let body = WebPDecoderTests.chunk(chunk, payload)
                _ = outcome(Data(WebPDecoderTests.riff(body)), "\(chunk) + \(length) random bytes")
            }
        }
        for _ in 0..<50 {
            let noise = Data((0..<Int.random(in: 0..<2000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            #expect(outcome(noise, "noise") == .error)
        }
        var decodedAfterFlips = 0
        for fixture in WebPTestFiles.fixtureNames {
            let original = [UInt8](try WebPTestFiles.fixture(fixture))
            for _ in 0..<150 {
                let bytes = HostileInput.flippingBits(of: original, from: 12, using: &generator)
                if outcome(Data(bytes), "\(fixture) with flipped bits") == .image { decodedAfterFlips += 1 }
            }
        }
        // Lossy bitstreams have no checksum, so many flips still decode (to a damaged picture);
        // what matters is that none crashed.
        #expect(decodedAfterFlips > 0)
    }

    /// The incremental decoder under the same damage, in random chunk sizes: every call ends in
    /// a value or an ``ImageError``, and a finished image has the header's size.
    @Test func incrementalDecoderUnderDamage() throws {
        var generator = SeededGenerator(seed: 0x1DEC)
        var finished = 0, failed = 0
        for fixture in WebPTestFiles.fixtureNames {
            let original = [UInt8](try WebPTestFiles.fixture(fixture))
            for round in 0..<60 {
                var bytes = original
                if round % 3 != 0 {
                    for _ in 0..<Int.random(in: 1...6, using: &generator) {
                        let index = Int.random(in: 0..<bytes.count, using: &generator)
                        bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
                    }
                }
                if round % 3 == 2 { bytes.removeLast(Int.random(in: 1..<bytes.count, using: &generator)) }
                var options = ImageDecodingOptions()
                options.maximumPixelCount = 4_000_000
                let incremental = try #require(decoder.makeIncrementalDecoder(options: options))
                do {
                    var offset = 0
                    while offset < bytes.count {
                        let end = min(bytes.count, offset + Int.random(in: 1...300, using: &generator))
                        try incremental.append(Data(bytes[offset..<end]))
                        _ = try incremental.preview()
                        offset = end
                    }
                    let image = try incremental.finish().image
                    #expect(image.width * image.height <= 4_000_000)
                    finished += 1
                } catch is ImageError {
                    failed += 1
                } catch {
                    Issue.record("\(fixture) round \(round): not an ImageError: \(error)")
                }
            }
        }
        // The undamaged rounds (every third) must all finish.
        #expect(finished >= WebPTestFiles.fixtureNames.count * 20)
        #expect(failed > 0)
    }

    @Test func emptyAndTinyInputs() {
        #expect(outcome(Data(), "empty") == .error)
        #expect(outcome(Data("RIFF".utf8), "RIFF") == .error)
        #expect(outcome(Data(WebPDecoderTests.riff([])), "RIFF WEBP") == .error)
    }

    /// A canvas within the pixel limit but an animation whose frames would not fit the budget is
    /// refused from the header, before any frame is decoded: 1000 frames claimed, one present.
    @Test func animationBombIsRefusedFromTheHeader() throws {
        let frames = Int(UInt16.max)
        let canvas = WebPDecoderTests.vp8x(width: 4000, height: 1000, flags: 0x02) + WebPDecoderTests.chunk("ANIM", [0, 0, 0, 0, 0, 0])
        // ANMF: x, y (3 bytes each, /2), width-1, height-1 (3 bytes each), duration (3), flags (1),
        // then a frame bitstream: here a 1×1 lossless image.
        let pixel: [UInt8] = [0x2F, 0, 0, 0, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xFE, 0x07, 0]
        let frame = WebPDecoderTests.chunk("ANMF", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0] + WebPDecoderTests.chunk("VP8L", pixel))
        let body = canvas + Array((0..<frames).lazy.flatMap { _ in frame })
        var options = ImageDecodingOptions()
        options.maximumAnimationBytes = 512 << 20
        do {
            _ = try decoder.decode(Data(WebPDecoderTests.riff(body)), options: options)
            Issue.record("decoded \(frames) frames of 16 MB")
        } catch let error as ImageError {
            // 65535 × 16 MB is far past 512 MiB: too large, whatever the frames hold.
            guard case .tooLarge = error else { Issue.record("expected tooLarge, got \(error)"); return }
        }
    }
}

