extension AVIFSequenceEditList {
    /// The `iloc` box (ISO/IEC 14496-12 §8.11.3): where each item's data is. Items stored in
    /// the file (construction method 0) locate their extents by file offset, a base offset plus
    /// each extent's offset; when bytes are inserted before `mdat`, the base moves when it
    /// points past the insertion, else each extent that does.
    enum ItemLocations {
        /// Adds `delta` to every file offset past `threshold` in `iloc`; `false` when the box
        /// cannot be read to its end.
        static func shift(_ iloc: Box, by delta: Int, past threshold: Int, of bytes: inout [UInt8]) -> Bool {
            guard let version = read(bytes, at: iloc.payload, width: 1), version <= 2,
                  let sizes = read(bytes, at: iloc.payload + 4, width: 2) else { return false }
            let offsetSize = Int(sizes >> 12 & 15), lengthSize = Int(sizes >> 8 & 15)
            let baseSize = Int(sizes >> 4 & 15), indexSize = version == 0 ? 0 : Int(sizes & 15)
            guard [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }) else { return false }
            let idWidth = version == 2 ? 4 : 2
            var at = iloc.payload + 6
            guard let count = read(bytes, at: at, width: idWidth) else { return false }
            at += idWidth
            for _ in 0..<count {
                at += idWidth // item ID
                var method: UInt64 = 0
                if version >= 1 {
                    guard let word = read(bytes, at: at, width: 2) else { return false }
                    method = word & 15
                    at += 2
                }
                at += 2 // data reference index
                // The base moves when it points into what moves; else each extent that does.
                let base = baseSize > 0 ? read(bytes, at: at, width: baseSize) : 0
                guard let base else { return false }
                let movesBase = method == 0 && baseSize > 0 && base >= UInt64(threshold)
                if movesBase {
                    guard AVIFSequenceEditList.shift(at: at, width: baseSize, by: delta, past: threshold, in: &bytes) else { return false }
                }
                at += baseSize
                guard let extents = read(bytes, at: at, width: 2) else { return false }
                at += 2
                for _ in 0..<extents {
                    at += indexSize
                    if method == 0, !movesBase, offsetSize > 0 {
                        guard let offset = read(bytes, at: at, width: offsetSize) else { return false }
                        let (absolute, overflow) = base.addingReportingOverflow(offset)
                        if !overflow, absolute >= UInt64(threshold) {
                            guard AVIFSequenceEditList.shift(at: at, width: offsetSize, by: delta, past: 0, in: &bytes) else { return false }
                        }
                    }
                    at += offsetSize + lengthSize
                }
                guard at <= iloc.end else { return false }
            }
            return true
        }
    }
}
