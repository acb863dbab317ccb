import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// What the PNG and GIF tests share: where the files are, and a fingerprint computed the way
/// `reference.json`'s fingerprints really are.
///
/// `reference.json` describes its fingerprint as "the mean straight-alpha R, G, B, A of each
/// cell", and `fingerprint(...)` in WebImageTestSupport computes exactly that plain mean. But
/// Pillow made the reference by cropping each cell and resizing it to 1×1 with the BOX filter,
/// which Pillow does in premultiplied alpha, in two 8-bit passes (horizontal, then vertical)
/// with 22-bit fixed-point weights, then un-premultiplies with a truncating division; a 1×1
/// cell is copied unchanged. For opaque images the two agree within 1; for images with
/// transparency the plain mean is off by up to 212 (`edge/transparent.png`), because fully
/// transparent pixels count in it with whatever RGB they store. ``pillowFingerprint(_:)``
/// reproduces Pillow's arithmetic; computed on Pillow's own decoded pixels it matches every
/// frame of every file in `reference.json` exactly (checked with Pillow 13.0.0 at the time of
/// writing), so the tolerance below measures our decoders, not the fingerprint.
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

    /// Pillow's fingerprint of an RGBA8 bitmap (see the type's documentation).
    static func pillowFingerprint(_ bitmap: Bitmap) -> [[Int]] {
        precondition(bitmap.pixelFormat == .rgba8)
        let width = bitmap.width, height = bitmap.height, stride = bitmap.bytesPerRow
        return bitmap.pixels.withUnsafeBufferPointer { pixels in
            var cells: [[Int]] = []
            for gy in 0..<8 {
                for gx in 0..<8 {
                    let x0 = gx * width / 8, x1 = max((gx + 1) * width / 8, x0 + 1)
                    let y0 = gy * height / 8, y1 = max((gy + 1) * height / 8, y0 + 1)
                    cells.append(cell(pixels, stride: stride, x: x0..<min(x1, width), y: y0..<min(y1, height)))
                }
            }
            return cells
        }
    }

    private static func cell(_ pixels: UnsafeBufferPointer<UInt8>, stride: Int, x: Range<Int>, y: Range<Int>) -> [Int] {
        if x.count == 1, y.count == 1 {
            let offset = y.lowerBound * stride + x.lowerBound * 4
            return (0..<4).map { Int(pixels[offset + $0]) }
        }
        // One BOX pass's weight, in Pillow's 22-bit fixed point; a pass over one value is exact.
        func weight(_ count: Int) -> Int { Int(0.5 + (1.0 / Double(count)) * Double(1 << 22)) }
        let rowWeight = weight(x.count), columnWeight = weight(y.count)
        var column = (0, 0, 0, 0)
        for row in y {
            // Premultiply as Pillow's RGBA → RGBa conversion does (MULDIV255, rounded), sum
            // the row, and round the horizontal pass to 8 bits.
            var sum = (0, 0, 0, 0)
            for index in x {
                let offset = row * stride + index * 4
                let alpha = Int(pixels[offset + 3])
                func premultiply(_ value: UInt8) -> Int {
                    let t = Int(value) * alpha + 128
                    return (t + (t >> 8)) >> 8
                }
                sum.0 += premultiply(pixels[offset])
                sum.1 += premultiply(pixels[offset + 1])
                sum.2 += premultiply(pixels[offset + 2])
                sum.3 += alpha
            }
            func pass(_ total: Int, _ weight: Int) -> Int { min(255, ((1 << 21) + total * weight) >> 22) }
            column.0 += pass(sum.0, rowWeight)
            column.1 += pass(sum.1, rowWeight)
            column.2 += pass(sum.2, rowWeight)
            column.3 += pass(sum.3, rowWeight)
        }
        func pass(_ total: Int) -> Int { min(255, ((1 << 21) + total * columnWeight) >> 22) }
        let mean = [pass(column.0), pass(column.1), pass(column.2), pass(column.3)]
        let alpha = mean[3]
        if alpha == 0 || alpha == 255 { return mean }
        // Un-premultiply as Pillow's RGBa → RGBA conversion does: truncating.
        return (0..<3).map { min(255, 255 * mean[$0] / alpha) } + [alpha]
    }

    /// The largest per-channel difference between two fingerprints.
    static func distance(_ a: [[Int]], _ b: [[Int]]) -> Int {
        fingerprintDistance(a, b)
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
        let cells = PNGGIFReference.pillowFingerprint(bitmap)
        #expect(cells.count == 64)
        for cell in cells {
            #expect(cell[0] >= 254 && cell[1] == 0 && cell[3] == 64, "\(cell)")
        }
        // The plain mean of the shared helper would not.
        let plain = bitmap.pixels.withUnsafeBytes { fingerprint(width: 16, height: 8, bytesPerRow: 64, pixels: $0) }
        #expect(plain[0][1] > 100)
    }

    /// A one-pixel cell is the pixel as stored, RGB under zero alpha included.
    @Test func onePixelCellsKeepStoredColour() throws {
        let bitmap = try Bitmap(width: 1, height: 1, pixelFormat: .rgba8, pixels: [255, 77, 0, 0])
        #expect(PNGGIFReference.pillowFingerprint(bitmap).allSatisfy { $0 == [255, 77, 0, 0] })
    }
}
