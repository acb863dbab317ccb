/// What the derived images (grids and overlays) of an ISO-BMFF file ask a decoder to do, read
/// from the item boxes before libavif or libheif parses them.
///
/// A grid's decoder decodes every tile before it composes the canvas, and the canvas's own
/// size says nothing of the tiles' number or size: a 451 KB AVIF declaring a 96 × 64 image made
/// of 100 × 100 tiles passed every limit, and libavif 0.11 (one AV1 decoder per tile) passed
/// 3 GB of memory before it looked at the grid. So the tiles are counted and their sizes added
/// from the boxes first, and a file whose tiles are too many or too large is refused before any
/// of them is decoded.
package struct ISOBMFFTileCensus: Sendable, Hashable {
    /// The items `iinf` declares (its entry count, not the entries read).
    package var declaredItems: Int
    /// The most coded images any one derived item is made of: the larger of a grid's rows ×
    /// columns and its `dimg` references. `0` when the file has no derived image.
    package var largestTileCount: Int
    /// The most pixels (the sum of their `ispe` sizes) of the coded images any one derived item
    /// is made of. `0` when the file has no derived image.
    package var largestTilePixels: Int
    /// Whether a derived image is made of derived images, itself included (a grid among its own
    /// tiles): libheif 1.15 decodes such a chain recursively, a thread a level, until it cannot
    /// start one and the process aborts (fuzz finding #19, a 666-byte HEIC).
    package var hasNestedDerivation = false
}

extension ISOBMFFItems {
    /// The census of `bytes`' derived images (see ``ISOBMFFTileCensus``); `nil` when its item
    /// boxes cannot be read, or a derived image's input has no `ispe` (every image item must
    /// have one, ISO/IEC 23008-12 6.5.3.1): the decoders then refuse the file rather than guess.
    package static func tileCensus(_ bytes: UnsafeRawBufferPointer) -> ISOBMFFTileCensus? {
        let sniffer = HeaderSniffer(bytes, wantsDetails: true)
        guard let ftyp = sniffer.bmffBox(at: 0, limit: bytes.count), ftyp.type == 0x6674_7970 else { return nil } // ftyp
        return sniffer.isoBMFFTileCensus(after: ftyp.end)
    }

    /// Refuses, as ``ImageError/tooLarge(_:)``, a file whose census passes the limits a decode
    /// with `options` allows: more items than the parser reads (``HeaderSniffer/isoBMFFMaxEntries``),
    /// a derived image of more than ``ImageDecodingOptions/maximumTileCount`` tiles, or tiles
    /// together larger than twice ``ImageDecodingOptions/maximumPixelCount`` and a 64 × 64 block
    /// a tile (a grid's tiles cover its canvas and may overhang it; an alpha grid has tiles of
    /// its own, counted apart).
    /// ``ImageError/corruptData(_:)`` when the boxes cannot be read. `format` names the file in
    /// the messages.
    package static func checkTiles(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions, format: String) throws {
        guard let census = tileCensus(bytes) else {
            throw ImageError.corruptData("\(format): the item boxes cannot be read (or a tile has no size)")
        }
        guard !census.hasNestedDerivation else {
            throw ImageError.corruptData("\(format): a grid or overlay whose inputs are derived images (itself, or another grid)")
        }
        guard census.declaredItems <= HeaderSniffer.isoBMFFMaxEntries else {
            throw ImageError.tooLarge("\(format): \(census.declaredItems) items exceed the limit of \(HeaderSniffer.isoBMFFMaxEntries)")
        }
        guard census.largestTileCount <= options.maximumTileCount else {
            throw ImageError.tooLarge("\(format): a grid of \(census.largestTileCount) tiles exceeds the limit of \(options.maximumTileCount) tiles")
        }
        // Twice the pixel limit, and a 64 × 64 block a tile: encoders code whole blocks (libheif
        // writes a 48 × 32 image as one 64 × 64 tile).
        let (twice, overflow1) = options.maximumPixelCount.multipliedReportingOverflow(by: 2)
        let (pixelLimit, overflow2) = twice.addingReportingOverflow(census.largestTileCount * 4096)
        guard overflow1 || overflow2 || census.largestTilePixels <= pixelLimit else {
            throw ImageError.tooLarge(
                "\(format): a grid's tiles of \(census.largestTilePixels) pixels together exceed the limit of \(pixelLimit) (twice \(options.maximumPixelCount), and 4096 a tile)")
        }
    }
}

