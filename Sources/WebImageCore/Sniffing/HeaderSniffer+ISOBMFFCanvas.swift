import Foundation

/// What the HEIF decoder checks in a file's item boxes before libheif allocates anything.
package enum ISOBMFFItems {
    /// See ``HeaderSniffer/isoBMFFLargestDerivedCanvas(_:)``.
    package static func largestDerivedCanvas(_ bytes: UnsafeRawBufferPointer) -> Int? {
        HeaderSniffer.isoBMFFLargestDerivedCanvas(bytes)
    }

    /// Whether the file's `iloc` (if any) is one ISO/IEC 14496-12 allows: field sizes of 0, 4
    /// or 8 bytes for offsets, lengths and base offsets (and indices), and at least one extent
    /// for every item, all within the box.
    package static func hasValidLocations(_ bytes: UnsafeRawBufferPointer) -> Bool {
        HeaderSniffer.isoBMFFValidLocations(bytes)
    }

    /// The most bytes any one item's extents claim together (`iloc`'s lengths, saturated);
    /// `0` when the file has no `iloc`, `nil` when its `meta` box is not whole yet or `iloc` is
    /// malformed. A length of 0 (to the end of the file) counts as 0: it claims nothing beyond
    /// the file.
    ///
    /// A decoder that reads a file as it arrives does not know its size, and libavif 0.11
    /// allocates an item's whole claimed length before reading it when the size is unknown: a
    /// 4,352-byte AVIF whose grid item claimed 1.29 GB (the fuzz-incremental smoke) made it
    /// allocate that much while parsing. So the claim is read, and bounded, first.
    package static func largestItemLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        HeaderSniffer.isoBMFFLargestItemLength(bytes)
    }

    /// Whether an item the file's `iinf` lists is coded in AV1 (`av01`); `false` when there is
    /// no readable `iinf`.
    package static func hasAV1Items(_ bytes: UnsafeRawBufferPointer) -> Bool {
        HeaderSniffer.isoBMFFHasItem(ofType: 0x6176_3031, bytes) // av01
    }
}

extension HeaderSniffer {
    /// The largest canvas, in pixels, of the derived images (`grid`, `iovl`) in an ISO-BMFF
    /// file: the size their own descriptors give, which libheif allocates when it composes
    /// them. An `ispe` is only a claim: fuzz finding #9 was a 1 KB HEIC whose grid item said
    /// 48 × 32 in its `ispe` and some 15,000 × 15,000 in its grid descriptor, and libheif 1.15
    /// allocated the latter (906 MB) before any tile decoded. `0` when the file has no derived
    /// image; `nil` when the `meta` box cannot be read or a derived image's descriptor cannot be
    /// found (the decoder then refuses the file rather than guess).
    static func isoBMFFLargestDerivedCanvas(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let sniffer = HeaderSniffer(bytes, wantsDetails: true)
        guard let ftyp = sniffer.bmffBox(at: 0, limit: bytes.count), ftyp.type == 0x6674_7970 else { return nil } // ftyp
        return sniffer.isoBMFFLargestDerivedCanvas(after: ftyp.end)
    }

    /// See ``ISOBMFFItems/hasValidLocations(_:)``; `true` when there is no `iloc`.
    static func isoBMFFValidLocations(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let sniffer = HeaderSniffer(bytes, wantsDetails: true)
        guard let ftyp = sniffer.bmffBox(at: 0, limit: bytes.count), ftyp.type == 0x6674_7970, // ftyp
              let meta = sniffer.bmffChild(named: 0x6D65_7461, from: ftyp.end, to: sniffer.reader.count), // meta
              let iloc = sniffer.bmffChild(named: 0x696C_6F63, from: meta.payload + 4, to: meta.end) else { return true } // iloc
        guard let sizes = sniffer.reader.u8(iloc.payload + 4), let sizes2 = sniffer.reader.u8(iloc.payload + 5) else { return false }
        return [sizes >> 4, sizes & 0xF, sizes2 >> 4, sizes2 & 0xF].allSatisfy { [0, 4, 8].contains($0) }
            && sniffer.itemLocations(in: iloc) != nil
    }

