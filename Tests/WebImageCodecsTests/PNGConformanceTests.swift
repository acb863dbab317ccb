import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Every PNG and APNG file of `../shared/corpus` against what Pillow reported in
/// `reference.json`: oriented size, frame count, loop count, durations, and every fingerprint
/// cell of every frame within ``PNGGIFReference/tolerance`` (1).
///
/// Where Pillow's conventions differ from ours, the mapping:
/// - An APNG whose default image is not part of the animation (no `fcTL` before `IDAT`):
///   Pillow counts that image as an extra first frame with duration `None`; we skip it, as the
///   APNG specification says. Such files are recognised by that `None` first duration, and
///   Pillow's frame 0 is dropped before comparing.
/// - A one-frame APNG is a still image for us (`animation == nil`); its loop count and
///   duration are not compared.
/// - `edge/i_trns.png` is 16-bit grey with samples 0…255. Pillow clips 16-bit grey to 8 bits
///   (`I;16` → `L` keeps values up to 255 and saturates the rest), so it shows a full-range
///   image; PNG's 16-bit samples scale to 8 bits (libpng, browsers and we keep the high
///   byte), which makes the same samples almost black. The expected colour is the reference's
///   divided by 256 (its alpha is unchanged).
/// - Two APNG frames where Pillow's compositing departs from the APNG specification, so the
///   expected frame is the one the specification (and Firefox and Chrome) give, stated in
///   ``specificationFrames``. Both frames are a single colour, so the whole fingerprint is.
@Suite(.enabled(if: PNGGIFReference.corpusIsPresent, "../shared/corpus is absent"))
struct PNGConformanceTests {
    static let entries = PNGGIFReference.entries(pillowFormat: "PNG", fileExtension: "png")

    static let registry = CoderRegistry(decoders: [PNGDecoder()])

    /// File → (our frame index, the colour of every pixel per the APNG specification).
    static let specificationFrames: [String: (frame: Int, rgba: [Int])] = [
        // Frames: green (dispose none), red (dispose previous, blend over), fully transparent
        // (blend over). Disposing the red frame restores the green canvas, so the last frame
        // is green. Pillow blends "over" frames into the image it later restores from, so its
        // "previous" is the red frame itself and it shows red.
        "edge/apng/dispose_op_previous.png": (2, [0, 255, 0, 255]),
        // Frames: opaque black, then blue at alpha 128 blended over it. Straight-alpha "over"
        // gives αo = αs + αd(1 − αs) = 255 and blue = 128. Pillow pastes with the source alpha
        // as the mask, which blends the alpha channel like a colour, αd(1 − αs) + αs·αs = 191.
        "edge/apng/mode_16bit.png": (1, [0, 0, 128, 255]),
    ]

    @Test(arguments: entries.filter(\.decodable).map(\.file))
    func decodesLikeTheReference(file: String) throws {
        let entry = try #require(Self.entries.first { $0.file == file })
        let container = try Self.registry.decode(try Reference.data(entry), options: .init())
        let frames = PNGGIFReference.frames(container)

        var expectedPrints = try #require(entry.fingerprints)
        var expectedDurations = entry.durations_ms ?? []
        if entry.file.hasPrefix("edge/apng/"), (entry.frames ?? 0) > 1, expectedDurations.first == .some(nil) {
            expectedPrints.removeFirst()
            expectedDurations.removeFirst()
        }
        if let (frame, rgba) = Self.specificationFrames[file] {
            expectedPrints[frame] = Array(repeating: rgba, count: 64)
        }
        if entry.file == "edge/i_trns.png" {
            expectedPrints = expectedPrints.map { $0.map { [$0[0] / 256, $0[1] / 256, $0[2] / 256, $0[3]] } }
        }

        let size = try #require(entry.oriented_size)
        #expect(container.image.width == size[0] && container.image.height == size[1], "\(file): size")
        #expect(frames.count == expectedPrints.count, "\(file): frame count")
        if let animation = container.animation {
            #expect(animation.loopCount == entry.loop, "\(file): loop count")
            let durations = animation.frames.map { PNGGIFReference.milliseconds($0.duration) }
            #expect(durations.count == expectedDurations.count)
            for (ours, theirs) in zip(durations, expectedDurations) {
                #expect(abs(ours - (theirs ?? 0)) < 0.001, "\(file): durations \(durations) vs \(expectedDurations)")
            }
        }
        var worst = 0
        for (index, (bitmap, expected)) in zip(frames, expectedPrints).enumerated() {
            let distance = PNGGIFReference.distance(PNGGIFReference.pillowFingerprint(bitmap), expected)
            worst = max(worst, distance)
            #expect(distance <= PNGGIFReference.tolerance, "\(file) frame \(index): fingerprint off by \(distance)")
        }
        print("conformance png \(file): \(frames.count) frame(s), max fingerprint distance \(worst)")
    }

    /// Pillow could not decode these; each gives a typed error.
    @Test(arguments: [
        ("edge/broken.png", "corrupt"),              // the signature, then random bytes
        ("edge/png_decompression_dos.png", "tooLarge"), // zTXt chunks inflating to 2 MiB each
        ("edge/truncated_image.png", "corrupt"),     // ends inside its IDAT
    ])
    func undecodableFilesGiveTypedErrors(file: String, kind: String) throws {
        let entry = try #require(Self.entries.first { $0.file == file })
        #expect(!entry.decodable)
        do {
            _ = try PNGDecoder().decode(try Reference.data(entry), options: .init())
            Issue.record("\(file) decoded")
        } catch let error as ImageError {
            switch (kind, error) {
            case ("corrupt", .corruptData), ("tooLarge", .tooLarge): break
            default: Issue.record("\(file): \(error)")
            }
        }
    }

    /// Every undecodable PNG in the reference is covered by the test above.
    @Test func everyUndecodablePNGIsListed() {
        let undecodable = Set(Self.entries.filter { !$0.decodable }.map(\.file))
        #expect(undecodable == ["edge/broken.png", "edge/png_decompression_dos.png", "edge/truncated_image.png"])
        #expect(Self.entries.count >= 30, "the corpus's PNG files were found")
    }

    /// The profile of `edge/icc_profile.png` comes out whole: an ICC header whose size field
    /// is the profile's length and whose signature is "acsp".
    @Test func exposesTheICCProfile() throws {
        let entry = try #require(Self.entries.first { $0.file == "edge/icc_profile.png" })
        let container = try PNGDecoder().decode(try Reference.data(entry), options: .init())
        let profile = try #require(container.iccProfile)
        #expect(profile.count > 128)
        let size = profile.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        #expect(size == profile.count)
        #expect(String(decoding: profile[36..<40], as: UTF8.self) == "acsp")
    }
}
