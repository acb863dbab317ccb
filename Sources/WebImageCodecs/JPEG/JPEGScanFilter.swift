import Foundation

/// Makes 1/8-scale thumbnails of progressive JPEGs fast. At 1/8 scale libjpeg computes each
/// 8×8 block of a full-resolution component as one pixel from its DC coefficient alone, so
/// that component's AC scans, which hold most of a progressive file's bytes and decoding time,
/// cannot change the result. This walks the file's markers and drops those AC scans (keeping
/// every scan of subsampled chroma, which libjpeg decodes at 2×2 from AC coefficients too).
/// Decoding the rest with block smoothing off gives the same pixels as decoding the whole file
/// at 1/8: the tests compare them byte for byte on every progressive corpus file.
///
/// Smoothing must be off because, with a component's AC data gone, libjpeg-turbo would
/// interpolate its DC values; in the whole file the AC data is there, so it does not. Where
/// the whole-file decode would smooth (a component without AC scans, coefficients never fully
/// refined, a truncated file), the file is left alone.
enum JPEGScanFilter {
    private struct Component {
        var id: UInt8
        var horizontal: Int
        var vertical: Int
        /// The IDCT size libjpeg uses for this component at 1/8 scale.
        var scaledSize = 1
        var hasACScan = false
        /// Whether coefficients 0...9 (zigzag order: those block smoothing looks at) are
        /// fully refined (some scan covering them has Al = 0).
        var refined = [Bool](repeating: false, count: 10)
    }

    /// An SOS header: the frame components the scan codes (indices into the frame's
    /// components), its spectral selection (Ss...Se) and its successive approximation's low bit.
    private struct Scan {
        var indices: [Int]
        var spectralStart: Int
        var spectralEnd: Int
        var low: UInt8
    }

