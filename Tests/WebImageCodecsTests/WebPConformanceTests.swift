import CWebP
import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Every WebP file of `../shared/corpus` decoded through the registry and compared with what
/// Pillow 13 (libwebp 1.6) reported in `reference.json`.
///
/// Conventions mapped here:
/// - Frames: a still file decodes with `animation == nil` and counts as 1 frame; Pillow says 1.
/// - Loop: for an animation, ``AnimatedImage/loopCount`` is the `ANIM` chunk's loop count, the
///   number of plays with 0 = forever, which is also what Pillow reports as `loop` (it passes
///   libwebp's value through). For a still file Pillow reports `loop` 1 (libwebp's demuxer
///   default: played once) and we have no animation: a still image plays once.
/// - Durations: the milliseconds each `ANMF` frame stores, as Pillow reports them (iss634.webp
///   really stores 0 ms for its first frame). A still file has no duration; Pillow says 0.
///   `reference.json` lists the first 8 frames' durations and fingerprints; those are compared.
/// - Fingerprints: tolerance 3 per channel for files whose pixels are lossy (`VP8 ` bitstream,
///   with or without an `ALPH` plane), 1 for lossless (`VP8L`) ones. Both sides run libwebp, so
///   the measured distance is 0 for every file today; the tolerance absorbs decoder versions.
@Suite(.enabled(if: WebPTestFiles.corpusIsPresent, "../shared/corpus is absent: the WebP corpus tests are skipped"))
struct WebPConformanceTests {
    /// Lossless or lossy, per file, as the chunk layout shows (read with a RIFF walk in the
    /// test, not from the decoder under test).
    static func tolerance(_ data: Data) -> Int {
        containsChunk("VP8 ", in: data) ? 3 : 1
    }

    /// Whether a `VP8 ` chunk appears at the top level or inside an `ANMF` frame.
    static func containsChunk(_ fourCC: String, in data: Data) -> Bool {
        let bytes = [UInt8](data), target = Array(fourCC.utf8)
        func walk(_ start: Int, _ end: Int) -> Bool {
            var offset = start
            while offset + 8 <= end {
                let type = Array(bytes[offset..<offset + 4])
                let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
                if type == target { return true }
                if type == Array("ANMF".utf8), walk(offset + 8 + 16, min(end, offset + 8 + size)) { return true }
                offset += 8 + size + (size & 1)
            }
            return false
        }
        return walk(12, bytes.count)
    }

    @Test(arguments: WebPTestFiles.corpusEntries.map(\.file))
    func decodesLikeTheReference(file: String) throws {
        let entry = try #require(WebPTestFiles.corpusEntries.first { $0.file == file })
        let data = try Reference.data(entry)
        #expect(entry.decodable, "every corpus WebP is decodable")
        let container = try WebPTestFiles.registry().decode(data)
        let frames = container.animation?.frames.map(\.bitmap) ?? [container.image]

        #expect([container.image.width, container.image.height] == entry.oriented_size)
        #expect(container.orientation.rawValue == entry.orientation ?? 1)
        #expect(frames.count == entry.frames)
        if let animation = container.animation {
            #expect(animation.loopCount == entry.loop)
            let durations = entry.durations_ms ?? []
            for (index, expected) in durations.enumerated() {
                #expect(animation.frames[index].duration == .milliseconds(Int(try #require(expected))), "frame \(index)")
            }
        } else {
            #expect(entry.loop == 1 && entry.durations_ms == [0], "Pillow's report for a still file")
        }

        let tolerance = Self.tolerance(data)
        let fingerprints = try #require(entry.fingerprints)
        var worstRGB = 0, worstAlpha = 0
        for (index, expected) in fingerprints.enumerated() {
            let actual = WebPTestFiles.fingerprint(frames[index])
            let rgb = fingerprintDistance(actual.map { Array($0.prefix(3)) }, expected.map { Array($0.prefix(3)) })
            let alpha = fingerprintDistance(actual.map { [$0[3]] }, expected.map { [$0[3]] })
            #expect(alpha <= tolerance, "frame \(index): alpha fingerprint distance \(alpha) > \(tolerance)")
            if Self.semiTransparentReference.contains(file) {
                withKnownIssue("reference.json's RGB for semi-transparent cells is not the plain mean fingerprint() computes") {
                    #expect(rgb <= tolerance, "frame \(index): RGB fingerprint distance \(rgb) > \(tolerance)")
                }
            } else {
                #expect(rgb <= tolerance, "frame \(index): RGB fingerprint distance \(rgb) > \(tolerance)")
            }
            worstRGB = max(worstRGB, rgb)
            worstAlpha = max(worstAlpha, alpha)
        }
        print("webp conformance: \(file): \(frames.count) frame(s), \(fingerprints.count) fingerprinted, max distance RGB \(worstRGB) alpha \(worstAlpha) (tolerance \(tolerance))")
    }

    /// Files whose reference RGB cannot be met by the fingerprint the README describes, even
    /// with Pillow's own pixels: for transparent.webp Pillow's decode is byte-identical to
    /// libwebp's `WebPDecodeRGBA` (and to ours, checked below), yet the plain per-cell means of
    /// those pixels are 212 away from reference.json in RGB while alpha matches exactly. The
    /// reference evidently weights colour by alpha in some way (a premultiplied mean comes
    /// within 14, not exactly), which `fingerprint()` does not; edge/transparent.png has the
    /// same gap. Reported to the lead; the alpha channel is still held to the tolerance.
    static let semiTransparentReference: Set<String> = ["edge/transparent.webp"]

    @Test func transparentWebPIsExactlyLibwebpsDecode() throws {
        let entry = try #require(WebPTestFiles.corpusEntries.first { $0.file == "edge/transparent.webp" })
        let data = try Reference.data(entry)
        let ours = try WebPDecoder().decode(data, options: .init()).image
        var width: Int32 = 0, height: Int32 = 0
        let raw = try #require(data.withUnsafeBytes {
            WebPDecodeRGBA($0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count, &width, &height)
        })
        defer { WebPFree(raw) }
        #expect(ours.pixels == Array(UnsafeBufferPointer(start: raw, count: Int(width * height * 4))))
    }

    @Test func theCorpusHasTheWebPFilesThisSuiteExpects() {
        // Guards against the suite passing vacuously on an empty or renamed corpus.
        #expect(WebPTestFiles.corpusEntries.count == 8)
        #expect(WebPTestFiles.corpusEntries.allSatisfy { $0.decodable })
    }
}
