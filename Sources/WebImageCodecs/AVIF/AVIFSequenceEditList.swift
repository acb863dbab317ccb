/// Writes an animation's loop count into the image sequence libavif 0.11 wrote, which stores
/// none: one edit of the whole sequence (`edts/elst`, ISO/IEC 23008-12 §9.6.1) in every track,
/// as libavif 1.x writes it and as ``ISOBMFFSequence/plays(_:)`` (and libavif 1.x, and so
/// Chromium) reads it back:
///
/// - 1 play: an edit without the repeat flag;
/// - N plays: the repeat flag, and the tracks' (and the movie's) duration N segments;
/// - 0 (forever), or N segments too long for the duration fields: the repeat flag and an
///   indefinite duration (all ones).
///
/// Inserting the boxes moves `mdat`, which follows `moov` in libavif's files, so every offset
/// into it moves by the inserted length: the tracks' `stco`/`co64` chunk offsets and the
/// `meta` box's `iloc` extents (libavif also stores the first frame as the primary item). A
/// layout this does not expect (no `moov`, `mdat` before it, 64-bit box sizes, an edit list
/// already there) leaves the file as it is, which readers play forever.
enum AVIFSequenceEditList {
    private static let containers: Set<UInt32> = [fourCC("moov"), fourCC("trak"), fourCC("mdia"), fourCC("minf"), fourCC("stbl")]

    /// `file` with the edit list for `plays` (0 = forever), or `nil` when its layout is not one
    /// this can rewrite.
    static func inserting(plays: Int, into file: [UInt8]) -> [UInt8]? {
        var bytes = file
        guard let top = BoxList(bytes, from: 0, to: bytes.count),
              let moov = top.first("moov"), let mdat = top.first("mdat"), mdat.start >= moov.end,
              let moovChildren = BoxList(bytes, from: moov.payload, to: moov.end),
              let mvhd = moovChildren.first("mvhd"), let movieDuration = durationField(bytes, mvhd, isTrack: false)
        else { return nil }
        let tracks = moovChildren.boxes.filter { $0.type == fourCC("trak") }
        guard !tracks.isEmpty else { return nil }
        let segment = movieDuration.read(bytes)
        guard segment > 0 else { return nil }
        let edit = editBox(repeats: plays != 1, segment: segment)
        let delta = edit.count * tracks.count
        let (total, overflow) = segment.multipliedReportingOverflow(by: UInt64(max(plays, 1)))
        let duration = plays == 0 || overflow ? UInt64.max : total

        // Durations and offsets first, while the layout is still the source's.
        movieDuration.write(duration, into: &bytes)
        var insertions: [(at: Int, trak: Box)] = []
        for trak in tracks {
            guard let children = BoxList(bytes, from: trak.payload, to: trak.end), children.first("edts") == nil,
                  let tkhd = children.first("tkhd"), let trackDuration = durationField(bytes, tkhd, isTrack: true),
                  let mdia = children.first("mdia"),
                  shiftChunkOffsets(in: trak, by: delta, past: moov.end, of: &bytes)
            else { return nil }
            trackDuration.write(duration, into: &bytes)
            insertions.append((mdia.start, trak))
        }
        if let meta = top.first("meta") {
            guard meta.end - meta.payload >= 4, let metaChildren = BoxList(bytes, from: meta.payload + 4, to: meta.end) else { return nil }
            if let iloc = metaChildren.first("iloc") {
                guard ItemLocations.shift(iloc, by: delta, past: moov.end, of: &bytes) else { return nil }
            }
        }

        // Then the edits, each before its track's `mdia`, and the sizes that grow.
        guard setSize(of: moov, to: moov.end - moov.start + delta, in: &bytes) else { return nil }
        for (_, trak) in insertions {
            guard setSize(of: trak, to: trak.end - trak.start + edit.count, in: &bytes) else { return nil }
        }
        for (at, _) in insertions.reversed() {
            bytes.insert(contentsOf: edit, at: at)
        }
        return bytes
    }

    /// `edts` holding an `elst` of one edit: the whole sequence from media time 0 at rate 1,
    /// repeating or not (bit 0 of the flags). Version 1 only where the segment needs 64 bits.
    static func editBox(repeats: Bool, segment: UInt64) -> [UInt8] {
        let wide = segment > UInt64(UInt32.max)
        var elst: [UInt8] = [wide ? 1 : 0, 0, 0, repeats ? 1 : 0]
        elst += bigEndian(1, width: 4) // entry count
        elst += bigEndian(segment, width: wide ? 8 : 4)
        elst += [UInt8](repeating: 0, count: wide ? 8 : 4) // media time 0
        elst += [0, 1, 0, 0] // media rate 1.0
        let elstBox = bigEndian(UInt64(8 + elst.count), width: 4) + fourCCBytes("elst") + elst
        return bigEndian(UInt64(8 + elstBox.count), width: 4) + fourCCBytes("edts") + elstBox
    }

