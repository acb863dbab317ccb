import Foundation
import Testing
import WebImageCore
@testable import WebImageCodecs

/// ``ImageHeader`` reads an AVIF or HEIC's size from the primary item's `ispe` without
/// decoding: the size the decoders return, so the registry resamples nothing and the memory
/// budget is known before the decode. With a `clap` or a quarter-turn `irot` it gives none
/// (avifenc writes the `ispe` before the turn, libheif 1.15 after it).
@Suite struct ISOBMFFHeaderSizeTests {
    typealias Files = ISOBMFFTestFiles

    @Test(arguments: [
        ("avif-gradient.avif", [32, 32]), ("avif-animated.avif", [16, 16]), ("avif-irot1.avif", []),
        ("avif-irot2.avif", [48, 32]), ("avif-imir0.avif", [48, 32]), ("avif-clap.avif", []),
        ("heic-gradient.heic", [32, 32]), ("heic-orientation6.heic", []), ("heic-orientation8.heic", []),
        ("heic-orientation3.heic", [48, 32]), ("heic-thumbnail.heic", [192, 128]), ("heic-alpha.heic", [32, 32]), ("heic-grid.heic", [128, 64]),
    ])
    func sizeFromTheBoxes(fixture: String, expected: [Int]) throws {
        let data = try Files.fixture(fixture)
        let header = try #require(ImageHeader(sniffing: data))
        let size = [header.pixelWidth, header.pixelHeight].compactMap { $0 }
        #expect(size == expected)
        if !expected.isEmpty {
            let image = try CoderRegistry.system().decode(data).image
            #expect([image.width, image.height] == expected, "the decoded size")
        }
    }

    /// Cut anywhere, the header still names the format (from `ftyp`) and either the right size
    /// or none: never a size read from a half box.
    @Test(arguments: ["avif-irot2.avif", "heic-orientation3.heic", "heic-thumbnail.heic"])
    func truncatedHeadersGiveTheSizeOrNone(fixture: String) throws {
        let data = try Files.fixture(fixture)
        let full = try #require(ImageHeader(sniffing: data))
        for length in 32..<data.count {
            guard let header = ImageHeader(sniffing: data.prefix(length)) else {
                Issue.record("\(fixture) cut at \(length): no header")
                continue
            }
            #expect(header.format == full.format)
            if let width = header.pixelWidth {
                #expect(width == full.pixelWidth && header.pixelHeight == full.pixelHeight, "\(fixture) cut at \(length)")
            }
        }
    }
}
