/// The colours thumbor's `fill` and `background_color` filters take: hexadecimal (`f00`,
/// `ff0000`, with or without `#`), `transparent`, and the CSS names in common use. thumbor passes
/// any of the 147 CSS names to Pillow; a name not in this table is answered `400` (give hex).
enum ThumborColor {
    /// Red, green and blue; `nil` for `transparent`. Throws for a colour it cannot read.
    static func parse(_ text: Substring, filter: String) throws(ProxyError) -> [UInt8]? {
        let name = text.lowercased()
        if name == "transparent" { return nil }
        if let rgb = names[name] { return rgb }
        let hex = name.hasPrefix("#") ? String(name.dropFirst()) : name
        let digits = hex.compactMap { $0.hexDigitValue }
        guard digits.count == hex.count else {
            throw .badRequest("\(filter)() takes a hex colour, transparent or a common CSS colour name, not \(String(text.prefix(40)))")
        }
        switch digits.count {
        case 3: return digits.map { UInt8($0 * 17) }
        case 6: return stride(from: 0, to: 6, by: 2).map { UInt8(digits[$0] * 16 + digits[$0 + 1]) }
        default: throw .badRequest("\(filter)() takes a hex colour of 3 or 6 digits")
        }
    }

    /// CSS's 16 basic colours, and the greys, browns and oranges thumbor URLs tend to name.
    static let names: [String: [UInt8]] = [
        "black": [0, 0, 0], "silver": [192, 192, 192], "gray": [128, 128, 128], "grey": [128, 128, 128],
        "white": [255, 255, 255], "maroon": [128, 0, 0], "red": [255, 0, 0], "purple": [128, 0, 128],
        "fuchsia": [255, 0, 255], "magenta": [255, 0, 255], "green": [0, 128, 0], "lime": [0, 255, 0],
        "olive": [128, 128, 0], "yellow": [255, 255, 0], "navy": [0, 0, 128], "blue": [0, 0, 255],
        "teal": [0, 128, 128], "aqua": [0, 255, 255], "cyan": [0, 255, 255], "orange": [255, 165, 0],
        "pink": [255, 192, 203], "brown": [165, 42, 42], "lightgray": [211, 211, 211], "lightgrey": [211, 211, 211],
        "darkgray": [169, 169, 169], "darkgrey": [169, 169, 169], "whitesmoke": [245, 245, 245], "gainsboro": [220, 220, 220],
        "beige": [245, 245, 220], "ivory": [255, 255, 240], "gold": [255, 215, 0], "indigo": [75, 0, 130],
    ]
}
