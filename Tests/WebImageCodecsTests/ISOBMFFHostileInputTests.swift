import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Damaged AVIF and HEIC files end in an ``ImageError`` (or, when the damage leaves a decodable
/// file, an image within the limits), never a crash, a hang or another error type.
@Suite(.timeLimit(.minutes(10 * Sanitizers.slowdown))) struct ISOBMFFHostileInputTests {
    typealias Files = ISOBMFFTestFiles

    static let fixtures = Files.avifFixtures + Files.heicFixtures

    func outcome(_ data: Data, _ label: String) -> HostileInput.Outcome {
        HostileInput.outcome(data, label, decode: { try CoderRegistry.system().decode($0, options: $1) }) { Issue.record("\($0)") }
    }

    /// Cut at every twentieth of its length, each fixture fails with a typed error.
    @Test(arguments: fixtures)
    func truncationsAreTypedErrors(fixture: String) throws {
        let data = try Files.fixture(fixture)
        for twentieth in 0..<20 {
            let length = data.count * twentieth / 20
            #expect(outcome(data.prefix(length), "\(fixture) cut at \(length)") == .error)
        }
        #expect(outcome(data, fixture) == .image)
    }

    /// Random bit flips anywhere after the `ftyp` box's type, seeded so a failure reproduces.
    @Test(arguments: fixtures)
    func bitFlipsNeverCrash(fixture: String) throws {
        var generator = SeededGenerator(seed: 0xA1F0 &+ UInt64(fixture.utf8.count))
        let original = [UInt8](try Files.fixture(fixture))
        for _ in 0..<40 {
            let bytes = HostileInput.flippingBits(of: original, from: 8, using: &generator)
            _ = outcome(Data(bytes), "\(fixture) with flipped bits")
        }
        // Whole runs of bytes overwritten with 0xFF (sizes and counts at their maximum).
        for (start, bytes) in HostileInput.maximumRuns(of: original, from: 8) {
            _ = outcome(Data(bytes), "\(fixture) with 0xFFFFFFFF at \(start)")
        }
    }

    /// Headers announcing huge images over a 32×32 bitstream, each decoded by the system
    /// registry in a child process limited to 1 GiB of address space and 20 seconds (the
    /// corpus test's pattern): a decoder that allocated for the announced size, crashed or hung
    /// would kill the child. It must report a typed error or an image, never die.
    @Test(
        .disabled(if: Sanitizers.reservesShadowMemory, "an ASan or TSan process reserves terabytes of address space for its shadow memory: the child's 1 GiB limit stops it at start"),
        arguments: ["avif-gradient.avif", "heic-gradient.heic", "avif-animated.avif", "heic-thumbnail.heic"]
    )
    func hugeAnnouncedSizesStayWithinBoundedMemory(fixture: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("isobmff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for side: UInt32 in [65535, 30000, 16384, 9000] {
            let file = folder.appendingPathComponent("\(side)-\(fixture)")
            try Files.withAnnouncedSize(fixture, width: side, height: side).write(to: file)
            let output = try runProbeLimited(["decode", file.path], addressSpaceKiB: 1 << 20, seconds: 20)
            #expect(output.hasPrefix("error ") || output.hasPrefix("ok "), "\(fixture) announcing \(side)²: \(output)")
        }
    }

    /// libheif puts a line break inside some messages ("…exceeds the maximum image size
    /// 32768x32768\n"): our errors carry a library's message on one line, as a log line and
    /// `webimage`'s one-line error need. The pixel limit is lifted so that the library's own
    /// limit is the one that refuses the file.
    @Test(arguments: ["heic-gradient.heic", "avif-gradient.avif"])
    func libraryMessagesBecomeOneLine(fixture: String) throws {
        let data = try Files.withAnnouncedSize(fixture, width: 60000, height: 60000)
        var options = ImageDecodingOptions()
        options.maximumPixelCount = .max
        options.maximumAnimationBytes = .max
        #expect {
            try CoderRegistry.system().decode(data, options: options)
        } throws: { error in
            guard let error = error as? ImageError, case .tooLarge(let message) = error else { return false }
            return !message.contains("\n")
        }
    }

    /// Fuzz finding #8 (Tests/Fixtures/fuzz/fuzz-decode/heic-decoded-larger-than-ispe): a HEIC
    /// whose coded image (128 × 15,680) is larger than the size its container states, which
    /// passed the pixel limit. The decoded size is checked too: a typed error, never an image
    /// over the limit.
    @Test func aCodedImageLargerThanItsStatedSizeIsRefused() throws {
        let data = try Files.fixture("fuzz/fuzz-decode/heic-decoded-larger-than-ispe")
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 1 << 20
        do {
            let image = try CoderRegistry.system().decode(data, options: options).image
            #expect(image.width * image.height <= 1 << 20, "\(image.width)×\(image.height)")
        } catch let error as ImageError {
            guard case .tooLarge = error else { Issue.record("\(error)"); return }
        }
    }

    /// Fuzz finding #9 (Tests/Fixtures/fuzz/fuzz-decode/heic-grid-canvas-larger-than-ispe): a
    /// 1 KB HEIC whose grid item states 48 × 32 in its `ispe` and a far larger canvas in its
    /// grid descriptor, which libheif allocated (906 MB) before decoding a tile. The canvas is
    /// read from the descriptor and checked first: a typed error.
    @Test func aGridCanvasLargerThanItsStatedSizeIsRefused() throws {
        let data = try Files.fixture("fuzz/fuzz-decode/heic-grid-canvas-larger-than-ispe")
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 1 << 20
        #expect {
            try CoderRegistry.system().decode(data, options: options)
        } throws: { error in
            guard let error = error as? ImageError, case .tooLarge(let message) = error else { return false }
            return message.contains("canvas")
        }
        // The grid fixture, whose descriptor matches its `ispe`, still decodes.
        let grid = try CoderRegistry.system().decode(try Files.fixture("heic-grid.heic"))
        #expect(grid.image.width > 0)
    }

    /// Fuzz finding #11 (Tests/Fixtures/fuzz/fuzz-decode/heic-nclx-unknown-primaries-leak): a
    /// HEIC whose `nclx` box names colour primaries 48, which libheif 1.15 reports as an error
    /// after allocating the profile it then never frees; the decoder frees it (the fuzz smoke
    /// replays the file under LeakSanitizer). Its brands are a mutated AVIF's (`faif` where
    /// `avif` was), so since #16 the file itself is refused before libheif reads it (AV1 in a
    /// file not branded AVIF), and since #18 every AV1 image is (AVIF is `AVIFDecoder`'s). With
    /// `avif` restored, the AVIF decoder reads its `nclx`: the file decodes, its colours left as
    /// stored: the same pixels as a decode that keeps the colour space as it is.
    @Test func unknownNCLXPrimariesLeaveTheColoursAsStored() throws {
        var data = try Files.fixture("fuzz/fuzz-decode/heic-nclx-unknown-primaries-leak")
        #expect(throws: ImageError.self) { try HEIFDecoder().decode(data, options: .init()) }
        #expect(data[16..<20] == Data("faif".utf8))
        data.replaceSubrange(16..<20, with: Data("avif".utf8))
        #expect(throws: ImageError.self) { try HEIFDecoder().decode(data, options: .init()) }
        let converted = try AVIFDecoder().decode(data, options: .init())
        let stored = try AVIFDecoder().decode(data, options: .preservingColor)
        // libavif applies the file's transforms, which libheif did not (32 × 48 there).
        #expect(converted.image.width == 32 && converted.image.height > 0)
        #expect(converted.iccProfile == nil && stored.iccProfile == nil)
        #expect(converted.image == stored.image)
    }

    /// Fuzz finding #13 (Tests/Fixtures/fuzz/fuzz-decode/heif-av1-item-dav1d-leak): a 415-byte
    /// HEIF whose `iloc` gives lengths 12 bytes wide (the standard allows 0, 4 or 8) for its one
    /// AV1 item. libheif 1.15 handed its dav1d plugin no bytes, and the plugin leaked the 40
    /// bytes it had wrapped when dav1d refused them (LeakSanitizer; the fuzz smoke replays the
    /// file). Now refused before libheif reads the items, as corrupt; the HEIC fixtures, whose
    /// field sizes are the standard's, still decode.
    @Test func itemLocationsWithNonStandardFieldSizesAreRefused() throws {
        let data = try Files.fixture("fuzz/fuzz-decode/heif-av1-item-dav1d-leak")
        #expect { try HEIFDecoder().decode(data, options: .init()) } throws: { error in
            if case ImageError.corruptData(let message) = error { message.contains("field sizes") } else { false }
        }
        #expect(throws: ImageError.self) { try CoderRegistry.system().decode(data) }
        for fixture in Files.heicFixtures.prefix(2) {
            #expect(try HEIFDecoder().decode(try Files.fixture(fixture), options: .init()).image.width > 0, "\(fixture)")
        }
    }

    /// Fuzz finding #14: a 487-byte file branded `mif1` (so the HEIF decoder's) whose one AV1
    /// item has an `iloc` entry with no extent (ISO/IEC 14496-12 requires at least one): libheif
    /// 1.15 again handed its dav1d plugin no bytes, and the plugin leaked 40 bytes a decode. Now
    /// refused before libheif reads the items; every real fixture still has its extents.
    @Test func itemsWithoutExtentsAreRefused() throws {
        let data = try Files.fixture("fuzz/fuzz-decode/heif-item-without-extents-dav1d-leak")
        #expect(data.withUnsafeBytes { !ISOBMFFItems.hasValidLocations($0) })
        #expect { try HEIFDecoder().decode(data, options: .init()) } throws: { error in
            if case ImageError.corruptData(let message) = error { message.contains("without extents") } else { false }
        }
        #expect(throws: ImageError.self) { try CoderRegistry.system().decode(data) }
        let names = try FileManager.default.contentsOfDirectory(atPath: Files.fixtures.path)
            .filter { $0.hasSuffix(".heic") || $0.hasSuffix(".avif") }
        #expect(names.count >= 10)
        for name in names {
            #expect(try Files.fixture(name).withUnsafeBytes { ISOBMFFItems.hasValidLocations($0) }, "\(name)")
        }
    }

    /// Fuzz finding #16: a 430-byte file branded `aviv`, `mif1` and `miaf` (no `avif`, so the
    /// HEIF decoder's) whose one AV1 item's extent starts inside the `meta` box and runs to the
    /// end of the file: libheif 1.15 gave dav1d those bytes, dav1d refused them, and libheif's
    /// plugin leaked 40 bytes twice a decode (LeakSanitizer), a third way into #13's leak. Now
    /// an AV1 item in a file not branded AVIF is refused before libheif reads it, as libavif
    /// refuses such a file; HEIC files hold no AV1 item, and AVIF files, which do, are the AVIF
    /// decoder's.
    @Test func av1ItemsInAFileNotBrandedAVIFAreRefused() throws {
        let data = try Files.fixture("fuzz/fuzz-decode/heif-av1-item-without-avif-brand-leak")
        #expect(data.withUnsafeBytes { ISOBMFFItems.hasAV1Items($0) })
        #expect(ImageFormat(sniffing: data) == .heif)
        #expect { try HEIFDecoder().decode(data, options: .init()) } throws: { error in
            if case ImageError.unsupportedFormat(let message) = error { message.contains("AV1") } else { false }
        }
        #expect(throws: ImageError.self) { try AVIFDecoder().decode(data, options: .init()) }
        #expect(throws: ImageError.self) { try CoderRegistry.system().decode(data) }
        let names = try FileManager.default.contentsOfDirectory(atPath: Files.fixtures.path)
        for name in names where name.hasSuffix(".heic") || name.hasSuffix(".avif") {
            let hasAV1 = try Files.fixture(name).withUnsafeBytes { ISOBMFFItems.hasAV1Items($0) }
            #expect(hasAV1 == name.hasSuffix(".avif"), "\(name)")
        }
    }
}
