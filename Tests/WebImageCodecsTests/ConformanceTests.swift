import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

extension ReferenceImage: CustomTestStringConvertible {
    public var testDescription: String { file }
}

/// Every decodable corpus file, decoded by the system coders, against what Pillow reports in
/// `reference.json`: size after orientation, frame count, loop count, durations, and every cell
/// of every frame's 8×8 fingerprint.
///
/// Tolerances (largest per-channel difference of a cell mean, 0–255): 1 for lossless formats
/// (PNG, APNG, GIF, lossless WebP), 3 for JPEG and lossy WebP, whose IDCT and upsampling may
/// round differently.
///
/// Where Pillow's conventions differ from the library's, the mapping is stated here:
/// - APNG: when the default image is not part of the animation (no `fcTL` before `IDAT`), Pillow
///   still lists it as frame 0 with duration `None`; the library follows the APNG spec and
///   leaves it out, so our frame `i` is Pillow's frame `i + 1`.
/// - GIF: a frame without a Graphic Control Extension has duration `None` in Pillow; its stored
///   delay is 0 for us.
/// - `edge/i_trns.png` is 16-bit grey with samples 0…255. Pillow clips 16-bit grey to 8 bits
///   (`I;16` → `L` keeps values up to 255 and saturates the rest), so it shows a full-range
///   image; PNG's 16-bit samples scale to 8 bits (we round `v × 255 / 65535` to the nearest,
///   as the colour-management rule for high bit depths asks), which makes the same samples
///   almost black. The expected colour is the reference's scaled and rounded the same way (its
///   alpha is unchanged).
/// - Two APNG frames where Pillow's compositing departs from the APNG specification: the
///   expected frame is the one the specification (and Firefox and Chrome) give, stated in
///   ``specificationFrames``. Both frames are a single colour, so the whole fingerprint is.
/// - Fingerprints: computed as Pillow really computed them (see `fingerprint(...)`: a BOX
///   resize of each cell in premultiplied alpha), not as the corpus README words it.
/// - Loop counts: ours is the number of plays (0 = forever). Pillow reports the GIF NETSCAPE
///   value (see ``expectedLoopCount(_:format:)``), APNG's `num_plays`, WebP's ANIM loop count.
///   A still image has no loop count to compare.
@Suite(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent (a clone without the shared test images)"))
struct ConformanceTests {
    static let decodable = Reference.images.filter(\.decodable)

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
    static let undecodable = Reference.images.filter { !$0.decodable }
    let registry = CoderRegistry.system()

    @Test(arguments: decodable)
    func decodesLikeTheReference(_ reference: ReferenceImage) throws {
        let data = try Reference.data(reference)
        let header = try #require(ImageHeader(sniffing: data))
        guard registry.decoder(for: header.format) != nil else {
            Issue.record("no decoder for \(header.format)")
            return
        }
        // The reference fingerprints are of Pillow's decode, which leaves colours as stored.
        let container = try registry.decode(data, options: .preservingColor)
        let tolerance = Self.tolerance(for: header)

        let size = try #require(reference.oriented_size)
        #expect(container.image.width == size[0] && container.image.height == size[1],
                "size \(container.image.width)×\(container.image.height), reference \(size[0])×\(size[1])")

        // The reference lists fingerprints and durations for the first frames only (8 at most).
        var referenceFrames = try #require(reference.fingerprints)
        var referenceDurations = reference.durations_ms ?? []
        var referenceFrameCount = reference.frames ?? 1
        if header.format == .apng, referenceDurations.first == .some(nil), referenceFrameCount > 1 {
            referenceFrames.removeFirst()
            referenceDurations.removeFirst()
            referenceFrameCount -= 1
        }
        if let (frame, rgba) = Self.specificationFrames[reference.file] {
            referenceFrames[frame] = Array(repeating: rgba, count: 64)
        }
        if reference.file == "edge/i_trns.png" {
            let to8 = { (sample: Int) in (sample * 255 + 32767) / 65535 }
            referenceFrames = referenceFrames.map { $0.map { [to8($0[0]), to8($0[1]), to8($0[2]), $0[3]] } }
        }
        #expect(container.orientation.rawValue == reference.orientation ?? 1, "stored orientation")
        let frames = container.animation?.frames.map(\.bitmap) ?? [container.image]
        #expect(frames.count == referenceFrameCount, "frames \(frames.count), reference \(referenceFrameCount)")

        for (index, (bitmap, expected)) in zip(frames, referenceFrames).enumerated() {
            let distance = fingerprintDistance(fingerprint(bitmap), expected)
            #expect(distance <= tolerance, "frame \(index): fingerprint differs by \(distance) (tolerance \(tolerance))")
        }

        if let animation = container.animation, referenceFrameCount > 1 {
            let durations = animation.frames.map { frame in
                let (seconds, attoseconds) = frame.duration.components
                return Double(seconds) * 1000 + Double(attoseconds / 1_000_000_000_000_000)
            }
            #expect(Array(durations.prefix(referenceDurations.count)) == referenceDurations.map { $0 ?? 0 }, "durations \(durations)")
            #expect(animation.loopCount == Self.expectedLoopCount(reference, format: header.format), "loop count \(animation.loopCount), reference \(String(describing: reference.loop))")
        }
    }

    /// Each undecodable file is decoded in a child process limited to 1 GiB of address space
    /// and 20 seconds: a decoder that tried to allocate for a bomb, crashed, or hung would kill
    /// the child instead of passing. The child must report a typed error — or, for a truncated
    /// file, a partial image of the size the header declares (the documented behaviour).
    @Test(
        .disabled(if: Sanitizers.reservesShadowMemory, "an ASan or TSan process reserves terabytes of address space for its shadow memory: the child's 1 GiB limit stops it at start"),
        arguments: undecodable
    )
    func refusesUndecodableFilesWithATypedErrorInBoundedTimeAndMemory(_ reference: ReferenceImage) throws {
        let path = Reference.corpus!.appendingPathComponent(reference.file).path
        let output = try runProbeLimited(["decode", path], addressSpaceKiB: 1 << 20, seconds: 20)
        let isTruncated = reference.file.contains("truncated")
        if output.hasPrefix("ok ") {
            #expect(isTruncated, "decoded an undecodable file: \(output)")
            if isTruncated, let size = reference.size {
                #expect(output.contains("\(size[0])×\(size[1])"), "partial image of the wrong size: \(output)")
            }
        } else {
            #expect(output.hasPrefix("error "), "the child did not finish cleanly: \(output)")
        }
    }

    static func tolerance(for header: ImageHeader) -> Int {
        switch header.format {
        case .jpeg: 3
        case .webp: header.webPEncoding == .lossless ? 1 : 3
        default: 1
        }
    }

    /// Our loop count (plays, 0 = forever) for a reference entry.
    static func expectedLoopCount(_ reference: ReferenceImage, format: ImageFormat) -> Int {
        switch format {
        case .gif:
            // NETSCAPE2.0's value counts repetitions after the first play; 0 is forever; no
            // extension at all means one play.
            guard let loop = reference.loop else { return 1 }
            return loop == 0 ? 0 : loop + 1
        default:
            return reference.loop ?? 1
        }
    }
}
