extension HeaderSniffer {
    /// How far into the text the `<svg` root element may start. Editors put an XML
    /// declaration, a generator comment and a DOCTYPE (Illustrator's with entity declarations)
    /// before it, well under 1 KB; a file whose root is later is not sniffed as SVG.
    static let svgSearchLimit = 4096

    /// SVG: text whose root element is `<svg`. Skips an optional UTF-8 byte-order mark, then
    /// any white space, XML declaration, processing instructions, comments and DOCTYPE, and
    /// requires the next tag to be `svg`. An HTML page with inline SVG, or any other XML, is
    /// not SVG. UTF-16 files and gzip-compressed `.svgz` are not recognised.
    func sniffSVG() -> ImageHeader? {
        let limit = min(reader.count, Self.svgSearchLimit)
        var offset = 0
        if matches("\u{FEFF}", at: 0, limit: limit) { offset = 3 }
        // Every pass moves past at least one construct, so the loop ends within `limit` bytes.
        while true {
            while offset < limit, Self.isXMLSpace(reader.bytes[offset]) { offset += 1 }
            guard offset < limit, reader.bytes[offset] == UInt8(ascii: "<") else { return nil }
            if matches("<?", at: offset, limit: limit) {
                guard let end = find("?>", from: offset + 2, limit: limit) else { return nil }
                offset = end + 2
            } else if matches("<!--", at: offset, limit: limit) {
                guard let end = find("-->", from: offset + 4, limit: limit) else { return nil }
                offset = end + 3
            } else if matches("<!DOCTYPE", at: offset, limit: limit, ignoringCase: true) {
                guard let end = endOfDoctype(from: offset + 9, limit: limit) else { return nil }
                offset = end + 1
            } else if matches("<svg", at: offset, limit: limit), offset + 4 < limit {
                // `<svg` must end the name: `<svgfoo>` is another element.
                let next = reader.bytes[offset + 4]
                guard Self.isXMLSpace(next) || next == UInt8(ascii: ">") || next == UInt8(ascii: "/") else {
                    return nil
                }
                return ImageHeader(format: .svg)
            } else {
                return nil
            }
        }
    }

    /// The `>` closing a DOCTYPE, skipping an internal subset in brackets (whose entity and
    /// element declarations contain `>` of their own).
    private func endOfDoctype(from start: Int, limit: Int) -> Int? {
        var inSubset = false
        var offset = start
        while offset < limit {
            switch reader.bytes[offset] {
            case UInt8(ascii: "["): inSubset = true
            case UInt8(ascii: "]"): inSubset = false
            case UInt8(ascii: ">") where !inSubset: return offset
            default: break
            }
            offset += 1
        }
        return nil
    }

    private static func isXMLSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Whether the UTF-8 of `text` is at `offset`, entirely before `limit`.
    private func matches(_ text: StaticString, at offset: Int, limit: Int, ignoringCase: Bool = false) -> Bool {
        text.withUTF8Buffer { expected in
            guard offset >= 0, offset <= limit - expected.count else { return false }
            for index in 0..<expected.count {
                var byte = reader.bytes[offset + index]
                if ignoringCase, byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") { byte -= 0x20 }
                if byte != expected[index] { return false }
            }
            return true
        }
    }

    /// The offset of the first `text` at or after `start` that ends before `limit`.
    private func find(_ text: StaticString, from start: Int, limit: Int) -> Int? {
        let first = text.utf8Start.pointee
        var offset = start
        while offset < limit {
            // Compare the first byte inline; only a candidate pays for the full comparison.
            if reader.bytes[offset] == first, matches(text, at: offset, limit: limit) { return offset }
            offset += 1
        }
        return nil
    }
}
