/// APNG's control chunks (`acTL`, `fcTL`, `fdAT`) read in file order and judged the way
/// Chromium's PNG reader (`PNGImageReader`) judges them, so a file animates here exactly
/// when it would animate in a browser.
///
/// One set of rules for every reader of a PNG: the decoder (WebImageCodecs' `PNGFile`) and the
/// metadata walk behind ``ImageMetadata`` and `webimage info` (``MetadataReader``) both feed
/// their chunks to this type, so the frame count `info` reports is the one the decoder shows.
/// Each reader checks the CRCs itself (the decoder with zlib; the metadata walk those of
/// `acTL` and `fcTL`, not `fdAT`'s: see ``readFrameData(_:in:crcMatches:beforeImage:)``) and
/// passes the answer in.
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
///
/// `data` is always the range of a chunk's data in `bytes`, with the 4-byte type before it
/// and the 4-byte CRC after it inside `bytes` (both readers check that before calling).
package struct APNGChunks: Sendable {
    /// One APNG frame: its `fcTL` and where its pixel data is.
    package struct Frame: Sendable, Equatable {
        package var width: Int
        package var height: Int
        package var x: Int
        package var y: Int
        package var delayNumerator: Int
        package var delayDenominator: Int
        /// 0 none, 1 background (clear to transparent), 2 previous.
        package var disposeOp: UInt8
        /// 0 source, 1 over.
        package var blendOp: UInt8
        /// The frame is the default image: its data is the file's `IDAT` chunks.
        package var usesDefaultImage: Bool
        /// For other frames, the payload ranges of its `fdAT` chunks (after the sequence number).
        package var data: [Range<Int>]

        /// `delay_num / delay_den` seconds; a zero denominator means hundredths (the APNG spec).
        package var duration: Duration {
            let denominator = delayDenominator == 0 ? 100 : delayDenominator
            return .nanoseconds(Int64(delayNumerator) * 1_000_000_000 / Int64(denominator))
        }
    }

    /// The animation the control chunks describe.
    package struct Animation: Sendable, Equatable {
        /// `acTL`'s frame count, as stored (the frames found are in ``frames``).
        package var declaredFrameCount: Int
        /// `acTL`'s num_plays: 0 means forever.
        package var plays: Int
        package var frames: [Frame]
    }

    /// `acTL`'s frame count and plays, once a valid one has been read before the image data.
    private var control: (frameCount: Int, plays: Int)?
    private var frames: [Frame] = []
    private var nextSequence = 0
    private var sawControl = false
    /// Why the control chunks were set aside; `nil` while they still describe an animation.
    package private(set) var ignoredBecause: String?

    package init() {}

    /// A valid `acTL` came before the image data and nothing has set the animation aside yet.
    package var declaresAnimation: Bool { control != nil && ignoredBecause == nil }

    /// The frames (`fcTL` chunks) kept so far: none once the animation is set aside.
    package var frameCount: Int { frames.count }

    /// The largest frame count, sequence number and play count the APNG specification allows.
    package static let limit = 0x7FFF_FFFF

    /// An `acTL` chunk; `crcMatches` is asked only when the chunk could count.
    package mutating func readAnimationControl(
        _ data: Range<Int>, in bytes: UnsafeRawBufferPointer, crcMatches: @autoclosure () -> Bool, beforeImage: Bool
    ) {
        guard ignoredBecause == nil else { return }
        // acTL after the image data does not make an APNG (the APNG spec); in one it is a duplicate.
        guard beforeImage else {
            if control != nil { ignore("a second acTL after the image data") }
            return
        }
        guard !sawControl else { return ignore("more than one acTL") }
        sawControl = true
        guard data.count == 8, crcMatches() else { return ignore("acTL is malformed") }
        let declared = Int(Self.be32(bytes, data.lowerBound)), plays = Int(Self.be32(bytes, data.lowerBound + 4))
        guard (1...Self.limit).contains(declared), plays <= Self.limit else {
            return ignore("acTL declares \(declared) frames and \(plays) plays")
        }
        control = (declared, plays)
    }

    /// An `fcTL` chunk of a file whose `IHDR` gives a `canvasWidth` × `canvasHeight` canvas.
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` for a damaged `fcTL` after the image data.
    package mutating func readFrameControl(
        _ data: Range<Int>, in bytes: UnsafeRawBufferPointer, crcMatches: @autoclosure () -> Bool,
        canvasWidth: Int, canvasHeight: Int, beforeImage: Bool
    ) throws(ImageError) {
        guard ignoredBecause == nil, beforeImage || control != nil else { return }
        guard data.count == 26, crcMatches() else {
            if beforeImage { return ignore("the fcTL before the image data is malformed") }
            throw .corruptData("APNG: fcTL \(frames.count) is malformed or its CRC does not match")
        }
        guard takeSequenceNumber(at: data.lowerBound, in: bytes) else { return }
        if beforeImage {
            guard frames.isEmpty else { return ignore("more than one fcTL before the image data") }
            guard let frame = try? Frame(data.lowerBound, in: bytes, canvasWidth: canvasWidth, canvasHeight: canvasHeight, usesDefaultImage: true),
                  frame.x == 0, frame.y == 0, frame.width == canvasWidth, frame.height == canvasHeight else {
                return ignore("the default image's fcTL does not cover the canvas")
            }
            frames.append(frame)
            return
        }
        frames.append(try Frame(data.lowerBound, in: bytes, canvasWidth: canvasWidth, canvasHeight: canvasHeight, usesDefaultImage: false))
    }

    /// An `fdAT` chunk. `crcMatches` is asked only for one that counts (after the image data,
    /// in an animation still standing); the metadata walk, which never reads frame data,
    /// passes `true` rather than hash every frame, so a damaged `fdAT`, which fails the decode,
    /// goes unnoticed there.
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` for a damaged `fdAT` after the image data,
    ///   or one with no frame to belong to.
    package mutating func readFrameData(
        _ data: Range<Int>, in bytes: UnsafeRawBufferPointer, crcMatches: @autoclosure () -> Bool, beforeImage: Bool
    ) throws(ImageError) {
        guard ignoredBecause == nil else { return }
        if beforeImage { return ignore("fdAT before the image data") }
        guard control != nil else { return }
        guard data.count >= 4, crcMatches() else {
            throw .corruptData("APNG: fdAT after frame \(frames.count - 1) is shorter than its sequence number or its CRC does not match")
        }
        guard takeSequenceNumber(at: data.lowerBound, in: bytes) else { return }
        guard let last = frames.indices.last, !frames[last].usesDefaultImage else {
            throw .corruptData("APNG: fdAT without a frame to belong to")
        }
        if data.count > 4 { frames[last].data.append((data.lowerBound + 4)..<data.upperBound) }
    }

    /// The animation the chunks describe, once the walk is over; `nil` for a still image
    /// (no `acTL`, no frames, or control chunks set aside). `complete`: the walk reached
    /// `IEND`, so every `fcTL` has been counted.
    package mutating func animation(complete: Bool) -> Animation? {
        guard ignoredBecause == nil, let control, !frames.isEmpty else { return nil }
        if frames.count > control.frameCount || (complete && frames.count != control.frameCount) {
            ignore("acTL declares \(control.frameCount) frames, the file has \(frames.count) fcTL chunks")
            return nil
        }
        return Animation(declaredFrameCount: control.frameCount, plays: control.plays, frames: frames)
    }

    /// Checks the sequence number at `offset` is the next one (and counts it), or sets the
    /// animation aside: a gap, a repeat or a reordering.
    private mutating func takeSequenceNumber(at offset: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
        let sequence = Int(Self.be32(bytes, offset))
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

    /// The big-endian 32-bit value at `offset`; the caller has checked the bounds.
    fileprivate static func be32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    fileprivate static func be16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
}

extension APNGChunks.Frame {
    /// Reads the 26 bytes of an `fcTL` at `offset` (its sequence number already checked).
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` for an empty frame, one reaching outside
    ///   the canvas, or an unknown dispose or blend op.
    init(_ offset: Int, in bytes: UnsafeRawBufferPointer, canvasWidth: Int, canvasHeight: Int, usesDefaultImage: Bool) throws(ImageError) {
        self.init(
            width: Int(APNGChunks.be32(bytes, offset + 4)), height: Int(APNGChunks.be32(bytes, offset + 8)),
            x: Int(APNGChunks.be32(bytes, offset + 12)), y: Int(APNGChunks.be32(bytes, offset + 16)),
            delayNumerator: Int(APNGChunks.be16(bytes, offset + 20)), delayDenominator: Int(APNGChunks.be16(bytes, offset + 22)),
            disposeOp: bytes[offset + 24], blendOp: bytes[offset + 25],
            usesDefaultImage: usesDefaultImage, data: [])
        // All values are below 2^32, so the sums cannot overflow Int.
        guard width > 0, height > 0, x + width <= canvasWidth, y + height <= canvasHeight else {
            throw .corruptData("APNG: a \(width)×\(height) frame at (\(x), \(y)) does not lie inside the \(canvasWidth)×\(canvasHeight) canvas")
        }
        guard disposeOp <= 2, blendOp <= 1 else {
            throw .corruptData("APNG: fcTL names unknown dispose op \(disposeOp) or blend op \(blendOp)")
        }
    }
}
