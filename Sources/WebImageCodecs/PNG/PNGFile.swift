import CCodecShims
import WebImageCore

/// The chunk layout of a PNG or APNG file, read without decoding any pixels: `IHDR`, the
/// chunks every APNG frame shares, the metadata the decoder reports, and APNG's frame controls
/// with the byte ranges of their data.
///
/// The walk is bounds-checked throughout: lengths come from the file and are trusted only as
/// far as the bytes go. A file that ends inside a chunk is marked ``truncated`` and the walk
/// stops there; what came before still counts.
struct PNGFile {
    struct Header {
        var width: Int
        var height: Int
        var bitDepth: UInt8
        var colorType: UInt8
        var interlaced: Bool
        /// The 13 bytes of IHDR's data, copied into the streams synthesized for APNG frames.
        var bytes: [UInt8]
    }

    /// One APNG frame: its `fcTL` and where its pixel data is (WebImageCore's `APNGChunks`,
    /// whose rules the metadata walk behind `webimage info` shares).
    typealias Frame = APNGChunks.Frame
    typealias Animation = APNGChunks.Animation

    var header: Header
    /// Whole chunks (length through CRC) that every frame's stream needs: `PLTE` and `tRNS`.
    var sharedChunks: [Range<Int>] = []
    /// The zlib stream of the `iCCP` profile.
    var iccProfile: Range<Int>?
    /// The colour chunks other than `iCCP`, in the order of precedence PNG's third edition gives
    /// them: `cICP` code points, then (after `iCCP`) `sRGB`, then `cHRM` and `gAMA`.
    var colorChunks = ColorChunks()
    /// The TIFF structure of `eXIf`.
    var exif: Range<Int>?
    /// The zlib streams of `zTXt` and compressed `iTXt` chunks, checked for bombs.
    var compressedTexts: [Range<Int>] = []
    /// A valid `acTL` came before the image data and `fcTL` chunks followed, all by the rules
    /// of ``APNGChunks``: the file animates. `nil` for a still image, including an APNG whose
    /// control chunks were set aside (see ``animationIgnoredBecause``).
    var animation: Animation?
    /// The APNG control chunks as read so far.
    private var apng = APNGChunks()
    /// A valid `acTL` came before the image data and nothing has set the animation aside yet,
    /// whether or not any `fcTL` has arrived (the incremental decoder asks mid-file).
    var declaresAnimation: Bool { apng.declaresAnimation }
    /// Why the file's APNG control chunks were set aside, leaving the still default image.
    var animationIgnoredBecause: String? { apng.ignoredBecause }
    /// Where the first `IDAT` chunk starts, if one was seen.
    var firstIDAT: Int?
    /// The bytes of `IDAT` data present (of a chunk cut short, the part that is there).
    var imageDataBytes = 0
    /// The bytes end inside a chunk or before `IEND`.
    var truncated = false

