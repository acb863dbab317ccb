import Foundation

/// Writes AVIF grid files whose tiles are all one real AV1 tile, taken from a fixture made by
/// avifenc: the shape of hostile-input finding 1 (a 451 KB file declaring a 96 × 64 image made of
/// 100 × 100 tiles), which no encoder writes, at any tile count and canvas size. Each tile is an
/// item of its own whose location points at the same coded bytes, so 10,000 tiles cost about 40
/// bytes each.
///
/// The boxes follow ISO/IEC 23008-12 and MIAF as libavif 0.11 reads them: `hdlr`, `pitm`, `iloc`
/// (version 1: the grid descriptor in `idat`), `iinf`, `iref` (`dimg`), `idat`, and `iprp` with
/// the canvas's and the tiles' `ispe`, the tiles' `av1C` and a `pixi` for both.
struct AVIFGridBuilder {
    /// One coded AV1 tile (its item's bytes) and its `av1C` box, whole.
    var tilePayload: Data
    var av1CBox: Data
    var tileWidth: Int
    var tileHeight: Int

    /// The first tile of `avif-grid.avif` (64 × 64, 8-bit 4:4:4: MIAF's smallest tile), as every
    /// tile. Its extent is read from the fixture's `iloc` (version 0, 4-byte offsets and lengths,
    /// as avifenc writes it); the tests check the grids made of it against avifdec's decode.
    static func fixtureTile() throws -> AVIFGridBuilder {
        let bytes = [UInt8](try ISOBMFFTestFiles.fixture("avif-grid.avif"))
        func find(_ type: String) -> Int? {
            let pattern = Array(type.utf8)
            return (4..<bytes.count - 4).first { Array(bytes[$0..<$0 + 4]) == pattern }.map { $0 - 4 }
        }
        func u32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
        guard let av1C = find("av1C"), let iloc = find("iloc"), bytes[iloc + 8] == 0, bytes[iloc + 12] == 0x44 else {
            throw CocoaError(.fileReadCorruptFile)
        }
        // Entries of 14 bytes after the count: item, data reference, extent count, offset, length.
        // Item 1 is the grid; item 2 its first tile.
        let entry = iloc + 16 + 14
        guard bytes[entry] == 0, bytes[entry + 1] == 2 else { throw CocoaError(.fileReadCorruptFile) }
        let offset = u32(entry + 6), length = u32(entry + 10)
        return AVIFGridBuilder(
            tilePayload: Data(bytes[offset..<offset + length]), av1CBox: Data(bytes[av1C..<av1C + u32(av1C)]), tileWidth: 64, tileHeight: 64)
    }

    /// A grid of `rows` × `columns` tiles declaring a `width` × `height` canvas (its `ispe` and
    /// its descriptor agree); rows and columns 1 to 256, at most 65,534 tiles.
    func file(rows: Int, columns: Int, width: Int, height: Int) -> Data {
        let tiles = rows * columns
        precondition((1...256).contains(rows) && (1...256).contains(columns) && tiles < 65535)
        func meta(payloadOffset: Int) -> Data {
            var children = Data()
            children += fullBox("hdlr", 0, u32(0) + Data("pict".utf8) + u32(0) + u32(0) + u32(0) + [0])
            children += fullBox("pitm", 0, u16(1))
            // iloc v1: offsets and lengths of 4 bytes, no base offset or index.
            var iloc = Data([0x44, 0x00]) + u16(tiles + 1)
            iloc += u16(1) + u16(1) + u16(0) + u16(1) + u32(0) + u32(8) // the grid, in idat
            for tile in 0..<tiles {
                iloc += u16(tile + 2) + u16(0) + u16(0) + u16(1) + u32(payloadOffset) + u32(tilePayload.count)
            }
            children += fullBox("iloc", 1, iloc)
            var entries = Data()
            entries += fullBox("infe", 2, u16(1) + u16(0) + Data("grid".utf8) + [0])
            for tile in 0..<tiles { entries += fullBox("infe", 2, u16(tile + 2) + u16(0) + Data("av01".utf8) + [0]) }
            children += fullBox("iinf", 0, u16(tiles + 1) + entries)
            var dimg = u16(1) + u16(tiles)
            for tile in 0..<tiles { dimg += u16(tile + 2) }
            children += fullBox("iref", 0, box("dimg", dimg))
            children += box("idat", Data([0, 0, UInt8(rows - 1), UInt8(columns - 1)]) + u16(width) + u16(height))
            // Properties: 1 the canvas's ispe, 2 the tiles' ispe, 3 av1C, 4 pixi.
            let ipco = box("ipco", fullBox("ispe", 0, u32(width) + u32(height)) + fullBox("ispe", 0, u32(tileWidth) + u32(tileHeight))
                + av1CBox + fullBox("pixi", 0, Data([3, 8, 8, 8])))
            var ipma = u32(tiles + 1) + u16(1) + Data([2, 0x01, 0x04])
            for tile in 0..<tiles { ipma += u16(tile + 2) + Data([3, 0x02, 0x83, 0x04]) }
            children += box("iprp", ipco + fullBox("ipma", 0, ipma))
            return fullBox("meta", 0, children)
        }
        let ftyp = box("ftyp", Data("avif".utf8) + u32(0) + Data("avifmif1miaf".utf8))
        let size = meta(payloadOffset: 0).count
        return ftyp + meta(payloadOffset: ftyp.count + size + 8) + box("mdat", tilePayload)
    }

    private func box(_ type: String, _ payload: Data) -> Data {
        u32(8 + payload.count) + Data(type.utf8) + payload
    }

    private func fullBox(_ type: String, _ version: UInt8, _ payload: Data) -> Data {
        box(type, Data([version, 0, 0, 0]) + payload)
    }

    private func u16(_ value: Int) -> Data { Data([UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]) }
    private func u32(_ value: Int) -> Data { Data([UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]) }
}
