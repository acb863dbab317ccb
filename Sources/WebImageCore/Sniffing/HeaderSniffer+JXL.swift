extension HeaderSniffer {
    /// JPEG XL as a bare codestream: `FF 0A`.
    func sniffBareJXL() -> ImageHeader? {
        reader.u8(1) == 0x0A ? ImageHeader(format: .jxl) : nil
    }

    /// JPEG XL in its ISO-BMFF container: a 12-byte `JXL ` signature box,
    /// `00 00 00 0C 'JXL ' 0D 0A 87 0A`.
    ///
    /// The size is not read: it is bit-packed in the codestream, which in a container sits in
    /// a `jxlc` or `jxlp` box further on; `JXLDecoder` (libjxl) reads it from the basic info.
    func sniffJXLContainer() -> ImageHeader? {
        guard reader.u32be(0) == 0x0000_000C, reader.u32be(4) == FourCC.jxl, reader.u32be(8) == 0x0D0A_870A else {
            return nil
        }
        return ImageHeader(format: .jxl)
    }
}
