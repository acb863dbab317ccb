import WebImageCore

/// APNG's control chunks (`acTL`, `fcTL`, `fdAT`) read in file order and judged the way
/// Chromium's PNG reader (`PNGImageReader`) judges them, so a file animates here exactly
/// when it would animate in a browser.
///
/// Two kinds of fault, two answers:
/// - **The animation does not hold together** (below): the control chunks are set aside and
///   the file is the still PNG its `IDAT` chunks make, the "default image" the APNG
///   specification tells decoders without animation support to show. Frames are never played
///   out of order, with a gap, or with a duplicated `fdAT` joined in.
/// - **A chunk is damaged after the image data** (its CRC, an `fcTL` of the wrong length, a
///   frame outside the canvas, an unknown dispose or blend op, an `fdAT` too short to hold its
///   sequence number): ``ImageError/corruptData(_:)``, as Chromium fails such a file.
///
/// What sets the animation aside:
/// - `acTL` that is malformed, declares 0 frames or more than 2³¹ − 1 frames or plays, or is
///   not the first `acTL` (a duplicate turns the animation off, as in Chromium: neither copy
///   is trusted);
/// - before the image data: an `fcTL` that is malformed, does not cover the canvas, or
///   follows another `fcTL`, and any `fdAT` (Chromium);
/// - sequence numbers that do not run 0, 1, 2, … over `fcTL` and `fdAT` chunks in file order;
/// - a complete file whose `fcTL` count differs from `acTL`'s frame count, or a truncated one
///   with more `fcTL` chunks than declared. Chromium fails a file with such faults found
///   after the image data; the default image is shown here instead, because it is always
///   there to show, and a download whose animation chunks are wrong still has a picture.
///
/// An `fcTL` before `acTL` (both before `IDAT`) makes the default image the first frame, as
/// if the two came in the usual order: Chromium reads `fcTL` before the image data without
/// asking whether `acTL` came yet. An `fdAT` holding only its sequence number is legal and
/// adds no data.
struct APNGChunks {
    /// `acTL`'s frame count and plays, once a valid one has been read before the image data.
    private var control: (frameCount: Int, plays: Int)?
    private var frames: [PNGFile.Frame] = []
    private var nextSequence = 0
    private var sawControl = false
    /// Why the control chunks were set aside; `nil` while they still describe an animation.
    private(set) var ignoredBecause: String?

    /// A valid `acTL` came before the image data and nothing has set the animation aside yet.
    var declaresAnimation: Bool { control != nil && ignoredBecause == nil }

    /// The largest frame count, sequence number and play count the APNG specification allows.
    static let limit = 0x7FFF_FFFF

    mutating func readAnimationControl(_ data: Range<Int>, in bytes: UnsafeRawBufferPointer, beforeImage: Bool) {
        guard ignoredBecause == nil else { return }
        // acTL after the image data does not make an APNG (the APNG spec); in one it is a duplicate.
        guard beforeImage else {
            if control != nil { ignore("a second acTL after the image data") }
            return
        }
        guard !sawControl else { return ignore("more than one acTL") }
        sawControl = true
        guard data.count == 8, PNGFile.crcMatches(data, in: bytes) else { return ignore("acTL is malformed") }
        let frameCount = Int(bytes.be32(data.lowerBound)), plays = Int(bytes.be32(data.lowerBound + 4))
        guard (1...Self.limit).contains(frameCount), plays <= Self.limit else {
            return ignore("acTL declares \(frameCount) frames and \(plays) plays")
        }
        control = (frameCount, plays)
    }

    mutating func readFrameControl(_ data: Range<Int>, in bytes: UnsafeRawBufferPointer, canvas: PNGFile.Header, beforeImage: Bool) throws {
        guard ignoredBecause == nil, beforeImage || control != nil else { return }
        guard data.count == 26, PNGFile.crcMatches(data, in: bytes) else {
            if beforeImage { return ignore("the fcTL before the image data is malformed") }
            throw ImageError.corruptData("APNG: fcTL \(frames.count) is malformed or its CRC does not match")
        }
        guard takeSequenceNumber(at: data.lowerBound, in: bytes) else { return }
        if beforeImage {
            guard frames.isEmpty else { return ignore("more than one fcTL before the image data") }
            guard let frame = try? PNGFile.Frame(data.lowerBound, in: bytes, canvas: canvas, usesDefaultImage: true),
                  frame.x == 0, frame.y == 0, frame.width == canvas.width, frame.height == canvas.height else {
                return ignore("the default image's fcTL does not cover the canvas")
            }
            frames.append(frame)
            return
        }
        frames.append(try PNGFile.Frame(data.lowerBound, in: bytes, canvas: canvas, usesDefaultImage: false))
    }

    mutating func readFrameData(_ data: Range<Int>, in bytes: UnsafeRawBufferPointer, beforeImage: Bool) throws {
        guard ignoredBecause == nil else { return }
        if beforeImage { return ignore("fdAT before the image data") }
        guard control != nil else { return }
        guard data.count >= 4, PNGFile.crcMatches(data, in: bytes) else {
            throw ImageError.corruptData("APNG: fdAT after frame \(frames.count - 1) is shorter than its sequence number or its CRC does not match")
        }
        guard takeSequenceNumber(at: data.lowerBound, in: bytes) else { return }
        guard let last = frames.indices.last, !frames[last].usesDefaultImage else {
            throw ImageError.corruptData("APNG: fdAT without a frame to belong to")
        }
        if data.count > 4 { frames[last].data.append((data.lowerBound + 4)..<data.upperBound) }
    }

    /// The animation the chunks describe, once the walk is over; `nil` for a still image
    /// (no `acTL`, no frames, or control chunks set aside). `complete`: the walk reached
    /// `IEND`, so every `fcTL` has been counted.
    mutating func animation(complete: Bool) -> PNGFile.Animation? {
        guard ignoredBecause == nil, let control, !frames.isEmpty else { return nil }
        if frames.count > control.frameCount || (complete && frames.count != control.frameCount) {
            ignore("acTL declares \(control.frameCount) frames, the file has \(frames.count) fcTL chunks")
            return nil
        }
        return PNGFile.Animation(declaredFrameCount: control.frameCount, plays: control.plays, frames: frames)
    }

    /// Checks the sequence number at `offset` is the next one (and counts it), or sets the
    /// animation aside: a gap, a repeat or a reordering.
    private mutating func takeSequenceNumber(at offset: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
        let sequence = Int(bytes.be32(offset))
        guard sequence == nextSequence, sequence <= Self.limit else {
            ignore("sequence number \(sequence) where \(nextSequence) was due")
            return false
        }
        nextSequence += 1
        return true
    }

    private mutating func ignore(_ reason: String) {
        ignoredBecause = reason
        frames = []
    }
}
