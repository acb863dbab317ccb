import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// What the PNG and GIF tests share: where the files are, and the reference's fingerprint
/// (`fingerprint(...)` in WebImageTestSupport, which reproduces Pillow's arithmetic).
enum PNGGIFReference {
    /// Lossless formats: Pillow and we decode the same samples; 1 absorbs nothing but the
    /// rounding of the composition arithmetic (APNG "over", which Pillow does differently).
    static let tolerance = 1

    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    static var corpusIsPresent: Bool {
        if Reference.corpus == nil {
            print("note: ../shared/corpus is absent; the PNG/GIF corpus conformance tests are skipped")
            return false
        }
        return true
    }

    /// The reference entries of one format family: files Pillow decoded as `pillowFormat` plus
    /// the undecodable files with `fileExtension`.
    static func entries(pillowFormat: String, fileExtension: String) -> [ReferenceImage] {
        Reference.images.filter { $0.format == pillowFormat || (!$0.decodable && $0.file.hasSuffix("." + fileExtension)) }
    }

    /// A duration in milliseconds.
    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// The frames of a decoded container, first frame for a still image.
    static func frames(_ container: ImageContainer) -> [Bitmap] {
        container.animation?.frames.map(\.bitmap) ?? [container.image]
    }
}

@Suite struct PNGGIFReferenceFingerprintTests {
    /// The fingerprint weighs colour by alpha: a half-transparent red pixel beside a fully
    /// transparent green one reads as red, where a plain mean would mix in the green.
    @Test func fingerprintWeighsColourByAlpha() throws {
        let bitmap = try Bitmap(width: 16, height: 8, pixelFormat: .rgba8, pixels: (0..<(16 * 8)).flatMap { index -> [UInt8] in
            index % 2 == 0 ? [255, 0, 0, 128] : [0, 255, 0, 0]
        })
        let cells = fingerprint(bitmap)
        #expect(cells.count == 64)
        for cell in cells {
            #expect(cell[0] >= 254 && cell[1] == 0 && cell[3] == 64, "\(cell)")
        }
    }

    /// A one-pixel cell is the pixel as stored, RGB under zero alpha included.
    @Test func onePixelCellsKeepStoredColour() throws {
        let bitmap = try Bitmap(width: 1, height: 1, pixelFormat: .rgba8, pixels: [255, 77, 0, 0])
        #expect(fingerprint(bitmap).allSatisfy { $0 == [255, 77, 0, 0] })
    }
}
