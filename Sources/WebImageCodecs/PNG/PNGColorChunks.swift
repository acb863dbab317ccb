import Foundation

extension PNGFile {
    /// The colour chunks besides `iCCP`: `cICP`, `sRGB`, `gAMA` and `cHRM`, the first of each
    /// (each chunk's CRC already checked), read before the image data.
    ///
    /// PNG's third edition ranks them: `cICP`, then `iCCP`, then `sRGB`, then `cHRM` with
    /// `gAMA`. A `gAMA` without `cHRM` is not applied (nor a `cHRM` without `gAMA`): the
    /// samples are taken as sRGB, as before these chunks were read.
    struct ColorChunks {
        var codePoints: (primaries: Int, transfer: Int)?
        var isSRGB = false
        /// `gAMA`'s value: the file gamma × 100,000 (45455 for a 2.2 display curve).
        var gamma: Int?
        /// `cHRM`'s white, red, green and blue x, y.
        var chromaticities: [(Double, Double)]?

        mutating func read(_ type: UInt32, _ data: UnsafeRawBufferPointer) {
            switch type {
            case Chunk.cicp where data.count == 4 && codePoints == nil:
                // Colour primaries, transfer, matrix (0 for RGB, the only one PNG allows), full range.
                guard data[2] == 0 else { return }
                codePoints = (Int(data[0]), Int(data[1]))
            case Chunk.srgb where data.count == 1:
                isSRGB = true
            case Chunk.gama where data.count == 4 && gamma == nil:
                let value = Self.u32(data, 0)
                if value > 0 { gamma = value }
            case Chunk.chrm where data.count == 32 && chromaticities == nil:
                let values = (0..<8).map { Double(Self.u32(data, $0 * 4)) / 100_000 }
                let points = stride(from: 0, to: 8, by: 2).map { (values[$0], values[$0 + 1]) }
                // A y of 0 has no colour (and divides by zero in the profile's maths).
                if points.allSatisfy({ $0.1 > 0 && $0.0 >= 0 && $0.0 + $0.1 <= 1 }) { chromaticities = points }
            default:
                break
            }
        }

        /// The profile `cHRM` and `gAMA` describe, when both are there, no `sRGB` overrides them,
        /// and they differ from sRGB (a 1/2.2 gamma with sRGB's primaries and white, within
        /// cHRM's rounding, is taken as sRGB, as browsers take it); `nil` otherwise.
        func profileFromGammaAndChromaticities() -> Data? {
            guard !isSRGB, let gamma, let chromaticities else { return nil }
            let primaries = Array(chromaticities.dropFirst())
            let sRGBLike = abs(gamma - 45455) <= 500 && zip([CodedColorSpace.d65] + CodedColorSpace.sRGBPrimaries, chromaticities)
                .allSatisfy { abs($0.0 - $1.0) < 0.002 && abs($0.1 - $1.1) < 0.002 }
            guard !sRGBLike else { return nil }
            // gAMA stores the encoding exponent; decoding raises to its inverse.
            return CodedColorSpace.iccProfile(white: chromaticities[0], primaries: primaries, gamma: 100_000 / Double(gamma))
        }

        private static func u32(_ data: UnsafeRawBufferPointer, _ offset: Int) -> Int {
            Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
        }
    }
}
