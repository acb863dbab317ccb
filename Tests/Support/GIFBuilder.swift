import Foundation

/// GIF files from their parts, with a plain LZW encoder.
public enum GIFBuilder {
    public static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }

    /// GIF's variable-width LZW: clear code first, codes growing to 12 bits, a clear code
    /// whenever the table fills, end code last.
    public static func lzw(_ indices: [UInt8], minimumCodeSize: Int) -> [UInt8] {
        let clear = 1 << minimumCodeSize, end = clear + 1
        var table: [[UInt8]: Int] = [:]
        var next = end + 1, width = minimumCodeSize + 1
        var bits: UInt32 = 0, count = 0
        var out: [UInt8] = []
        func emit(_ code: Int) {
            bits |= UInt32(code) << UInt32(count)
            count += width
            while count >= 8 {
                out.append(UInt8(bits & 0xFF))
                bits >>= 8
                count -= 8
            }
        }
        func reset() {
            table = [:]
            for index in 0..<clear { table[[UInt8(index)]] = index }
            next = end + 1
            width = minimumCodeSize + 1
        }
        reset()
        emit(clear)
        var current: [UInt8] = []
        for index in indices {
            let extended = current + [index]
            if table[extended] != nil {
                current = extended
                continue
            }
            emit(table[current]!)
            if next < 4096 {
                table[extended] = next
                next += 1
                if next > (1 << width), width < 12 { width += 1 }
            } else {
                emit(clear)
                reset()
            }
            current = [index]
        }
        if !current.isEmpty { emit(table[current]!) }
        emit(end)
        if count > 0 { out.append(UInt8(bits & 0xFF)) }
        return out
    }

    /// Data sub-blocks of at most 255 bytes and the terminator.
    public static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < data.count {
            let count = min(255, data.count - offset)
            out.append(UInt8(count))
            out += data[offset..<(offset + count)]
            offset += count
        }
        return out + [0]
    }

    public struct Frame {
        public var x = 0
        public var y = 0
        public var width: Int
        public var height: Int
        /// Palette indices, row by row in display order.
        public var indices: [UInt8]
        public var localPalette: [[UInt8]]? = nil
        public var interlaced = false
        /// When set, a graphic control extension precedes the image.
        public var control: (disposal: Int, delay: Int, transparent: Int?)? = nil

        public init(
            x: Int = 0, y: Int = 0, width: Int, height: Int, indices: [UInt8], localPalette: [[UInt8]]? = nil,
            interlaced: Bool = false, control: (disposal: Int, delay: Int, transparent: Int?)? = nil
        ) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
            self.indices = indices
            self.localPalette = localPalette
            self.interlaced = interlaced
            self.control = control
        }
    }

    public static func palette(_ colours: [[UInt8]]) -> (bytes: [UInt8], sizeField: UInt8) {
        var size = 1
        while (2 << size) < colours.count { size += 1 }
        let padded = colours + Array(repeating: [0, 0, 0], count: (2 << size) - colours.count)
        return (padded.flatMap { $0 }, UInt8(size))
    }

    public static func image(_ frame: Frame) -> [UInt8] {
        var out: [UInt8] = []
        if let control = frame.control {
            let packed = UInt8(control.disposal << 2) | (control.transparent != nil ? 1 : 0)
            out += [0x21, 0xF9, 4, packed] + le16(control.delay) + [UInt8(control.transparent ?? 0), 0]
        }
        var flags: UInt8 = frame.interlaced ? 0x40 : 0
        var local: [UInt8] = []
        if let colours = frame.localPalette {
            let table = palette(colours)
            flags |= 0x80 | table.sizeField
            local = table.bytes
        }
        out += [0x2C] + le16(frame.x) + le16(frame.y) + le16(frame.width) + le16(frame.height) + [flags] + local
        var ordered = frame.indices
        if frame.interlaced {
            var rows: [Int] = []
            for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] { rows += Array(stride(from: start, to: frame.height, by: step)) }
            ordered = rows.flatMap { frame.indices[($0 * frame.width)..<(($0 + 1) * frame.width)] }
        }
        out += [8] + subBlocks(lzw(ordered, minimumCodeSize: 8))
        return out
    }

    public static func netscape(loop: Int) -> [UInt8] {
        [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + le16(loop) + [0]
    }

    /// A GIF89a: screen, optional global palette, `blocks` (images, extensions) and trailer.
    public static func gif(width: Int, height: Int, globalPalette: [[UInt8]]? = [[0, 0, 0], [255, 255, 255]],
                    background: Int = 0, blocks: [[UInt8]], trailer: Bool = true) -> [UInt8] {
        var out = Array("GIF89a".utf8) + le16(width) + le16(height)
        if let globalPalette {
            let table = palette(globalPalette)
            out += [0x80 | table.sizeField, UInt8(background), 0] + table.bytes
        } else {
            out += [0, UInt8(background), 0]
        }
        out += blocks.flatMap { $0 }
        return trailer ? out + [0x3B] : out
    }
}
