import Foundation
import WebImageCodecs
import WebImageCore

/// The pictures the proxy tests serve (the server's, and `webimage serve`'s), as PNG, and the
/// colours a test reads back from what the proxy made of them.
public enum TestPictures {
    /// A 200×100 PNG whose quadrants are red (top left), green (top right), blue (bottom left)
    /// and white (bottom right): where a crop, a flip or a turn puts each is visible.
    public static func quadrants() throws -> Data {
        var pixels: [UInt8] = []
        for y in 0..<100 {
            for x in 0..<200 {
                pixels += Colour.of(x: x, y: y).rgb
            }
        }
        let bitmap = try Bitmap(width: 200, height: 100, pixelFormat: .rgb8, pixels: pixels)
        return try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .png, options: ImageEncodingOptions())
    }

    /// A 20 × 20 opaque green square.
    public static func greenSquare(side: Int = 20) throws -> Data {
        let pixels = [UInt8]((0..<(side * side)).flatMap { _ in [UInt8(0), 255, 0] })
        let bitmap = try Bitmap(width: side, height: side, pixelFormat: .rgb8, pixels: pixels)
        return try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .png, options: ImageEncodingOptions())
    }

    public enum Colour: String, Equatable, Sendable {
        case red, green, blue, white, other

        /// The colour of ``TestPictures/quadrants()`` at `x`, `y`.
        public static func of(x: Int, y: Int) -> Colour {
            switch (x < 100, y < 50) {
            case (true, true): .red
            case (false, true): .green
            case (true, false): .blue
            case (false, false): .white
            }
        }

        public var rgb: [UInt8] {
            switch self {
            case .red: [255, 0, 0]
            case .green: [0, 255, 0]
            case .blue: [0, 0, 255]
            case .white, .other: [255, 255, 255]
            }
        }

        /// The colour a pixel is nearest to, within a small tolerance.
        public static func named(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> Colour {
            for colour in [Colour.red, .green, .blue, .white] {
                let rgb = colour.rgb
                if abs(Int(rgb[0]) - Int(r)) < 24, abs(Int(rgb[1]) - Int(g)) < 24, abs(Int(rgb[2]) - Int(b)) < 24 { return colour }
            }
            return .other
        }
    }
}
