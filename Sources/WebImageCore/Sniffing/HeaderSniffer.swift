/// Reads an ``ImageHeader`` from the first bytes of a file.
///
/// The rules every format's sniffer follows, because sniffing runs on every load and on
/// bytes from anywhere:
/// - Reads go through ``ByteReader``, which answers `nil` past the end; nothing traps.
/// - Every walk over a list taken from the file (PNG chunks, JPEG markers, GIF blocks, TIFF
///   entries, brands) has a fixed cap and moves forward on every step, so work is bounded
///   whatever the lengths claim.
/// - The format is decided by its signature alone where the signature is unambiguous; facts
///   behind it are filled in when the bytes hold them and left `nil` otherwise.
struct HeaderSniffer {
    let reader: ByteReader
    /// `false` when the caller wants only the format: skips the walks that find nothing but
    /// details (JPEG markers, GIF blocks, TIFF entries). PNG still walks its chunks, because
    /// telling APNG from PNG needs it.
    let wantsDetails: Bool

    init(_ bytes: UnsafeRawBufferPointer, wantsDetails: Bool) {
        self.reader = ByteReader(bytes)
        self.wantsDetails = wantsDetails
    }

    func sniff() -> ImageHeader? {
        // Dispatch on the first byte so that a load tries one or two signatures, not eighteen.
        guard let first = reader.u8(0) else { return nil }
        switch first {
        case 0xFF: return sniffJPEG() ?? sniffBareJXL()
        case 0x89: return sniffPNG()
        case UInt8(ascii: "G"): return sniffGIF()
        case UInt8(ascii: "R"): return sniffWebP()
        case UInt8(ascii: "I"), UInt8(ascii: "M"): return sniffTIFF()
        case UInt8(ascii: "B"): return sniffBMP()
        case 0x00: return sniffICO() ?? sniffJXLContainer() ?? sniffISOBMFF()
        case UInt8(ascii: "%"): return sniffPDF()
        case 0x1A: return sniffEBML()
        default:
            // An ISO-BMFF file starts with its `ftyp` box size: 0 for any real box (a few
            // dozen bytes), but tried for every first byte not taken above. SVG starts with a
            // byte-order mark, white space or `<`.
            return sniffISOBMFF() ?? sniffSVG()
        }
    }
}
