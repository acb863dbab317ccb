/// An 8-bit sRGB colour, for the dominant colour of `webimage info` and the proxy's /info.
package struct RGBColor: Hashable, Sendable {
    package var red, green, blue: UInt8

    package init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// `#rrggbb`, lowercase: CSS's form, and what the JSON of `/info` and `--json` carry.
    package var hex: String { "#" + Hex.encode([red, green, blue]) }
}
