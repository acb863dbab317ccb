/// BlurHash (Wolt's algorithm): the standard base-83 string with its component counts.
///
/// A BlurHash keeps `x` × `y` cosine components of an image (1…9 along each axis; 4 × 3 by
/// default, the size Wolt recommends for a landscape picture): the average colour exactly, as
/// 24-bit sRGB, and the other components as three 19-level values each, scaled by their
/// maximum. The transform runs in linear light, as [Wolt's algorithm](https://github.com/woltapp/blurhash)
/// specifies: sRGB values are converted to linear before it, and the decoded picture back to
/// sRGB. A BlurHash carries no alpha and no aspect ratio: the caller decodes it at the size it
/// shows it at.
///
/// ```swift
/// let hash = try BlurHash(encoding: photo)                 // 4 × 3 components
/// print(hash.string, hash.components.x, hash.components.y)
/// let received = try BlurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj")
/// let placeholder = try received.bitmap(width: 32, height: 20)
/// ```
public struct BlurHash: Hashable, Sendable, CustomStringConvertible {
    /// How many cosine components a hash keeps along each axis: 1…9 each.
    ///
    /// ```swift
    /// let square = BlurHash.Components(x: 3, y: 3)
    /// let hash = try BlurHash(encoding: photo, components: square)
    /// ```
    public struct Components: Hashable, Sendable {
        /// Components along the width.
        public var x: Int
        /// Components along the height.
        public var y: Int

        public init(x: Int, y: Int) {
            self.x = x
            self.y = y
        }
    }

    /// The hash: `4 + 2 · x · y` characters of base 83.
    public let string: String

    /// Validates a hash string: its characters, its length against the component counts its
    /// first character announces, and the range of every value it holds.
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` for fewer than 6 or more than 166 characters, a
    ///   character outside BlurHash's base-83 alphabet, a component count outside 1…9, a length
    ///   that does not match the counts, an average colour past 24 bits or a component past its
    ///   19 × 19 × 19 levels (values no encoder writes).
    public init(_ string: String) throws(ImageError) {
        _ = try Self.digits(of: string)
        self.string = string
    }

    /// A string known to be a valid hash: the encoder's.
    init(validated string: String) {
        self.string = string
    }

    /// The component counts, from the hash's first character.
    public var components: Components {
        let size = PlaceholderCoding.base83Digit(string.utf8.first ?? 0) ?? 0
        return Components(x: size % 9 + 1, y: size / 9 + 1)
    }

    /// ``string``.
    public var description: String { string }

    /// The longest hash: 9 × 9 components.
    static let maximumLength = 4 + 2 * 81

    /// The values of a hash's characters, after checking everything ``init(_:)`` promises; the
    /// work is bounded by ``maximumLength`` whatever the string.
    static func digits(of string: String) throws(ImageError) -> [Int] {
        let utf8 = string.utf8
        guard (6...maximumLength).contains(utf8.count) else {
            throw ImageError.corruptData("a BlurHash has 6 to \(maximumLength) characters, not \(utf8.count)")
        }
        var digits: [Int] = []
        digits.reserveCapacity(utf8.count)
        for (offset, character) in utf8.enumerated() {
            guard let digit = PlaceholderCoding.base83Digit(character) else {
                throw ImageError.corruptData("a BlurHash's character \(offset) is not base 83")
            }
            digits.append(digit)
        }
        guard digits[0] < 81 else {
            throw ImageError.corruptData("a BlurHash's component counts are 1 to 9, not \(digits[0] % 9 + 1) × \(digits[0] / 9 + 1)")
        }
        let expected = 4 + 2 * (digits[0] % 9 + 1) * (digits[0] / 9 + 1)
        guard digits.count == expected else {
            throw ImageError.corruptData("a BlurHash of \(digits.count) characters whose components need \(expected)")
        }
        guard value(digits, 2, 4) <= 0xFF_FFFF else {
            throw ImageError.corruptData("a BlurHash's average colour is past 24 bits")
        }
        for start in stride(from: 6, to: digits.count, by: 2) where value(digits, start, 2) > maximumComponent {
            throw ImageError.corruptData("a BlurHash's component at character \(start) is past its 19³ levels")
        }
        return digits
    }

    /// The largest component value: 18 levels of red, green and blue.
    static let maximumComponent = 18 * 19 * 19 + 18 * 19 + 18

    /// The number `count` digits from `start` spell, most significant first.
    static func value(_ digits: [Int], _ start: Int, _ count: Int) -> Int {
        digits[start..<start + count].reduce(0) { $0 * 83 + $1 }
    }
}