    /// Adds `delta` to every chunk offset past `threshold` in the `stco`/`co64` boxes under `trak`.
    private static func shiftChunkOffsets(in trak: Box, by delta: Int, past threshold: Int, of bytes: inout [UInt8]) -> Bool {
        var pending = [trak]
        while let parent = pending.popLast() {
            guard let list = BoxList(bytes, from: parent.payload, to: parent.end) else { return false }
            for box in list.boxes {
                if containers.contains(box.type) {
                    pending.append(box)
                } else if box.type == fourCC("stco") || box.type == fourCC("co64") {
                    let width = box.type == fourCC("co64") ? 8 : 4
                    let room = box.end - box.payload - 8 // after the version, flags and entry count
                    guard room >= 0, let count = read(bytes, at: box.payload + 4, width: 4),
                          count <= UInt64(room / width) else { return false }
                    for index in 0..<Int(count) {
                        let at = box.payload + 8 + index * width
                        guard shift(at: at, width: width, by: delta, past: threshold, in: &bytes) else { return false }
                    }
                }
            }
        }
        return true
    }

    /// Where `mvhd`'s or `tkhd`'s duration is: after the version and flags, the two times and
    /// the timescale (`mvhd`) or the track ID and a reserved word (`tkhd`); 32 bits in version
    /// 0, 64 in version 1.
    private static func durationField(_ bytes: [UInt8], _ box: Box, isTrack: Bool) -> Field? {
        let field: Field
        switch bytes[safe: box.payload] {
        case 0?: field = Field(offset: box.payload + (isTrack ? 20 : 16), width: 4)
        case 1?: field = Field(offset: box.payload + (isTrack ? 28 : 24), width: 8)
        default: return nil
        }
        return field.offset + field.width <= box.end ? field : nil
    }

    private static func setSize(of box: Box, to size: Int, in bytes: inout [UInt8]) -> Bool {
        guard size <= Int(UInt32.max) else { return false }
        Field(offset: box.start, width: 4).write(UInt64(size), into: &bytes)
        return true
    }
}

extension AVIFSequenceEditList {
    /// An unsigned big-endian field of 4 or 8 bytes.
    struct Field {
        var offset: Int
        var width: Int

        func read(_ bytes: [UInt8]) -> UInt64 {
            AVIFSequenceEditList.read(bytes, at: offset, width: width) ?? 0
        }

        /// Writes `value`, or all ones (indefinite) when it does not fit.
        func write(_ value: UInt64, into bytes: inout [UInt8]) {
            let limit: UInt64 = width == 8 ? .max : UInt64(UInt32.max)
            bytes.replaceSubrange(offset..<offset + width, with: bigEndian(min(value, limit), width: width))
        }
    }

    /// One box: where it starts, where its payload starts and where it ends.
    struct Box {
        var type: UInt32
        var start: Int
        var payload: Int
        var end: Int
    }

    /// The boxes that fill `start..<end` exactly, or `nil` when a size is 64-bit, open-ended
    /// or runs past `end`.
    struct BoxList {
        var boxes: [Box] = []

        init?(_ bytes: [UInt8], from start: Int, to end: Int) {
            var offset = start
            while offset < end {
                guard let size = AVIFSequenceEditList.read(bytes, at: offset, width: 4), size >= 8,
                      let type = AVIFSequenceEditList.read(bytes, at: offset + 4, width: 4),
                      offset + Int(size) <= end else { return nil }
                boxes.append(Box(type: UInt32(type), start: offset, payload: offset + 8, end: offset + Int(size)))
                offset += Int(size)
            }
        }

        func first(_ name: String) -> Box? {
            boxes.first { $0.type == fourCC(name) }
        }
    }

    static func read(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64? {
        guard offset >= 0, offset + width <= bytes.count else { return nil }
        return bytes[offset..<offset + width].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Adds `delta` to the field at `at` when its value points past `threshold`.
    static func shift(at offset: Int, width: Int, by delta: Int, past threshold: Int, in bytes: inout [UInt8]) -> Bool {
        guard let value = read(bytes, at: offset, width: width) else { return false }
        guard value >= UInt64(threshold) else { return true }
        let (shifted, overflow) = value.addingReportingOverflow(UInt64(delta))
        guard !overflow, width == 8 || shifted <= UInt64(UInt32.max) else { return false }
        bytes.replaceSubrange(offset..<offset + width, with: bigEndian(shifted, width: width))
        return true
    }

    static func bigEndian(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - $0))) }
    }

    static func fourCC(_ name: String) -> UInt32 {
        name.utf8.reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func fourCCBytes(_ name: String) -> [UInt8] {
        Array(name.utf8)
    }
}

private extension Array where Element == UInt8 {
    subscript(safe index: Int) -> UInt8? {
        indices.contains(index) ? self[index] : nil
    }
}
