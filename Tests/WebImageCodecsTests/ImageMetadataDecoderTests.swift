import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// ``ImageMetadata``, read without decoding, against what the real decoders (the system
/// registry: libjpeg-turbo, libpng, giflib, libwebp) report after decoding every frame: an
/// independent reference for size after orientation, orientation, frames, loop count,
/// durations and ICC profile presence.
@Suite struct ImageMetadataDecoderTests {
    static let registry = CoderRegistry.system()
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Fixtures copied from the corpus's undecodable files (InfoCommandTests lists them).
    static let undecodable: Set = ["Tests/Fixtures/broken.png", "Tests/Fixtures/decompression_bomb.gif", "Tests/Fixtures/zero_width.gif"]

    /// The fixtures and demo images the decoders decode.
    static let files: [String] = {
        let folders = ["Tests/Fixtures", "Demo/images"]
        return folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent(folder).path)) ?? [])
                .filter { [".jpg", ".png", ".gif", ".webp"].contains(where: $0.hasSuffix) }
                .map { "\(folder)/\($0)" }
        }.filter { !undecodable.contains($0) }.sorted()
    }()

    /// Checks the metadata of `data` against its decode; `false` when it does not decode.
    @discardableResult
    static func checkAgainstDecoder(_ data: Data, _ name: String) throws -> Bool {
        guard let container = try? registry.decode(data, options: .preservingColor) else { return false }
        let metadata = try ImageMetadata(reading: data)
        let frames = container.animation?.frames ?? []
        #expect(metadata.orientedWidth == container.image.width, "\(name)")
        #expect(metadata.orientedHeight == container.image.height, "\(name)")
        #expect(metadata.orientation == container.orientation, "\(name)")
        #expect(metadata.frameCount == max(frames.count, 1), "\(name)")
        #expect(metadata.loopCount == container.animation?.loopCount, "\(name)")
        #expect(metadata.frameDurations == frames.map(\.duration), "\(name)")
        if metadata.format != .gif {
            #expect(metadata.hasICCProfile == (container.iccProfile != nil), "\(name)")
        }
        return true
    }

    @Test(arguments: files)
    func agreesWithTheDecoderOnRepositoryImages(file: String) throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent(file))
        #expect(try Self.checkAgainstDecoder(data, file), "\(file) decodes")
    }

    /// A GIF of 300 frames with differing delays, made by the real encoder: the walk counts every
    /// frame and delay the decoder composes, and the loop count the encoder wrote.
    @Test func encodedManyFrameGIF() throws {
        let frames = try (0..<300).map { index in
            let bitmap = try Bitmap(width: 3, height: 2, pixelFormat: .rgba8, pixels: (0..<6).flatMap { [UInt8(index % 256), UInt8($0 * 40), 7, 255] })
            return AnimatedImage.Frame(bitmap: bitmap, duration: .milliseconds(10 * (index % 7)))
        }
        let container = ImageContainer(image: frames[0].bitmap, animation: AnimatedImage(frames: frames, loopCount: 3))
        let data = try GIFEncoder().encode(container, options: .init())
        let metadata = try ImageMetadata(reading: data)
        #expect(metadata.frameCount == 300 && metadata.loopCount == 3)
        #expect(metadata.frameDurations == frames.map(\.duration))
        #expect(try Self.checkAgainstDecoder(data, "encoded GIF"))
        // A frame limit below the count refuses the file, as decoding under it would.
        #expect(throws: ImageError.self) { try ImageMetadata(reading: data, maximumFrameCount: 299) }
    }
}

/// Issue 26: `webimage info` (``ImageMetadata``) reported an APNG's `acTL` frame count where the
/// decoder, setting the animation aside, showed its still default image. Both now read the
/// control chunks through WebImageCore's `APNGChunks`. The fixtures are
/// `make-apng-fallback-fixtures.py`'s: a valid two-frame APNG, and the same file with one fault
/// each, every one decoding to that APNG's first frame (its `IDAT` image) and nothing more.
@Suite struct APNGInfoFrameCountTests {
    /// Each APNG fixture and the frames the decoder shows: the existing ones (apng-delay.png
    /// keeps its default image out of its four frames) and the new ones.
    static let expected: [(file: String, frames: Int)] = [
        ("apng-delay.png", 4),
        ("apng-single_frame.png", 1),
        ("apng-two-frames.png", 2),
    ] + fallbacks.map { (file: $0, frames: 1) }