    /// See ``ISOBMFFItems/largestItemLength(_:)``.
    static func isoBMFFLargestItemLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let sniffer = HeaderSniffer(bytes, wantsDetails: true)
        guard let ftyp = sniffer.bmffBox(at: 0, limit: bytes.count), ftyp.type == 0x6674_7970, // ftyp
              let meta = sniffer.bmffChild(named: 0x6D65_7461, from: ftyp.end, to: sniffer.reader.count) else { return nil } // meta
        guard let iloc = sniffer.bmffChild(named: 0x696C_6F63, from: meta.payload + 4, to: meta.end) else { return 0 } // iloc
        guard let locations = sniffer.itemLocations(in: iloc) else { return nil }
        return locations.values.map(\.length).max() ?? 0
    }

    /// See ``ISOBMFFItems/hasAV1Items(_:)``.
    static func isoBMFFHasItem(ofType type: UInt32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let sniffer = HeaderSniffer(bytes, wantsDetails: true)
        guard let ftyp = sniffer.bmffBox(at: 0, limit: bytes.count), ftyp.type == 0x6674_7970, // ftyp
              let meta = sniffer.bmffChild(named: 0x6D65_7461, from: ftyp.end, to: sniffer.reader.count), // meta
              let iinf = sniffer.bmffChild(named: 0x6969_6E66, from: meta.payload + 4, to: meta.end) // iinf
        else { return false }
        return sniffer.itemTypes(in: iinf)?.values.contains(type) ?? false
    }

    private func isoBMFFLargestDerivedCanvas(after offset: Int) -> Int? {
        guard let meta = bmffChild(named: 0x6D65_7461, from: offset, to: reader.count), // meta
              let descriptors = derivedDescriptors(in: meta) else { return nil }
        var largest = 0
        for descriptor in descriptors {
            guard let canvas = descriptor.isGrid ? gridCanvas(at: descriptor.start) : overlayCanvas(at: descriptor.start) else { return nil }
            largest = max(largest, canvas)
        }
        return largest
    }

    /// Where the descriptor of each derived image (`grid`, `iovl`) of `meta` starts; empty
    /// when there is no `iinf` or no derived image; `nil` when the boxes cannot be read or a
    /// descriptor cannot be found.
    func derivedDescriptors(in meta: BMFFBox) -> [(item: UInt32, isGrid: Bool, start: Int)]? {
        let children = meta.payload + 4
        guard let iinf = bmffChild(named: 0x6969_6E66, from: children, to: meta.end) else { return [] } // iinf
        guard let derived = derivedItems(in: iinf) else { return nil }
        if derived.isEmpty { return [] }
        guard let iloc = bmffChild(named: 0x696C_6F63, from: children, to: meta.end), // iloc
              let locations = itemLocations(in: iloc) else { return nil }
        let idat = bmffChild(named: 0x6964_6174, from: children, to: meta.end) // idat
        var descriptors: [(item: UInt32, isGrid: Bool, start: Int)] = []
        for (item, isGrid) in derived.sorted(by: { $0.key < $1.key }) {
            guard let location = locations[item] else { return nil }
            switch location.method {
            case 0:
                descriptors.append((item, isGrid, location.offset))
            case 1:
                guard let idat else { return nil }
                descriptors.append((item, isGrid, idat.payload + location.offset))
            default:
                return nil
            }
        }
        return descriptors
    }

    /// The `grid` (true) and `iovl` (false) items listed in `iinf`; `nil` if it is malformed.
    private func derivedItems(in iinf: BMFFBox) -> [UInt32: Bool]? {
        itemTypes(in: iinf)?.compactMapValues { type in
            switch type {
            case 0x6772_6964: true // grid
            case 0x696F_766C: false // iovl
            default: nil
            }
        }
    }

    /// The type of each item `iinf` lists (its `infe` boxes of version 2 or later; older ones
    /// name no type); `nil` if it is malformed.
    private func itemTypes(in iinf: BMFFBox) -> [UInt32: UInt32]? {
        guard let version = reader.u8(iinf.payload) else { return nil }
        var entry = iinf.payload + (version == 0 ? 6 : 8)
        var items: [UInt32: UInt32] = [:]
        for _ in 0..<Self.isoBMFFMaxEntries {
            guard let infe = bmffBox(at: entry, limit: iinf.end) else { break }
            entry = infe.end
            // infe version 2 has a 16-bit item ID, version 3 a 32-bit one.
            guard infe.type == 0x696E_6665, let infeVersion = reader.u8(infe.payload), infeVersion >= 2 else { continue }
            let wide = infeVersion >= 3
            guard let item = wide ? reader.u32be(infe.payload + 4) : reader.u16be(infe.payload + 4).map(UInt32.init),
                  let type = reader.u32be(infe.payload + (wide ? 10 : 8)) else { return nil }
            items[item] = type
        }
        return items
    }

    /// Where each item's first extent starts: the construction method (0 the file, 1 `idat`)
    /// and the offset in it, and the length of its extents together (saturated); `nil` if
    /// `iloc` is malformed, an item without extents included (the standard requires one or more).
    private func itemLocations(in iloc: BMFFBox) -> [UInt32: (method: Int, offset: Int, length: Int)]? {
        guard let version = reader.u8(iloc.payload), version <= 2,
              let sizes = reader.u8(iloc.payload + 4), let sizes2 = reader.u8(iloc.payload + 5) else { return nil }
        let offsetSize = Int(sizes >> 4), lengthSize = Int(sizes & 0xF), baseSize = Int(sizes2 >> 4)
        let indexSize = version == 0 ? 0 : Int(sizes2 & 0xF)
        var cursor = iloc.payload + 6
        guard let count = version < 2 ? reader.u16be(cursor).map(Int.init) : reader.u32be(cursor).map(Int.init) else { return nil }
        cursor += version < 2 ? 2 : 4
        var locations: [UInt32: (method: Int, offset: Int, length: Int)] = [:]
        for _ in 0..<min(count, Self.isoBMFFMaxEntries) {
            guard let item = version < 2 ? reader.u16be(cursor).map(UInt32.init) : reader.u32be(cursor) else { return nil }
            cursor += version < 2 ? 2 : 4
            var method = 0
            if version >= 1 {
                guard let word = reader.u16be(cursor) else { return nil }
                method = Int(word & 0xF)
                cursor += 2
            }
            cursor += 2 // data reference index
            guard let base = unsigned(at: cursor, size: baseSize), let extents = reader.u16be(cursor + baseSize), extents > 0 else { return nil }
            cursor += baseSize + 2
            var first: Int?
            var length = 0
            for _ in 0..<Int(extents) {
                cursor += indexSize
                guard let offset = unsigned(at: cursor, size: offsetSize),
                      let extentLength = unsigned(at: cursor + offsetSize, size: lengthSize) else { return nil }
                if first == nil { first = offset }
                let (sum, overflow) = length.addingReportingOverflow(extentLength)
                length = overflow ? .max : sum
                cursor += offsetSize + lengthSize
                guard cursor <= iloc.end else { return nil }
            }
            guard let first else { return nil }
            let (start, overflow) = base.addingReportingOverflow(first)
            guard !overflow else { return nil }
            locations[item] = (method, start, length)
        }
        return locations
    }

    /// A big-endian unsigned field of 0, 4 or 8 bytes (0 reads as 0).
    private func unsigned(at offset: Int, size: Int) -> Int? {
        switch size {
        case 0: return 0
        case 4: return reader.u32be(offset).map(Int.init)
        case 8:
            guard let high = reader.u32be(offset), let low = reader.u32be(offset + 4), high < 1 << 30 else { return nil }
            return Int(high) << 32 | Int(low)
        default: return nil
        }
    }

    /// A grid descriptor: version, flags (bit 0: 32-bit sizes), rows − 1, columns − 1, width, height.
    private func gridCanvas(at offset: Int) -> Int? {
        guard let flags = reader.u8(offset + 1) else { return nil }
        return canvas(at: offset + 4, wide: flags & 1 != 0)
    }

    /// An overlay descriptor: version, flags (bit 0: 32-bit sizes), four 16-bit fill values,
    /// width, height.
    private func overlayCanvas(at offset: Int) -> Int? {
        guard let flags = reader.u8(offset + 1) else { return nil }
        return canvas(at: offset + 10, wide: flags & 1 != 0)
    }

    private func canvas(at offset: Int, wide: Bool) -> Int? {
        let width = wide ? reader.u32be(offset).map(Int.init) : reader.u16be(offset).map(Int.init)
        let height = wide ? reader.u32be(offset + 4).map(Int.init) : reader.u16be(offset + 2).map(Int.init)
        guard let width, let height else { return nil }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? .max : pixels
    }
}