extension HeaderSniffer {
    func isoBMFFTileCensus(after offset: Int) -> ISOBMFFTileCensus? {
        guard let meta = bmffChild(named: 0x6D65_7461, from: offset, to: reader.count) else { return nil } // meta
        let children = meta.payload + 4
        guard let iinf = bmffChild(named: 0x6969_6E66, from: children, to: meta.end), // iinf
              let iinfVersion = reader.u8(iinf.payload),
              let declared = iinfVersion == 0 ? reader.u16be(iinf.payload + 4).map(Int.init) : reader.u32be(iinf.payload + 4).map(Int.init)
        else { return nil }
        var census = ISOBMFFTileCensus(declaredItems: declared, largestTileCount: 0, largestTilePixels: 0)
        guard declared <= Self.isoBMFFMaxEntries else { return census }
        guard let descriptors = derivedDescriptors(in: meta) else { return nil }
        if descriptors.isEmpty { return census }
        let references = bmffChild(named: 0x6972_6566, from: children, to: meta.end).flatMap(derivedImageReferences) // iref
        guard let references, let sizes = itemSizes(in: meta) else { return nil }
        let derived = Set(descriptors.map(\.item))
        for descriptor in descriptors {
            let inputs = references[descriptor.item] ?? []
            if inputs.contains(where: derived.contains) { census.hasNestedDerivation = true }
            var tiles = inputs.count
            if descriptor.isGrid {
                guard let rows = reader.u8(descriptor.start + 2), let columns = reader.u8(descriptor.start + 3) else { return nil }
                tiles = max(tiles, (Int(rows) + 1) * (Int(columns) + 1))
            }
            var pixels = 0
            for input in inputs {
                guard let size = sizes[input] else { return nil }
                let (sum, overflow) = pixels.addingReportingOverflow(size)
                pixels = overflow ? .max : sum
            }
            census.largestTileCount = max(census.largestTileCount, tiles)
            census.largestTilePixels = max(census.largestTilePixels, pixels)
        }
        return census
    }

    /// The `dimg` references of `iref`: each derived item's inputs, in order; `nil` if the box
    /// is malformed.
    private func derivedImageReferences(_ iref: BMFFBox) -> [UInt32: [UInt32]]? {
        guard let version = reader.u8(iref.payload) else { return nil }
        let idSize = version == 0 ? 2 : 4
        func id(_ at: Int) -> UInt32? { idSize == 2 ? reader.u16be(at).map(UInt32.init) : reader.u32be(at) }
        var references: [UInt32: [UInt32]] = [:]
        var offset = iref.payload + 4
        for _ in 0..<Self.isoBMFFMaxEntries {
            guard let box = bmffBox(at: offset, limit: iref.end) else { break }
            offset = box.end
            guard box.type == 0x6469_6D67 else { continue } // dimg
            guard let from = id(box.payload), let count = reader.u16be(box.payload + idSize),
                  box.payload + idSize + 2 + Int(count) * idSize <= box.end else { return nil }
            var inputs: [UInt32] = []
            inputs.reserveCapacity(Int(count))
            for index in 0..<Int(count) {
                guard let to = id(box.payload + idSize + 2 + index * idSize) else { return nil }
                inputs.append(to)
            }
            references[from, default: []] += inputs
        }
        return references
    }

    /// Each item's size in pixels, from the `ispe` property `ipma` associates with it; `nil`
    /// if the boxes are malformed. Items without an `ispe` are left out.
    private func itemSizes(in meta: BMFFBox) -> [UInt32: Int]? {
        let children = meta.payload + 4
        guard let iprp = bmffChild(named: 0x6970_7270, from: children, to: meta.end), // iprp
              let ipco = bmffChild(named: 0x6970_636F, from: iprp.payload, to: iprp.end), // ipco
              let ipma = bmffChild(named: 0x6970_6D61, from: iprp.payload, to: iprp.end) // ipma
        else { return nil }
        // The pixels of each `ispe` in `ipco`, by its 1-based index.
        var extents: [Int: Int] = [:]
        var index = 0, box = ipco.payload
        while index < Self.isoBMFFMaxEntries, let property = bmffBox(at: box, limit: ipco.end) {
            index += 1
            if property.type == 0x6973_7065 { // ispe
                guard let width = reader.u32be(property.payload + 4), let height = reader.u32be(property.payload + 8) else { return nil }
                // Two 32-bit sides can overflow a 64-bit product (fuzz finding #17): saturated.
                let (pixels, overflow) = Int(width).multipliedReportingOverflow(by: Int(height))
                extents[index] = overflow ? .max : pixels
            }
            box = property.end
        }
        guard let version = reader.u8(ipma.payload), let flags = reader.u8(ipma.payload + 3),
              let entryCount = reader.u32be(ipma.payload + 4) else { return nil }
        let width = flags & 1 != 0 ? 2 : 1
        var cursor = ipma.payload + 8
        var sizes: [UInt32: Int] = [:]
        for _ in 0..<min(Int(entryCount), Self.isoBMFFMaxEntries) {
            let item = version < 1 ? reader.u16be(cursor).map(UInt32.init) : reader.u32be(cursor)
            cursor += version < 1 ? 2 : 4
            guard let item, let count = reader.u8(cursor) else { return nil }
            cursor += 1
            for slot in 0..<Int(count) {
                // The top bit marks an essential property; the rest is the index.
                let index = width == 2 ? reader.u16be(cursor + 2 * slot).map { Int($0 & 0x7FFF) } : reader.u8(cursor + slot).map { Int($0 & 0x7F) }
                guard let index else { return nil }
                if let pixels = extents[index] { sizes[item] = pixels }
            }
            cursor += Int(count) * width
            guard cursor <= ipma.end else { return nil }
        }
        return sizes
    }
}