    /// One fault each; all but the last two were reported as 2 frames before the fix (the
    /// last two were already 1: a count that disagrees with acTL, and num_plays out of range).
    static let fallbacks = [
        "apng-fallback-sequence-gap.png",
        "apng-fallback-empty-fctl.png",
        "apng-fallback-partial-fctl.png",
        "apng-fallback-two-fctl-before-idat.png",
        "apng-fallback-fdat-before-idat.png",
        "apng-fallback-actl-crc.png",
        "apng-fallback-fctl-crc.png",
        "apng-fallback-second-actl.png",
        "apng-fallback-fewer-frames.png",
        "apng-fallback-too-many-plays.png",
    ]

    /// The frame count `info` prints is the number of frames the decoder shows, and the
    /// decoder shows the number the file is known to hold.
    @Test(arguments: expected.map(\.file))
    func infoFrameCountIsTheDecoders(file: String) throws {
        let frames = try #require(Self.expected.first { $0.file == file }?.frames)
        let data = try PNGGIFReference.fixture(file)
        let decoded = try PNGDecoder().decode(data, options: .init())
        let metadata = try ImageMetadata(reading: data)
        #expect(max(decoded.animation?.frames.count ?? 0, 1) == frames, "\(file): the decoder")
        #expect(metadata.frameCount == frames, "\(file): ImageMetadata, what info prints")
        #expect(metadata.isAnimated == decoded.isAnimated, "\(file)")
        #expect(metadata.loopCount == decoded.animation?.loopCount, "\(file)")
        #expect(metadata.frameDurations == (decoded.animation?.frames.map(\.duration) ?? []), "\(file)")
        #expect(!metadata.isTruncated, "\(file)")
    }

    /// Each fallback is the rules' doing (the animation set aside, for a stated reason), and
    /// what shows is the default image: the valid file's first frame.
    @Test(arguments: fallbacks)
    func fallbackShowsTheDefaultImage(file: String) throws {
        let data = try PNGGIFReference.fixture(file)
        let reason = try data.withUnsafeBytes { try PNGFile($0).animationIgnoredBecause }
        #expect(reason != nil, "\(file)")
        let valid = try PNGDecoder().decode(try PNGGIFReference.fixture("apng-two-frames.png"), options: .init())
        let defaultImage = try #require(valid.animation?.frames.first?.bitmap)
        let decoded = try PNGDecoder().decode(data, options: .init())
        #expect(decoded.animation == nil, "\(file)")
        #expect(decoded.image == defaultImage, "\(file)")
    }
}

/// The same comparison over every decodable file of the shared corpus.
@Suite(.enabled(if: Reference.corpus != nil, "../shared/corpus is absent (a clone without the shared test images)"))
struct ImageMetadataCorpusTests {
    @Test(arguments: Reference.images.filter(\.decodable).map(\.file))
    func agreesWithTheDecoderOnTheCorpus(file: String) throws {
        let data = try Data(contentsOf: Reference.corpus!.appendingPathComponent(file))
        #expect(try ImageMetadataDecoderTests.checkAgainstDecoder(data, file), "\(file) decodes")
    }

    /// The 42-frame GIF: counted, with its delays and loop count, by a walk that skips the LZW
    /// data of every frame; Pillow's reference agrees on the count.
    @Test func fortyTwoFrameGIF() throws {
        let data = try Data(contentsOf: Reference.corpus!.appendingPathComponent("edge/iss634.gif"))
        let metadata = try ImageMetadata(reading: data)
        let reference = try #require(Reference.images.first { $0.file == "edge/iss634.gif" })
        #expect(metadata.frameCount == 42 && metadata.frameCount == reference.frames)
        #expect(try ImageMetadataDecoderTests.checkAgainstDecoder(data, "edge/iss634.gif"))
    }
}
