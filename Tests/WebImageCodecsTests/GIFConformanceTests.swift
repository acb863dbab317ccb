import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Every GIF of `../shared/corpus` against what Pillow reported in `reference.json`: size,
/// frame count, loop count, durations, and every fingerprint cell of every frame within
/// ``PNGGIFReference/tolerance`` (1).
///
/// Where Pillow's conventions differ from ours, the mapping:
/// - **Loop**: Pillow's `loop` is the NETSCAPE2.0 value, the number of repeats after the first
///   play (0 forever, absent when there is no extension). Our loop count is the number of
///   plays: value + 1, 0 stays 0, and no extension is 1.
/// - **Durations**: Pillow reports `None` for a frame without a graphic control extension; its
///   stored delay is 0 for us.
/// - A one-frame GIF is a still image for us: no loop count or duration is compared.
@Suite(.enabled(if: PNGGIFReference.corpusIsPresent, "../shared/corpus is absent"))
struct GIFConformanceTests {
    static let entries = PNGGIFReference.entries(pillowFormat: "GIF", fileExtension: "gif")

    static let registry = CoderRegistry(decoders: [GIFDecoder()])

    @Test(arguments: entries.filter(\.decodable).map(\.file))
    func decodesLikeTheReference(file: String) throws {
        let entry = try #require(Self.entries.first { $0.file == file })
        let container = try Self.registry.decode(try Reference.data(entry), options: .init())
        let frames = PNGGIFReference.frames(container)
        let expectedPrints = try #require(entry.fingerprints)

        let size = try #require(entry.oriented_size)
        #expect(container.image.width == size[0] && container.image.height == size[1], "\(file): size")
        #expect(frames.count == entry.frames, "\(file): frame count")
        if let animation = container.animation {
            let plays = entry.loop.map { $0 == 0 ? 0 : $0 + 1 } ?? 1
            #expect(animation.loopCount == plays, "\(file): loop count \(animation.loopCount), Pillow's loop \(String(describing: entry.loop))")
            let durations = animation.frames.map { PNGGIFReference.milliseconds($0.duration) }
            let expected = (entry.durations_ms ?? []).map { $0 ?? 0 }
            // reference.json lists at most the first 8 durations.
            #expect(Array(durations.prefix(expected.count)) == expected, "\(file): durations")
        }
        #expect(expectedPrints.count == min(frames.count, expectedPrints.count))
        var worst = 0
        for (index, (bitmap, expected)) in zip(frames, expectedPrints).enumerated() {
            let distance = PNGGIFReference.distance(PNGGIFReference.pillowFingerprint(bitmap), expected)
            worst = max(worst, distance)
            #expect(distance <= PNGGIFReference.tolerance, "\(file) frame \(index): fingerprint off by \(distance)")
        }
        print("conformance gif \(file): \(frames.count) frame(s), \(expectedPrints.count) fingerprinted, max fingerprint distance \(worst)")
    }

    /// Pillow could not decode these; each gives a typed error.
    @Test(arguments: [
        // A 32×32 screen; its one frame claims 65535×1321 at y 65280, wholly below the screen,
        // and the file ends inside it: no row of it could ever show.
        "edge/decompression_bomb.gif",
        // A 0×32 screen.
        "edge/zero_width.gif",
    ])
    func undecodableFilesGiveTypedErrors(file: String) throws {
        let entry = try #require(Self.entries.first { $0.file == file })
        #expect(!entry.decodable)
        #expect(throws: ImageError.self) { try GIFDecoder().decode(try Reference.data(entry), options: .init()) }
    }

    @Test func everyUndecodableGIFIsListed() {
        let undecodable = Set(Self.entries.filter { !$0.decodable }.map(\.file))
        #expect(undecodable == ["edge/decompression_bomb.gif", "edge/zero_width.gif"])
        #expect(Self.entries.count >= 12, "the corpus's GIF files were found")
    }
}
