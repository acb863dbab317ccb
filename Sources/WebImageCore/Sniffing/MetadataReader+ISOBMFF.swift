/// HEIF and AVIF: the transformative properties as an orientation, and a sequence's frames and
/// durations from its colour track's sample tables (`stsz`, `stts`).
extension MetadataReader {
    mutating func readISOBMFF() throws(ImageError) {
        let sniffer = HeaderSniffer(reader.bytes, wantsDetails: true)
        guard let ftyp = sniffer.bmffBox(at: 0, limit: reader.count), ftyp.type == FourCC.ftyp else { return }
        if let properties = sniffer.isoBMFFPrimaryProperties(after: ftyp.end) {
            metadata.bitDepth = sniffer.isoBMFFPrimaryBitDepth(properties)
            metadata.orientation = sniffer.isoBMFFPrimaryOrientation(properties.associated)
        }
        guard header.isAnimated == true else {
            // Without a movie box there is no track: one image, the primary item.
            if sniffer.bmffChild(named: 0x6D6F_6F76, from: ftyp.end, to: reader.count) == nil { // moov
                metadata.frameCount = 1
                metadata.isAnimated = false
            }
            return
        }
        // An AVIF sequence's plays from its edit list; without one forever, as AVIFDecoder
        // answers.
        if header.format == .avif { metadata.loopCount = sniffer.isoBMFFSequencePlays() ?? 0 }
        guard let track = sniffer.isoBMFFColourTrackTables(), let samples = sniffer.sampleCount(track) else { return }
        try checkFrameCount(samples, header.format.rawValue)
        metadata.frameCount = samples
        metadata.frameDurations = sniffer.sampleDurations(track, count: samples)
    }
}

extension HeaderSniffer {
    /// The EXIF orientation that a primary item's `irot` (quarter turns counter-clockwise) then
    /// `imir` (mode 0 exchanges top and bottom, 1 left and right) amount to, the order MIAF
    /// applies them in (`properties`: the primary item's, in `ipco` order); `.up` without
    /// either, `nil` when a box is cut short.
    func isoBMFFPrimaryOrientation(_ properties: [BMFFBox]) -> ImageOrientation? {
        var turn = OrientationMatrix.identity
        for property in properties {
            switch property.type {
            case 0x6972_6F74: // irot
                guard let angle = reader.u8(property.payload) else { return nil }
                for _ in 0..<Int(angle & 3) { turn = OrientationMatrix.counterClockwise.after(turn) }
            case 0x696D_6972: // imir
                guard let mode = reader.u8(property.payload) else { return nil }
                turn = (mode & 1 == 0 ? OrientationMatrix.topBottom : .leftRight).after(turn)
            default:
                break
            }
        }
        return ImageOrientation.allCases.first { OrientationMatrix($0) == turn }
    }

    /// The boxes of the colour track a sequence's frames are read from: its media header
    /// (`mdhd`, the timescale) and sample table (`stbl`).
    struct TrackTables {
        var mdhd: BMFFBox
        var stbl: BMFFBox
    }

    /// The colour track's ``TrackTables``, found once: `moov`, the track, `mdia`, `minf`.
    func isoBMFFColourTrackTables() -> TrackTables? {
        guard let ftyp = bmffBox(at: 0, limit: reader.count), ftyp.type == FourCC.ftyp,
              let moov = bmffChild(named: 0x6D6F_6F76, from: ftyp.end, to: reader.count), // moov
              let track = colourTrack(in: moov),
              let mdia = bmffChild(named: 0x6D64_6961, from: track.payload, to: track.end), // mdia
              let mdhd = bmffChild(named: 0x6D64_6864, from: mdia.payload, to: mdia.end), // mdhd
              let minf = bmffChild(named: 0x6D69_6E66, from: mdia.payload, to: mdia.end), // minf
              let stbl = bmffChild(named: 0x7374_626C, from: minf.payload, to: minf.end) // stbl
        else { return nil }
        return TrackTables(mdhd: mdhd, stbl: stbl)
    }

    /// The track's sample count, from its `stsz`.
    func sampleCount(_ track: TrackTables) -> Int? {
        guard let stsz = bmffChild(named: 0x7374_737A, from: track.stbl.payload, to: track.stbl.end), // stsz
              let count = reader.u32be(stsz.payload + 8), count > 0 else { return nil }
        return Int(count)
    }

    /// The first `count` sample durations (`stts`, in the `mdhd` timescale), empty when they
    /// cannot be read. Runs are expanded only up to `count`, which the caller has checked.
    func sampleDurations(_ track: TrackTables, count: Int) -> [Duration] {
        guard let version = reader.u8(track.mdhd.payload),
              let timescale = reader.u32be(track.mdhd.payload + (version == 1 ? 20 : 12)), timescale > 0,
              let stts = bmffChild(named: 0x7374_7473, from: track.stbl.payload, to: track.stbl.end), // stts
              let entries = reader.u32be(stts.payload + 4) else { return [] }
        var durations: [Duration] = []
        var cursor = stts.payload + 8
        for _ in 0..<min(Int(entries), count) where durations.count < count {
            guard cursor + 8 <= stts.end, let run = reader.u32be(cursor), let delta = reader.u32be(cursor + 4) else { return [] }
            let duration = Duration.milliseconds(Int64(delta) * 1000 / Int64(timescale))
            durations += repeatElement(duration, count: min(Int(run), count - durations.count))
            cursor += 8
        }
        return durations.count == count ? durations : []
    }
}

/// An orientation as the integer matrix that maps stored coordinates (x right, y down, about
/// the centre) to upright ones, so that turns and mirrors compose by multiplication.
private struct OrientationMatrix: Equatable {
    var a, b, c, d: Int

    static let identity = OrientationMatrix(a: 1, b: 0, c: 0, d: 1)
    static let counterClockwise = OrientationMatrix(.left)
    static let topBottom = OrientationMatrix(.downMirrored)
    static let leftRight = OrientationMatrix(.upMirrored)

    init(a: Int, b: Int, c: Int, d: Int) {
        (self.a, self.b, self.c, self.d) = (a, b, c, d)
    }

    init(_ orientation: ImageOrientation) {
        switch orientation {
        case .up: self.init(a: 1, b: 0, c: 0, d: 1)
        case .upMirrored: self.init(a: -1, b: 0, c: 0, d: 1)
        case .down: self.init(a: -1, b: 0, c: 0, d: -1)
        case .downMirrored: self.init(a: 1, b: 0, c: 0, d: -1)
        case .leftMirrored: self.init(a: 0, b: 1, c: 1, d: 0)
        case .right: self.init(a: 0, b: -1, c: 1, d: 0)
        case .rightMirrored: self.init(a: 0, b: -1, c: -1, d: 0)
        case .left: self.init(a: 0, b: 1, c: -1, d: 0)
        }
    }

    /// This transform applied after `other`.
    func after(_ other: OrientationMatrix) -> OrientationMatrix {
        OrientationMatrix(a: a * other.a + b * other.c, b: a * other.b + b * other.d,
                          c: c * other.a + d * other.c, d: c * other.b + d * other.d)
    }
}
