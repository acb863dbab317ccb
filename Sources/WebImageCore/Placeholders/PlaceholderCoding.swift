import Foundation

/// The text forms and cosine tables that ``ThumbHash`` and ``BlurHash`` share.
///
/// Both hashes are strings a client sends (a request's placeholder, a proxy's query), so the
/// decoders below read at most a fixed number of characters, look every character up in a
/// 256-entry table, and answer `nil` for anything else: no input makes them trap or allocate
/// more than their bound.
enum PlaceholderCoding {
    // MARK: Base64

    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let base64Values = digitTable(base64Alphabet)

    /// Standard base64 (RFC 4648 §4, `+` and `/`) with its `=` padding.
    static func base64(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for digit in 0..<4 {
                out.append(digit <= chunk.count ? base64Alphabet[(value >> (18 - 6 * digit)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of standard base64 text, with or without its padding; `nil` for any other
    /// character (whitespace and the URL-safe `-` and `_` included), a length no encoding has,
    /// padding where none belongs, or text that would decode to more than `maximumBytes`.
    static func bytes(base64 text: String, maximumBytes: Int) -> [UInt8]? {
        let utf8 = text.utf8
        // Checked before reading: `utf8.count` is O(1) for native strings.
        guard utf8.count <= (maximumBytes + 2) / 3 * 4 else { return nil }
        var body = Array(utf8)
        var padding = 0
        while padding < 2, body.last == UInt8(ascii: "=") {
            body.removeLast()
            padding += 1
        }
        // Padded text comes in whole groups of four; one character alone holds no byte.
        guard padding == 0 || utf8.count % 4 == 0, body.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(body.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits: UInt32 = 0
        for character in body {
            let value = base64Values[Int(character)]
            guard value >= 0 else { return nil }
            accumulator = (accumulator << 6 | UInt32(value)) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> bits))
            }
        }
        return out
    }

    // MARK: Base 83

    /// BlurHash's digits, in order of value (Algorithm.md of woltapp/blurhash).
    static let base83Alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)
    private static let base83Values = digitTable(base83Alphabet)

    /// The value of one base-83 character, or `nil` for any other byte.
    static func base83Digit(_ character: UInt8) -> Int? {
        let value = base83Values[Int(character)]
        return value >= 0 ? Int(value) : nil
    }

    /// Appends `value` as `length` base-83 digits, most significant first.
    static func appendBase83(_ value: Int, length: Int, to out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<max(length, 1) { divisor *= 83 }
        for _ in 0..<length {
            out.append(base83Alphabet[(value / divisor) % 83])
            divisor /= 83
        }
    }

    private static func digitTable(_ alphabet: [UInt8]) -> [Int8] {
        var table = [Int8](repeating: -1, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = Int8(value) }
        return table
    }

    // MARK: Cosines

    /// `cos(π · k · (i + offset) / size)` for `k` in `0..<frequencies` and `i` in `0..<size`, at
    /// `[k * size + i]`: the basis functions along one axis, computed once per axis so that the
    /// transforms multiply instead of calling `cos` for every pixel. ThumbHash samples pixel
    /// centres (`offset` 0.5), BlurHash pixel corners (`offset` 0), as their references do.
    static func cosines(frequencies: Int, size: Int, offset: Double) -> [Double] {
        var table = [Double](repeating: 0, count: frequencies * size)
        for k in 0..<frequencies {
            for i in 0..<size {
                table[k * size + i] = cos(Double.pi / Double(size) * Double(k) * (Double(i) + offset))
            }
        }
        return table
    }
}
