import Foundation
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Helpers shared by the JPEG test suites.
enum JPEGTests {
    /// Fingerprint cells may differ by this much from Pillow's: both use libjpeg-turbo's
    /// accurate integer IDCT, so differences come only from rounding in colour conversion and
    /// upsampling.
    static let tolerance = 3

    static let registry = CoderRegistry(decoders: [JPEGDecoder()], encoders: [JPEGEncoder()])

    /// The repository's own test images (no corpus needed).
    static func fixture(_ name: String) throws -> Data {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent(name)
        return try Data(contentsOf: url)
    }

    static func corpus(_ path: String) throws -> Data {
        try Data(contentsOf: Reference.corpus!.appendingPathComponent(path))
    }

    static var corpusJPEGs: [ReferenceImage] {
        Reference.images.filter { $0.format == "JPEG" }
    }

    static func reference(_ path: String) -> ReferenceImage? {
        Reference.images.first { $0.file == path }
    }

    /// Peak signal-to-noise ratio in dB over the RGB channels of two RGBA bitmaps of one size.
    static func psnr(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var squared = 0
        a.pixels.withUnsafeBufferPointer { first in
            b.pixels.withUnsafeBufferPointer { second in
                for y in 0..<a.height {
                    var p = y * a.bytesPerRow, q = y * b.bytesPerRow
                    for _ in 0..<a.width {
                        for channel in 0..<3 {
                            let d = Int(first[p + channel]) - Int(second[q + channel])
                            squared += d * d
                        }
                        p += 4
                        q += 4
                    }
                }
            }
        }
        let mse = Double(squared) / Double(a.width * a.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// Deterministic pseudo-random bytes.
    static func noise(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }
}
