extension HeaderSniffer {
    /// Items, properties and associations read from a `meta` box; real files have a few dozen
    /// (a 48-tile grid about a hundred).
    static let isoBMFFMaxEntries = 4096

    /// The size of the primary image item: its `ispe` (image spatial extents), from the `meta`
    /// box that follows the `ftyp` box ending at `offset`. `nil` when the boxes are cut short or
    /// malformed, when the primary item has no `ispe`, or when a transformative property
    /// changes the size: a `clap` crops it (with the decoder's rounding), and writers disagree on
    /// whether an `irot` item's `ispe` is before or after the turn (libheif 1.15 writes it after,
    /// libavif before). A size that disagreed with the decoded bitmap would make the registry
    /// resample a thumbnail to the wrong shape, so none is better than a guess.
    func isoBMFFPrimarySize(after offset: Int) -> (width: Int, height: Int)? {
        guard let properties = isoBMFFPrimaryProperties(after: offset)?.associated else { return nil }
        var size: (width: Int, height: Int)?
        for property in properties {
            switch property.type {
            case 0x6973_7065: // ispe: version and flags, then width and height
                guard let width = reader.u32be(property.payload + 4), let height = reader.u32be(property.payload + 8) else { return nil }
                size = (Int(width), Int(height))
            case 0x6972_6F74: // irot: a half turn keeps the size, a quarter turn is ambiguous
                guard let angle = reader.u8(property.payload), angle & 1 == 0 else { return nil }
            case 0x636C_6170: // clap
                return nil
            default:
                break
            }
        }
        guard let size, size.width > 0, size.height > 0 else { return nil }
        return size
    }

    /// The bits per sample of the primary image: its `pixi` property (the largest channel's),
    /// else its codec configuration's (`av1C`'s high-bit-depth and twelve-bit flags, `hvcC`'s luma
    /// depth). A grid or overlay item has no codec configuration of its own: then the first one
    /// in `ipco`, its tiles' (a grid's tiles share one). `nil` when none says.
    func isoBMFFPrimaryBitDepth(_ properties: (ipco: BMFFBox, associated: [BMFFBox])) -> Int? {
        func depth(_ property: BMFFBox) -> Int? {
            switch property.type {
            case 0x7069_7869: // pixi: version and flags, a channel count, one byte per channel
                guard let channels = reader.u8(property.payload + 4), channels > 0 else { return nil }
                return (0..<Int(channels)).compactMap { reader.u8(property.payload + 5 + $0).map(Int.init) }.max()
            case 0x6176_3143: // av1C: marker and version, profile and level, then the depth flags
                guard let flags = reader.u8(property.payload + 2) else { return nil }
                return flags & 0x40 == 0 ? 8 : (flags & 0x20 != 0 ? 12 : 10)
            case 0x6876_6343: // hvcC: bitDepthLumaMinus8 in the low three bits of byte 17
                return reader.u8(property.payload + 17).map { Int($0 & 7) + 8 }
            default:
                return nil
            }
        }
        let pixi = properties.associated.first { $0.type == 0x7069_7869 }
        if let found = pixi.flatMap(depth) ?? properties.associated.lazy.compactMap(depth).first { return found }
        var box = properties.ipco.payload
        for _ in 0..<Self.isoBMFFMaxEntries {
            guard let property = bmffBox(at: box, limit: properties.ipco.end) else { return nil }
            if let found = depth(property) { return found }
            box = property.end
        }
        return nil
    }

    /// The `ipco` box and the properties `ipma` associates with the primary item (in `ipco`
    /// order), from the `meta` box that follows the `ftyp` box ending at `offset`; `nil` when the
    /// boxes are cut short or malformed.
    func isoBMFFPrimaryProperties(after offset: Int) -> (ipco: BMFFBox, associated: [BMFFBox])? {
        guard let meta = bmffChild(named: 0x6D65_7461, from: offset, to: reader.count) else { return nil } // meta
        // `meta` is a full box: version and flags before its children.
        let children = meta.payload + 4
        guard let pitm = bmffChild(named: 0x7069_746D, from: children, to: meta.end), // pitm
              let pitmVersion = reader.u8(pitm.payload),
              let primary = pitmVersion == 0 ? reader.u16be(pitm.payload + 4).map(UInt32.init) : reader.u32be(pitm.payload + 4),
              let iprp = bmffChild(named: 0x6970_7270, from: children, to: meta.end), // iprp
              let ipco = bmffChild(named: 0x6970_636F, from: iprp.payload, to: iprp.end), // ipco
              let ipma = bmffChild(named: 0x6970_6D61, from: iprp.payload, to: iprp.end) // ipma
        else { return nil }

        // The primary item's property indices (1-based into `ipco`), from `ipma`.
        guard let version = reader.u8(ipma.payload), let flags = reader.u8(ipma.payload + 3),
              let entryCount = reader.u32be(ipma.payload + 4) else { return nil }
        var cursor = ipma.payload + 8
        var indices: [Int]?
        for _ in 0..<min(Int(entryCount), Self.isoBMFFMaxEntries) where indices == nil {
            let item = version < 1 ? reader.u16be(cursor).map(UInt32.init) : reader.u32be(cursor)
            cursor += version < 1 ? 2 : 4
            guard let item, let count = reader.u8(cursor) else { return nil }
            cursor += 1
            let width = flags & 1 != 0 ? 2 : 1
            if item == primary {
                indices = (0..<Int(count)).compactMap { index in
                    // The top bit marks an essential property; the rest is the index.
                    width == 2 ? reader.u16be(cursor + 2 * index).map { Int($0 & 0x7FFF) }
                        : reader.u8(cursor + index).map { Int($0 & 0x7F) }
                }
            }
            cursor += Int(count) * width
            guard cursor <= ipma.end else { return nil }
        }
        guard let indices else { return nil }

        var associated: [BMFFBox] = []
        var index = 0, box = ipco.payload
        while index < Self.isoBMFFMaxEntries, let property = bmffBox(at: box, limit: ipco.end) {
            index += 1
            if indices.contains(index) { associated.append(property) }
            box = property.end
        }
        return (ipco, associated)
    }

    /// A box: its type, where its payload starts and where it ends.
    struct BMFFBox {
        var type: UInt32
        var payload: Int
        var end: Int
    }

    /// The box at `offset`, if its header and its whole extent fit before `limit` (a box of
    /// size 0 runs to `limit`).
    func bmffBox(at offset: Int, limit: Int) -> BMFFBox? {
        guard offset + 8 <= limit, let size32 = reader.u32be(offset), let type = reader.u32be(offset + 4) else { return nil }
        var size = Int(size32), header = 8
        if size32 == 1 {
            guard let high = reader.u32be(offset + 8), let low = reader.u32be(offset + 12), high < 1 << 30 else { return nil }
            size = Int(high) << 32 | Int(low)
            header = 16
        } else if size32 == 0 {
            size = limit - offset
        }
        guard size >= header, size <= limit - offset else { return nil }
        return BMFFBox(type: type, payload: offset + header, end: offset + size)
    }

    /// The first box of `type` among the boxes from `start` to `end`.
    func bmffChild(named type: UInt32, from start: Int, to end: Int) -> BMFFBox? {
        var offset = start
        for _ in 0..<Self.isoBMFFMaxEntries {
            guard let box = bmffBox(at: offset, limit: end) else { return nil }
            if box.type == type { return box }
            offset = box.end
        }
        return nil
    }
}