    /// The fewest bytes of zlib data that can inflate to the image's scanlines: deflate
    /// encodes at most 258 bytes in 2 bits, a ratio of 1032:1, and a zlib stream adds a few
    /// bytes. Image data shorter than this cannot be complete, whatever it holds.
    var minimumImageDataBytes: Int {
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(header.colorType)] ?? 4
        let rowBytes = 1 + (header.width * channels * Int(header.bitDepth) + 7) / 8
        return header.height * rowBytes / 1032
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Walks the chunks of `bytes`.
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` when the signature or `IHDR` is missing or
    ///   invalid, a chunk length is impossible, or an APNG chunk after the image data is
    ///   damaged. APNG control chunks that break the animation's rules only set the animation
    ///   aside (see ``APNGChunks``).
    init(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count >= 8, zip(bytes.prefix(8), Self.signature).allSatisfy({ $0 == $1 }) else {
            throw ImageError.corruptData("PNG: the PNG signature is missing")
        }
        guard bytes.count >= 33 else {
            throw ImageError.corruptData("PNG: the file ends before its IHDR chunk")
        }
        guard bytes.be32(8) == 13, bytes.be32(12) == Chunk.ihdr else {
            throw ImageError.corruptData("PNG: the first chunk is not a 13-byte IHDR")
        }
        guard bytes.be32(29) == LibPNG.crc32(bytes, 12..<29) else {
            throw ImageError.corruptData("PNG: IHDR's CRC does not match its bytes")
        }
        header = try Self.header(bytes)

        var offset = 33
        var ended = false
        while !ended {
            guard offset <= bytes.count - 8 else {
                truncated = true
                break
            }
            let length = Int(bytes.be32(offset))
            let type = bytes.be32(offset + 4)
            guard length <= 0x7FFF_FFFF else {
                throw ImageError.corruptData("PNG: a chunk claims \(length) bytes, more than PNG allows")
            }
            let data = (offset + 8)..<(offset + 8 + length)
            // Where the image data starts is known from the header alone, even when the bytes
            // end inside the chunk (the incremental decoder asks while the file arrives).
            if type == Chunk.idat {
                if firstIDAT == nil { firstIDAT = offset }
                imageDataBytes += min(length, bytes.count - (offset + 8))
            }
            guard data.upperBound <= bytes.count - 4 else {
                truncated = true
                break
            }
            let chunk = offset..<(data.upperBound + 4)
            try read(type: type, data: data, chunk: chunk, in: bytes, ended: &ended)
            offset = chunk.upperBound
        }
        animation = apng.animation(complete: !truncated)
    }

    private static func header(_ bytes: UnsafeRawBufferPointer) throws -> Header {
        let width = Int(bytes.be32(16)), height = Int(bytes.be32(20))
        let bitDepth = bytes[24], colorType = bytes[25], interlace = bytes[28]
        guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
            throw ImageError.corruptData("PNG: IHDR gives an empty or impossible size \(width)×\(height)")
        }
        let depths: [UInt8]
        switch colorType {
        case 0: depths = [1, 2, 4, 8, 16]
        case 3: depths = [1, 2, 4, 8]
        case 2, 4, 6: depths = [8, 16]
        default: throw ImageError.corruptData("PNG: IHDR names unknown colour type \(colorType)")
        }
        guard depths.contains(bitDepth) else {
            throw ImageError.corruptData("PNG: bit depth \(bitDepth) is not allowed for colour type \(colorType)")
        }
        guard bytes[26] == 0, bytes[27] == 0, interlace <= 1 else {
            throw ImageError.corruptData("PNG: IHDR names an unknown compression, filter or interlace method")
        }
        return Header(width: width, height: height, bitDepth: bitDepth, colorType: colorType,
                      interlaced: interlace == 1, bytes: Array(bytes[16..<29]))
    }

    private mutating func read(type: UInt32, data: Range<Int>, chunk: Range<Int>, in bytes: UnsafeRawBufferPointer, ended: inout Bool) throws {
        let beforeImage = firstIDAT == nil || type == Chunk.idat
        switch type {
        case Chunk.idat:
            break
        case Chunk.iend:
            ended = true
        case Chunk.plte, Chunk.trns:
            // Only what precedes the image data describes it; both are tiny, so their CRCs are
            // checked here, as the frame streams built from them skip libpng's CRC checks.
            guard beforeImage else { return }
            guard Self.crcMatches(data, in: bytes) else {
                throw ImageError.corruptData("PNG: the \(type == Chunk.plte ? "PLTE" : "tRNS") chunk's CRC does not match")
            }
            sharedChunks.append(chunk)
        case Chunk.iccp:
            guard beforeImage, iccProfile == nil, Self.crcMatches(data, in: bytes),
                  let stream = Self.compressedPayload(data, in: bytes, afterKeywordSkipping: 1) else { return }
            iccProfile = stream
        case Chunk.cicp, Chunk.srgb, Chunk.gama, Chunk.chrm:
            guard beforeImage, Self.crcMatches(data, in: bytes) else { return }
            colorChunks.read(type, UnsafeRawBufferPointer(rebasing: bytes[data]))
        case Chunk.exif:
            guard exif == nil, Self.crcMatches(data, in: bytes) else { return }
            exif = data
        case Chunk.ztxt:
            if let stream = Self.compressedPayload(data, in: bytes, afterKeywordSkipping: 1) {
                compressedTexts.append(stream)
            }
        case Chunk.itxt:
            // keyword, NUL, compression flag, method, language, NUL, translated keyword, NUL, text
            guard let keywordEnd = bytes.firstNUL(in: data), keywordEnd + 2 < data.upperBound,
                  bytes[keywordEnd + 1] == 1,
                  let languageEnd = bytes.firstNUL(in: (keywordEnd + 3)..<data.upperBound),
                  let translatedEnd = bytes.firstNUL(in: (languageEnd + 1)..<data.upperBound)
            else { return }
            compressedTexts.append((translatedEnd + 1)..<data.upperBound)
        case Chunk.actl:
            apng.readAnimationControl(data, in: bytes, crcMatches: Self.crcMatches(data, in: bytes), beforeImage: beforeImage)
        case Chunk.fctl:
            try apng.readFrameControl(data, in: bytes, crcMatches: Self.crcMatches(data, in: bytes),
                                      canvasWidth: header.width, canvasHeight: header.height, beforeImage: beforeImage)
        case Chunk.fdat:
            try apng.readFrameData(data, in: bytes, crcMatches: Self.crcMatches(data, in: bytes), beforeImage: beforeImage)
        default:
            break
        }
    }

    /// The zlib stream after `keyword NUL` and `skip` more bytes (the compression method).
    private static func compressedPayload(_ data: Range<Int>, in bytes: UnsafeRawBufferPointer, afterKeywordSkipping skip: Int) -> Range<Int>? {
        guard let keywordEnd = bytes.firstNUL(in: data), keywordEnd + 1 + skip <= data.upperBound else { return nil }
        return (keywordEnd + 1 + skip)..<data.upperBound
    }

    /// Whether the CRC after `data` matches the chunk's type and data.
    static func crcMatches(_ data: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Bool {
        LibPNG.crc32(bytes, (data.lowerBound - 4)..<data.upperBound) == bytes.be32(data.upperBound)
    }

    enum Chunk {
        static let ihdr: UInt32 = 0x4948_4452
        static let idat: UInt32 = 0x4944_4154
        static let iend: UInt32 = 0x4945_4E44
        static let plte: UInt32 = 0x504C_5445
        static let trns: UInt32 = 0x7452_4E53
        static let iccp: UInt32 = 0x6943_4350
        static let cicp: UInt32 = 0x6349_4350
        static let srgb: UInt32 = 0x7352_4742
        static let gama: UInt32 = 0x6741_4D41
        static let chrm: UInt32 = 0x6348_524D
        static let exif: UInt32 = 0x6558_4966
        static let ztxt: UInt32 = 0x7A54_5874
        static let itxt: UInt32 = 0x6954_5874
        static let actl: UInt32 = 0x6163_544C
        static let fctl: UInt32 = 0x6663_544C
        static let fdat: UInt32 = 0x6664_4154
    }
}

extension UnsafeRawBufferPointer {
    /// The big-endian 32-bit value at `offset`; the caller has checked the bounds.
    @inline(__always)
    func be32(_ offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func be16(_ offset: Int) -> UInt16 {
        UInt16(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    /// The offset of the first zero byte in `range`, if any.
    fileprivate func firstNUL(in range: Range<Int>) -> Int? {
        guard !range.isEmpty else { return nil }
        return self[range].firstIndex(of: 0)
    }
}
