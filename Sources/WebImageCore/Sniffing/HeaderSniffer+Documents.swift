extension HeaderSniffer {
    /// The most EBML header elements read looking for the DocType; real files have seven.
    static let ebmlMaxElements = 16

    /// PDF: `%PDF-` at the start. (Readers also accept a PDF after up to a kilobyte of other
    /// bytes; a file that starts otherwise is not sniffed as one, so that no other format's
    /// bytes ever reach the PDF decoder.)
    func sniffPDF() -> ImageHeader? {
        guard reader.u32be(0) == 0x2550_4446, reader.u8(4) == UInt8(ascii: "-") else { return nil } // %PDF
        return ImageHeader(format: .pdf)
    }

    /// Matroska and WebM: the EBML magic, then the EBML header's DocType (`webm` → ``ImageFormat/webm``,
    /// anything else → ``ImageFormat/mkv``). A header cut before its DocType sniffs as Matroska.
    func sniffEBML() -> ImageHeader? {
        guard reader.u32be(0) == 0x1A45_DFA3, let (headerSize, sizeLength) = ebmlVariableInteger(at: 4) else { return nil }
        var offset = 4 + sizeLength
        let end = min(reader.count, offset + min(headerSize, 4096))
        for _ in 0..<Self.ebmlMaxElements where offset < end {
            // Element IDs keep their length marker: DocType is the two bytes 42 82.
            guard let idLength = ebmlIDLength(at: offset),
                  let (size, sizeLength) = ebmlVariableInteger(at: offset + idLength) else { break }
            let body = offset + idLength + sizeLength
            if idLength == 2, reader.u16be(offset) == 0x4282 {
                let isWebM = size == 4 && reader.u32be(body) == 0x7765_626D // webm
                return ImageHeader(format: isWebM ? .webm : .mkv)
            }
            guard size <= end - body else { break }
            offset = body + size
        }
        return ImageHeader(format: .mkv)
    }

    /// The length of the EBML element ID at `offset` (1 to 4 bytes, told by its first byte's
    /// leading zeros), or `nil` when it is not a valid ID.
    private func ebmlIDLength(at offset: Int) -> Int? {
        guard let first = reader.u8(offset), first != 0 else { return nil }
        let length = first.leadingZeroBitCount + 1
        return length <= 4 ? length : nil
    }

    /// An EBML variable-length integer at `offset` and its length (1 to 8 bytes), the marker
    /// bit removed; `nil` past the end or for a value above 2^48 (no header is that large).
    private func ebmlVariableInteger(at offset: Int) -> (value: Int, length: Int)? {
        guard let first = reader.u8(offset), first != 0 else { return nil }
        let length = first.leadingZeroBitCount + 1
        var value = Int(first) & (0xFF >> length)
        for index in 1..<length {
            guard let byte = reader.u8(offset + index) else { return nil }
            value = value << 8 | Int(byte)
        }
        return value < 1 << 48 ? (value, length) : nil
    }
}
