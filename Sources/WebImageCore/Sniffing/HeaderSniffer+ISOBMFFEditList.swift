/// How many times an ISO-BMFF image sequence (an animated AVIF) plays, from its edit list: what
/// libavif 1.x reports as `repetitionCount`, which Debian's libavif 0.11 does not read.
package enum ISOBMFFSequence {
    /// The plays of the sequence's colour track, as ``AnimatedImage/loopCount`` counts them
    /// (0 = forever), following ISO/IEC 23008-12 §9.6.1 and libavif 1.x:
    ///
    /// - an `elst` without the repeat flag (bit 0 of its flags): the edit plays once, 1;
    /// - with the flag, the edit repeats until it fills the track's duration (`tkhd`, in the
    ///   movie's timescale like the edit's `segment_duration`): ⌈track ÷ segment⌉ plays, or 0
    ///   (forever) when the track's duration is indefinite (all ones) or the count passes
    ///   `Int32.max` (libavif's infinite);
    /// - `nil` when the colour track has no `edts`, or an edit list libavif 1.x would refuse
    ///   (no `elst`, a repeating list of other than one entry, a `segment_duration` or track
    ///   duration of 0, an unknown version), or the boxes cannot be read. The caller decides
    ///   what that means; libavif calls it unknown.
    ///
    /// The colour track is the first `trak` that is not an auxiliary track (a `tref` with
    /// `auxl`: the alpha plane's).
    package static func plays(_ bytes: UnsafeRawBufferPointer) -> Int? {
        HeaderSniffer(bytes, wantsDetails: true).isoBMFFSequencePlays()
    }
}

extension HeaderSniffer {
    /// See ``ISOBMFFSequence/plays(_:)``.
    func isoBMFFSequencePlays() -> Int? {
        guard let ftyp = bmffBox(at: 0, limit: reader.count), ftyp.type == FourCC.ftyp,
              let moov = bmffChild(named: 0x6D6F_6F76, from: ftyp.end, to: reader.count), // moov
              let track = colourTrack(in: moov),
              let edts = bmffChild(named: 0x6564_7473, from: track.payload, to: track.end), // edts
              let elst = bmffChild(named: 0x656C_7374, from: edts.payload, to: edts.end), // elst
              let version = reader.u8(elst.payload), let flags = reader.u8(elst.payload + 3)
        else { return nil }
        guard flags & 1 != 0 else { return 1 }
        guard version <= 1, reader.u32be(elst.payload + 4) == 1,
              let segment = version == 1 ? u64be(elst.payload + 8) : reader.u32be(elst.payload + 8).map(UInt64.init), segment > 0,
              let tkhd = bmffChild(named: 0x746B_6864, from: track.payload, to: track.end), // tkhd
              let duration = trackDuration(tkhd), duration > 0
        else { return nil }
        if duration == .max { return 0 }
        let plays = duration / segment + (duration % segment == 0 ? 0 : 1)
        return plays - 1 > UInt64(Int32.max) ? 0 : Int(plays)
    }

    /// The first `trak` in `moov` without an `auxl` track reference.
    func colourTrack(in moov: BMFFBox) -> BMFFBox? {
        var offset = moov.payload
        for _ in 0..<Self.isoBMFFMaxEntries {
            guard let box = bmffBox(at: offset, limit: moov.end) else { return nil }
            offset = box.end
            guard box.type == 0x7472_616B else { continue } // trak
            if let tref = bmffChild(named: 0x7472_6566, from: box.payload, to: box.end), // tref
               bmffChild(named: 0x6175_786C, from: tref.payload, to: tref.end) != nil { // auxl
                continue
            }
            return box
        }
        return nil
    }

    /// A `tkhd`'s duration, widened to 64 bits: version 1 stores 64, version 0 32 bits, where
    /// all ones (indefinite) becomes `UInt64.max`.
    private func trackDuration(_ tkhd: BMFFBox) -> UInt64? {
        // Version and flags; creation and modification times, track ID, a reserved word.
        switch reader.u8(tkhd.payload) {
        case 1: return u64be(tkhd.payload + 28)
        case 0: return reader.u32be(tkhd.payload + 20).map { $0 == .max ? .max : UInt64($0) }
        default: return nil
        }
    }

    private func u64be(_ offset: Int) -> UInt64? {
        guard let high = reader.u32be(offset), let low = reader.u32be(offset + 4) else { return nil }
        return UInt64(high) << 32 | UInt64(low)
    }
}
