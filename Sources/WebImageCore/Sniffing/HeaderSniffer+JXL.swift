extension HeaderSniffer {
    /// JPEG XL as a bare codestream: `FF 0A`.
    func sniffBareJXL() -> ImageHeader? {
        reader.u8(1) == 0x0A ? jxlHeader() : nil
    }

    /// JPEG XL in its ISO-BMFF container: a 12-byte `JXL ` signature box,
    /// `00 00 00 0C 'JXL ' 0D 0A 87 0A`.
    func sniffJXLContainer() -> ImageHeader? {
        guard reader.u32be(0) == 0x0000_000C, reader.u32be(4) == FourCC.jxl, reader.u32be(8) == 0x0D0A_870A else {
            return nil
        }
        return jxlHeader()
    }

    /// The size and animation flag from the codestream's bit-packed header (in a container,
    /// in a `jxlc` or `jxlp` box further on), when the bytes hold it. The size is the upright
    /// one, the orientation applied, because that is the bitmap `JXLDecoder` makes (libjxl
    /// turns the pixels and the container says `.up`): a stored size would make the registry
    /// resample a thumbnail of a quarter-turned file to the wrong shape.
    private func jxlHeader() -> ImageHeader {
        guard wantsDetails, let codestream = JXLCodestreamHeader.read(reader) else { return ImageHeader(format: .jxl) }
        return ImageHeader(
            format: .jxl, isAnimated: codestream.loopCount != nil,
            pixelWidth: codestream.uprightWidth, pixelHeight: codestream.uprightHeight)
    }
}
