extension HeaderSniffer {
    /// BMP: `BM`, then a 12-byte file header and a DIB header whose size names its version.
    /// Two letters alone would match text files, so the DIB header size must be one that
    /// exists (which needs 18 bytes).
    func sniffBMP() -> ImageHeader? {
        guard reader.u16be(0) == 0x424D, let dibSize = reader.u32le(14) else { return nil }
        switch dibSize {
        case 12: // BITMAPCOREHEADER (OS/2 1.x): 16-bit unsigned dimensions, no alpha
            var header = ImageHeader(format: .bmp, isAnimated: false, hasAlpha: false)
            if let width = reader.u16le(18), let height = reader.u16le(20) {
                header.pixelWidth = Int(width)
                header.pixelHeight = Int(height)
            }
            return header
        case 16, 40, 52, 56, 64, 108, 124: // OS/2 2.x, BITMAPINFOHEADER and its V2–V5 successors
            var header = ImageHeader(format: .bmp, isAnimated: false)
            // Signed 32-bit dimensions; a negative height means rows run top to bottom.
            if let width = reader.u32le(18).map({ Int(Int32(bitPattern: $0)) }),
               let height = reader.u32le(22).map({ Int(Int32(bitPattern: $0)) }),
               width >= 0 {
                header.pixelWidth = width
                header.pixelHeight = abs(height) // from 32 bits, so even Int32.min has a magnitude
            }
            if wantsDetails, dibSize >= 40 {
                header.hasAlpha = bmpHasAlpha(dibSize: dibSize)
            }
            return header
        default:
            return nil
        }
    }

    /// Alpha is declared only by an alpha bit mask: in the header from V3 (56 bytes) on, or
    /// after a 40-byte header with BI_ALPHABITFIELDS. A 32-bit BI_RGB file has a fourth byte
    /// per pixel that readers disagree about, so that case is `nil`.
    private func bmpHasAlpha(dibSize: UInt32) -> Bool? {
        guard let bitsPerPixel = reader.u16le(28), let compression = reader.u32le(30) else { return nil }
        guard bitsPerPixel == 16 || bitsPerPixel == 32 else { return false }
        let bitFields: UInt32 = 3, alphaBitFields: UInt32 = 6
        switch compression {
        case bitFields, alphaBitFields:
            // Masks: red, green, blue, alpha, right after the 40-byte part of the header.
            let alphaMask = dibSize >= 56 || compression == alphaBitFields ? reader.u32le(14 + 40 + 12) : 0
            return alphaMask.map { $0 != 0 }
        case 0:
            return bitsPerPixel == 32 ? nil : false
        default:
            return false
        }
    }
}
