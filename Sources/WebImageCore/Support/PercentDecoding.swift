/// `%XX` escapes and hex digits, decoded byte by byte: for data URLs here, and for the proxy's
/// query parameters and signatures in the same package (Foundation's `removingPercentEncoding`
/// goes through NSString and costs several times as much).
package enum PercentDecoding {
    /// The bytes of `text` with each `%XX` escape decoded; `+` stays a plus. `nil` for a `%`
    /// not followed by two hex digits.
    package static func bytes(_ text: Substring) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            output.append(high << 4 | low)
        }
        return output
    }

    /// `text` decoded as ``bytes(_:)``, then read as UTF-8; `nil` for a malformed escape or
    /// bytes that are not UTF-8 (what `removingPercentEncoding` answers).
    package static func string(_ text: Substring) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        return bytes(text).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The value of one hex digit, either case.
    package static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
