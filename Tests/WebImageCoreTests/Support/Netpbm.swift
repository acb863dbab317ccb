import Foundation
import WebImageTestSupport
@testable import WebImageCore

/// Reads the binary Netpbm files in `Tests/Fixtures/pixels/` (decoded pixels, made at dev time
/// by `make-fixtures.py`), so that the processing tests can use real photographs without any
/// decoder: P6 (`.ppm`, RGB) and P7 (`.pam`, here RGB_ALPHA).
enum Netpbm {
    static func bitmap(_ name: String, as format: PixelFormat? = nil) throws -> Bitmap {
        let data = [UInt8](try TestFiles.fixture("pixels/\(name)"))
        // The header is text up to the raster: tokens for P6, KEY VALUE lines for P7.
        let magic = String(decoding: data.prefix(2), as: UTF8.self)
        var width = 0, height = 0, depth = 3, offset = 0
        func line() -> String {
            let end = data[offset...].firstIndex(of: 0x0A)!
            defer { offset = end + 1 }
            return String(decoding: data[offset..<end], as: UTF8.self)
        }
        switch magic {
        case "P6":
            // Pillow writes "P6\nW H\n255\n".
            _ = line()
            let size = line().split(separator: " ").map { Int($0)! }
            (width, height) = (size[0], size[1])
            _ = line()
        case "P7":
            _ = line()
            while case let header = line(), header != "ENDHDR" {
                let parts = header.split(separator: " ")
                switch parts[0] {
                case "WIDTH": width = Int(parts[1])!
                case "HEIGHT": height = Int(parts[1])!
                case "DEPTH": depth = Int(parts[1])!
                default: break
                }
            }
        default:
            throw ImageError.unsupportedFormat("\(name) is not binary Netpbm")
        }
        let stored: PixelFormat = depth == 4 ? .rgba8 : .rgb8
        let bitmap = try Bitmap(width: width, height: height, pixelFormat: stored, pixels: Array(data[offset...]))
        return format.map { bitmap.converted(to: $0) } ?? bitmap
    }
}

extension Bitmap {
    /// This bitmap's pixels in another straight or opaque format (for the tests: RGB ↔ RGBA with
    /// alpha 255, and colour → grey by taking the red channel).
    func converted(to format: PixelFormat) -> Bitmap {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width * height * format.bytesPerPixel)
        for y in 0..<height {
            for x in 0..<width {
                let p = pixel(x, y)
                let rgba: [UInt8] = switch pixelFormat.channels {
                case .gray: [p[0], p[0], p[0], 255]
                case .grayAlpha: [p[0], p[0], p[0], p[1]]
                case .rgb: p + [255]
                case .rgba: p
                }
                switch format.channels {
                case .gray: bytes += [rgba[0]]
                case .grayAlpha: bytes += [rgba[0], rgba[3]]
                case .rgb: bytes += rgba[0..<3]
                case .rgba: bytes += rgba
                }
            }
        }
        return try! Bitmap(width: width, height: height, pixelFormat: format, scale: scale, pixels: bytes)
    }

    /// A bitmap whose pixels are `value(x, y)`.
    static func make(width: Int, height: Int, format: PixelFormat = .rgba8, _ value: (Int, Int) -> [UInt8]) -> Bitmap {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width * height * format.bytesPerPixel)
        for y in 0..<height {
            for x in 0..<width { bytes += value(x, y) }
        }
        return try! Bitmap(width: width, height: height, pixelFormat: format, pixels: bytes)
    }
}

/// Peak signal-to-noise ratio in dB between two byte arrays of the same length.
func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
    precondition(a.count == b.count)
    let squares = zip(a, b).reduce(0.0) { sum, pair in
        let difference = Double(pair.0) - Double(pair.1)
        return sum + difference * difference
    }
    let mse = squares / Double(a.count)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

/// The largest difference between corresponding bytes.
func maximumDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
    zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
}
