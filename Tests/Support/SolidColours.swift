import Foundation
import WebImageCore

/// Images of one solid colour each, all told apart by their colour: what the gallery's scroll
/// test and benchmark serve, so that a pixel read back from a cell names the image it shows.
public enum SolidColours {
    public struct RGB: Sendable, Equatable, CustomStringConvertible {
        public var red: UInt8, green: UInt8, blue: UInt8

        public init(red: UInt8, green: UInt8, blue: UInt8) {
            self.red = red
            self.green = green
            self.blue = blue
        }

        /// `RRGGBB`.
        public init?(hex: String) {
            guard hex.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
            self.init(red: UInt8(value >> 16), green: UInt8((value >> 8) & 0xff), blue: UInt8(value & 0xff))
        }

        public var description: String { String(format: "%02x%02x%02x", red, green, blue) }

        /// Within 4 of `other` on every channel: what scaling and rounding may change, far less
        /// than the palette's spacing.
        public func isClose(to other: RGB) -> Bool {
            abs(Int(red) - Int(other.red)) <= 4 && abs(Int(green) - Int(other.green)) <= 4 && abs(Int(blue) - Int(other.blue)) <= 4
        }
    }

    /// `count` colours at least 16 apart on some channel, none of them a grey (every colour's
    /// channels differ by 48 or more), so that none is mistaken for another or for a grey
    /// placeholder. At most 2,000 or so.
    public static func palette(count: Int) -> [RGB] {
        let levels = (0..<15).map { UInt8(12 + $0 * 16) }   // 12 … 236
        var colours: [RGB] = []
        // Varying blue fastest would put near-identical colours side by side; this order
        // spreads neighbours across the cube.
        outer: for step in 0..<(levels.count * levels.count * levels.count) {
            let index = (step * 1_447) % (levels.count * levels.count * levels.count)
            let channels = [levels[index % 15], levels[(index / 15) % 15], levels[index / 225]]
            guard Int(channels.max()!) - Int(channels.min()!) >= 48 else { continue }
            colours.append(RGB(red: channels[0], green: channels[1], blue: channels[2]))
            if colours.count == count { break outer }
        }
        precondition(colours.count == count, "the palette has \(colours.count) colours, not \(count)")
        return colours
    }

    /// A `size`×`size` bitmap of `colour` (encode it with the system coders, which this module
    /// does not link).
    public static func bitmap(_ colour: RGB, size: Int) throws -> Bitmap {
        let pixels = (0..<(size * size * 3)).map { index in [colour.red, colour.green, colour.blue][index % 3] }
        return try Bitmap(width: size, height: size, pixelFormat: .rgb8, pixels: pixels)
    }
}
