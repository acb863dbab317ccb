import Foundation
import Testing
import WebImageCore
@testable import WebImageCodecs

/// ``ImageHeader`` and ``ImageMetadata`` of JPEG XL files, read from the codestream's header
/// without decoding, against jxlinfo (libjxl's own tool, run at test time) and against the
/// decoded image. Both give the size upright (jxlinfo prints the stored one and the
/// orientation), as libjxl decodes it.
@Suite struct JXLMetadataTests {
    typealias Files = ISOBMFFTestFiles

    /// What `jxlinfo -v` prints: the stored size ("JPEG XL image, 48x32, …, 8-bit RGB"), the
    /// orientation, and for an animation `num_loops`.
    struct Reference {
        var width = 0, height = 0, bitDepth = 0, orientation = 0
        var isAnimated = false
        var loops: Int?

        init(_ text: String) throws {
            for line in text.split(separator: "\n") {
                let words = line.split(whereSeparator: { " ,:".contains($0) })
                if line.hasPrefix("JPEG XL image") || line.hasPrefix("JPEG XL animation") {
                    isAnimated = line.hasPrefix("JPEG XL animation")
                    let size = words[3].split(separator: "x").compactMap { Int($0) }
                    (width, height) = (size[0], size[1])
                    bitDepth = words.first { $0.hasSuffix("-bit") }.flatMap { Int($0.dropLast(4)) } ?? 0
                } else if line.hasPrefix("Orientation") {
                    orientation = Int(words[1]) ?? 0
                } else if line.hasPrefix("num_loops") {
                    loops = Int(words[1])
                }
            }
        }
    }

    static let fixtures = [
        "jxl-lossless.jxl", "jxl-container.jxl", "jxl-lossy.jxl", "jxl-alpha.jxl", "jxl-16bit.jxl", "jxl-animated.jxl",
        "jxl-loops.jxl", "jxl-grey-alpha.jxl", "color/gradient-adobergb.jxl",
    ] + (2...8).map { "jxl-orientation\($0).jxl" }

    @Test(arguments: fixtures)
    func headerMatchesJxlinfoAndTheDecode(fixture: String) throws {
        let reference = try Reference(Files.run(["jxlinfo", "-v", Files.fixtures.appendingPathComponent(fixture).path]))
        let data = try Files.fixture(fixture)
        let metadata = try ImageMetadata(reading: data)
        #expect(metadata.format == .jxl)
        #expect(reference.orientation == (fixture.hasPrefix("jxl-orientation") ? Int(fixture.dropFirst(15).prefix(1)) : 1))
        let turned = reference.orientation >= 5
        let upright = turned ? (reference.height, reference.width) : (reference.width, reference.height)
        #expect(metadata.pixelWidth == upright.0 && metadata.pixelHeight == upright.1, "\(fixture)")
        #expect(metadata.orientation == .up, "\(fixture)")
        let header = try #require(ImageHeader(sniffing: data))
        #expect(header.pixelWidth == upright.0 && header.pixelHeight == upright.1, "\(fixture)")
        #expect(header.isAnimated == reference.isAnimated, "\(fixture)")
        #expect(metadata.bitDepth == reference.bitDepth, "\(fixture)")
        #expect(metadata.isAnimated == reference.isAnimated, "\(fixture)")
        #expect(metadata.loopCount == reference.loops, "\(fixture)")
        #expect(metadata.frameCount == (reference.isAnimated ? nil : 1), "\(fixture)")
        let image = try CoderRegistry.system().decode(data).image
        #expect(metadata.orientedWidth == image.width && metadata.orientedHeight == image.height, "\(fixture)")
    }

    /// Cut anywhere, the header reads as cut short or as far as it goes, never a trap.
    @Test func truncatedHeadersAreMarked() throws {
        let data = try Files.fixture("jxl-container.jxl")
        for length in 12..<60 {
            let metadata = try ImageMetadata(reading: data.prefix(length))
            #expect(metadata.pixelWidth == nil || metadata.pixelWidth == 32, "cut at \(length)")
        }
        #expect(try ImageMetadata(reading: data.prefix(40)).isTruncated)
    }
}
