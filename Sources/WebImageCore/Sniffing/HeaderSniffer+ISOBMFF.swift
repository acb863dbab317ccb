extension HeaderSniffer {
    /// Compatible brands read from an `ftyp` box; real files list two to six.
    static let isoBMFFMaxBrands = 64

    /// HEIC, HEIF and AVIF: an ISO-BMFF file whose first box is `ftyp`, classified by its
    /// major brand and then its compatible brands.
    ///
    /// - `avif`, `avis` → ``ImageFormat/avif``
    /// - `heic`, `heix`, `heim`, `heis`, `hevc`, `hevx`, `hevm`, `hevs` → ``ImageFormat/heic``
    /// - `mif1`, `mif2`, `msf1` with neither of the above → ``ImageFormat/heif``
    ///
    /// Compatible brands decide when the major brand is a generic one: libavif and others
    /// write `mif1` as the major brand with `avif` among the compatible ones. A file with none
    /// of those whose major brand is a movie's is a movie: ``ImageFormat/mov`` for QuickTime's
    /// `qt  `, else ``ImageFormat/mp4`` (`isom`, `iso2`…, `mp41`, `mp42`, `avc1`, `M4V `, `dash`,
    /// 3GPP's). Any other `ftyp` is not a format we know.
    func sniffISOBMFF() -> ImageHeader? {
        guard reader.u32be(4) == FourCC.ftyp, let size32 = reader.u32be(0) else { return nil }
        // Size 1: a 64-bit size follows the type. Size 0: the box runs to the end of the file.
        let headerLength = size32 == 1 ? 16 : 8
        let boxSize: Int
        switch size32 {
        case 0:
            boxSize = reader.count
        case 1:
            guard let high = reader.u32be(8), let low = reader.u32be(12), high < 1 << 30 else { return nil }
            boxSize = Int(high) << 32 | Int(low)
        default:
            boxSize = Int(size32)
        }
        guard let major = reader.u32be(headerLength), boxSize >= headerLength + 8 else { return nil }

        var family = Self.bmffFamily(major)
        if family == nil || family == .heif {
            // Compatible brands follow the major brand and the minor version.
            var offset = headerLength + 8
            for _ in 0..<Self.isoBMFFMaxBrands where offset <= boxSize - 4 {
                guard let brand = reader.u32be(offset) else { break }
                switch Self.bmffFamily(brand) {
                case .avif?: family = .avif
                case .heic?: if family != .avif { family = .heic }
                case .heif?: if family == nil { family = .heif }
                default: break
                }
                if family == .avif { break }
                offset += 4
            }
        }
        guard let family else {
            // By the major brand (an audio file, `M4A `, or a camera's raw file, `crx `, lists
            // `isom` among its compatible brands too), once every compatible brand is seen: an
            // image brand further down the list would make it an image.
            guard Self.isBMFFMovieBrand(major), boxSize <= reader.count else { return nil }
            return ImageHeader(format: major == 0x7174_2020 ? .mov : .mp4) // qt
        }
        var header = ImageHeader(format: family)
        // A sequence brand as the major brand says the file's main content is an animation;
        // anything else leaves it open (a still image may carry a sequence beside it).
        if Self.isBMFFSequenceBrand(major) { header.isAnimated = true }
        if wantsDetails, boxSize <= reader.count, let size = isoBMFFPrimarySize(after: boxSize) {
            header.pixelWidth = size.width
            header.pixelHeight = size.height
        }
        if wantsDetails, boxSize <= reader.count, let tiles = isoBMFFTileCensus(after: boxSize)?.largestTileCount, tiles > 1 {
            header.tileCount = tiles
        }
        return header
    }

    private static func bmffFamily(_ brand: UInt32) -> ImageFormat? {
        switch brand {
        case 0x6176_6966, 0x6176_6973: // avif avis
            .avif
        case 0x6865_6963, 0x6865_6978, 0x6865_696D, 0x6865_6973, // heic heix heim heis
             0x6865_7663, 0x6865_7678, 0x6865_766D, 0x6865_7673: // hevc hevx hevm hevs
            .heic
        case 0x6D69_6631, 0x6D69_6632, 0x6D73_6631: // mif1 mif2 msf1
            .heif
        default:
            nil
        }
    }

    /// The brands of MP4, QuickTime and 3GPP movies.
    private static func isBMFFMovieBrand(_ brand: UInt32) -> Bool {
        switch brand {
        case 0x6973_6F6D, 0x6973_6F32, 0x6973_6F33, 0x6973_6F34, 0x6973_6F35, 0x6973_6F36, // isom iso2…iso6
             0x6D70_3431, 0x6D70_3432, 0x6176_6331, 0x4D34_5620, 0x6461_7368, // mp41 mp42 avc1 "M4V " dash
             0x7174_2020, 0x6D6D_7034, 0x6634_7620: // "qt  " mmp4 "f4v "
            true
        default:
            // 3GPP and 3GPP2: `3gp4`…`3gp9`, `3g2a`…`3g2c`.
            brand >> 8 == 0x33_6770 || brand >> 8 == 0x33_6732
        }
    }

    private static func isBMFFSequenceBrand(_ brand: UInt32) -> Bool {
        switch brand {
        case 0x6176_6973, 0x6D73_6631, 0x6865_7663, 0x6865_7678, 0x6865_766D, 0x6865_7673: // avis msf1 hevc hevx hevm hevs
            true
        default:
            false
        }
    }
}