    /// The file without the AC scans a 1/8-scale decode does not use, or `nil` when there is
    /// nothing to remove, or the result might differ from a whole-file decode, or the file is
    /// not plainly structured (garbage between segments, truncation, more scans than the
    /// decoder accepts): the caller then decodes the file as it is.
    static func dcScansOnly(_ bytes: UnsafeRawBufferPointer) -> Data? {
        let count = bytes.count
        guard count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var output = Data()
        var components: [Component] = []
        var copiedUpTo = 0          // bytes[..<copiedUpTo] are in `output` or deliberately dropped
        var index = 2
        var scans = 0
        var skippedAny = false
        var sawEnd = false

        func u16(_ at: Int) -> Int? {
            at + 1 < count ? Int(bytes[at]) << 8 | Int(bytes[at + 1]) : nil
        }

        while index < count {
            guard bytes[index] == 0xFF else { return nil }
            var markerAt = index
            while markerAt + 1 < count, bytes[markerAt + 1] == 0xFF { markerAt += 1 } // fill bytes
            guard markerAt + 1 < count else { return nil }
            let marker = bytes[markerAt + 1]
            if marker == 0xD9 {
                sawEnd = true
                break
            }
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                index = markerAt + 2
                continue
            }
            guard let length = u16(markerAt + 2), length >= 2 else { return nil }
            let segmentEnd = markerAt + 2 + length
            guard segmentEnd <= count else { return nil }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                guard components.isEmpty, let frame = frameComponents(bytes, markerAt: markerAt, length: length) else { return nil }
                components = frame
            }
            guard marker == 0xDA else {
                index = segmentEnd
                continue
            }
            // SOS: its header, then the entropy-coded data, which is dropped when it is one
            // full-resolution component's AC scan.
            scans += 1
            guard scans <= 500, !components.isEmpty,
                  let scan = scanHeader(bytes, markerAt: markerAt, length: length, components: components),
                  let dataEnd = entropyCodedDataEnd(bytes, from: segmentEnd) else { return nil }
            record(scan, in: &components)
            if scan.spectralStart > 0, scan.indices.count == 1, components[scan.indices[0]].scaledSize == 1 {
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[copiedUpTo..<markerAt]))
                copiedUpTo = dataEnd
                skippedAny = true
            }
            index = dataEnd
        }
        guard sawEnd, skippedAny, decodesWithoutSmoothing(components) else { return nil }
        output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[copiedUpTo..<count]))
        return output
    }

    /// The components of an SOFn segment (precision, height, width, component count, then id,
    /// sampling and table of each), each with the IDCT size libjpeg gives it at 1/8 scale;
    /// `nil` when the segment is malformed or a sampling factor is outside 1...4.
    private static func frameComponents(_ bytes: UnsafeRawBufferPointer, markerAt: Int, length: Int) -> [Component]? {
        guard length >= 8 else { return nil }
        let componentCount = Int(bytes[markerAt + 9])
        guard componentCount > 0, length == 8 + 3 * componentCount else { return nil }
        var components: [Component] = (0..<componentCount).map { component in
            let sampling = bytes[markerAt + 11 + 3 * component]
            return Component(id: bytes[markerAt + 10 + 3 * component], horizontal: Int(sampling >> 4), vertical: Int(sampling & 15))
        }
        guard components.allSatisfy({ (1...4).contains($0.horizontal) && (1...4).contains($0.vertical) }) else { return nil }
        // libjpeg scales subsampled components up by the IDCT rather than by upsampling
        // where the sampling ratios allow (jdmaster.c); replicate its choice at 1/8.
        let maxH = components.map(\.horizontal).max()!, maxV = components.map(\.vertical).max()!
        for component in components.indices {
            var size = 1
            while size < 8, maxH % (components[component].horizontal * size * 2) == 0,
                  maxV % (components[component].vertical * size * 2) == 0 {
                size *= 2
            }
            components[component].scaledSize = size
        }
        return components
    }

    /// The header of an SOS segment (component count, 2 bytes per component, then Ss, Se,
    /// Ah/Al); `nil` when it is malformed, names a component the frame does not have, or its
    /// spectral selection is out of order or past coefficient 63.
    private static func scanHeader(_ bytes: UnsafeRawBufferPointer, markerAt: Int, length: Int, components: [Component]) -> Scan? {
        guard length >= 6 else { return nil }
        let scanComponents = Int(bytes[markerAt + 4])
        guard scanComponents > 0, length == 6 + 2 * scanComponents else { return nil }
        let spectralStart = Int(bytes[markerAt + 5 + 2 * scanComponents])
        let spectralEnd = Int(bytes[markerAt + 6 + 2 * scanComponents])
        let low = bytes[markerAt + 7 + 2 * scanComponents] & 15
        var indices: [Int] = []
        for component in 0..<scanComponents {
            guard let found = components.firstIndex(where: { $0.id == bytes[markerAt + 5 + 2 * component] }) else { return nil }
            indices.append(found)
        }
        guard spectralStart <= spectralEnd, spectralEnd < 64 else { return nil }
        return Scan(indices: indices, spectralStart: spectralStart, spectralEnd: spectralEnd, low: low)
    }

    /// Where the entropy-coded data that starts at `start` ends: at the next marker other than
    /// a stuffed 0xFF00 or RSTn (fill bytes skipped); `nil` when the file ends first.
    private static func entropyCodedDataEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = bytes.count
        var dataEnd = start
        while true {
            guard dataEnd < count, let found = memchr(bytes.baseAddress! + dataEnd, 0xFF, count - dataEnd) else { return nil }
            dataEnd = bytes.baseAddress!.distance(to: UnsafeRawPointer(found))
            guard dataEnd + 1 < count else { return nil }
            let next = bytes[dataEnd + 1]
            if next != 0x00, next != 0xFF, !(0xD0...0xD7).contains(next) { return dataEnd }
            dataEnd += next == 0xFF ? 1 : 2
        }
    }

    /// Notes what `scan` brings its components: AC coefficients (Ss > 0), and which of
    /// coefficients 0...9 it refines fully (Al = 0).
    private static func record(_ scan: Scan, in components: inout [Component]) {
        for found in scan.indices {
            if scan.spectralStart > 0 { components[found].hasACScan = true }
            if scan.low == 0, scan.spectralStart < 10 {
                for k in scan.spectralStart...min(scan.spectralEnd, 9) { components[found].refined[k] = true }
            }
        }
    }

    /// Whether the filtered file decodes to the whole file's pixels: without AC scans the
    /// whole-file decode would interpolate DC values, so every component needs one; components
    /// kept whole must not be smoothed there either (all of 0...9 refined); every DC final.
    private static func decodesWithoutSmoothing(_ components: [Component]) -> Bool {
        for component in components {
            guard component.hasACScan, component.refined[0] else { return false }
            if component.scaledSize > 1, !component.refined.allSatisfy({ $0 }) { return false }
        }
        return true
    }
}
