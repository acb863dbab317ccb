import WebImageCore

/// A bounds-checked walk over the blocks of a GIF file, one image at a time, without decoding
/// any LZW data: the screen descriptor, the extensions that matter (graphic control, the
/// NETSCAPE2.0 loop count), and for each image its descriptor, palette and the byte range of
/// its data sub-blocks.
///
/// Walking the structure ourselves, instead of letting giflib read the file record by record,
/// means a damaged frame never desynchronises the rest: giflib only ever sees one frame's data
/// (see ``GIFFrameDecoder``), and the walk knows where the next block starts regardless.
struct GIFStream {
    struct Screen {
        var width: Int
        var height: Int
        /// The global colour table: offset and number of entries.
        var globalPalette: (offset: Int, count: Int)?
        var backgroundIndex: Int
    }

    /// One image descriptor with the graphic control extension before it.
    struct Frame {
        var x: Int
        var y: Int
        var width: Int
        var height: Int
        var interlaced: Bool
        var localPalette: (offset: Int, count: Int)?
        var transparentIndex: Int?
        /// 0 unspecified, 1 none, 2 restore to background, 3 restore to previous.
        var disposal: Int
        /// Hundredths of a second, as stored.
        var delay: Int
        /// From the LZW minimum code size byte through the block terminator (or the end of the
        /// bytes when ``isComplete`` is false).
        var data: Range<Int>
        /// The terminator of the data sub-blocks was found.
        var isComplete: Bool
    }

    let bytes: UnsafeRawBufferPointer
    let screen: Screen
    private(set) var offset: Int
    /// The first NETSCAPE2.0 (or ANIMEXTS1.0) loop value seen: 0 means forever.
    private(set) var loopValue: Int?
    /// The bytes ended before the trailer.
    private(set) var isTruncated = false
    private var finished = false

    /// Checks the signature and the logical screen from the first 13 bytes alone (the global
    /// colour table may not have arrived yet): a GIF with an empty screen, or one over the
    /// pixel limit, fails here.
    static func checkScreen(_ bytes: UnsafeRawBufferPointer, maximumPixelCount: Int) throws {
        guard bytes.count >= 6, bytes[0] == 0x47, bytes[1] == 0x49, bytes[2] == 0x46, bytes[3] == 0x38,
              bytes[4] == 0x37 || bytes[4] == 0x39, bytes[5] == 0x61 else {
            throw ImageError.corruptData("GIF: the GIF87a/GIF89a signature is missing")
        }
        guard bytes.count >= 13 else {
            throw ImageError.corruptData("GIF: the file ends inside the logical screen descriptor")
        }
        let width = bytes.gifLE16(6), height = bytes.gifLE16(8)
        guard width > 0, height > 0 else {
            throw ImageError.corruptData("GIF: the logical screen is \(width)×\(height), which holds no pixels")
        }
        guard width * height <= maximumPixelCount else {
            throw ImageError.tooLarge("GIF: the \(width)×\(height) screen is more than the \(maximumPixelCount)-pixel limit")
        }
    }

    /// Reads the header and screen descriptor.
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` without a GIF signature, a complete screen
    ///   descriptor and global colour table, or with an empty screen.
    init(_ bytes: UnsafeRawBufferPointer) throws {
        self.bytes = bytes
        try Self.checkScreen(bytes, maximumPixelCount: .max)
        let width = bytes.gifLE16(6), height = bytes.gifLE16(8), flags = bytes[10]
        var offset = 13
        var palette: (offset: Int, count: Int)?
        if flags & 0x80 != 0 {
            let count = 2 << Int(flags & 7)
            guard offset + count * 3 <= bytes.count else {
                throw ImageError.corruptData("GIF: the file ends inside the global colour table")
            }
            palette = (offset, count)
            offset += count * 3
        }
        screen = Screen(width: width, height: height, globalPalette: palette, backgroundIndex: Int(bytes[11]))
        self.offset = offset
    }

    /// The next image, or `nil` at the trailer, at an unknown block, or where the bytes end.
    /// A frame whose data the bytes cut short is returned with `isComplete == false`, and the
    /// walk ends after it.
    mutating func nextFrame() -> Frame? {
        var transparentIndex: Int?
        var disposal = 0
        var delay = 0
        while !finished {
            guard offset < bytes.count else { return end(truncated: true) }
            switch bytes[offset] {
            case 0x21: // extension
                guard offset + 1 < bytes.count else { return end(truncated: true) }
                let label = bytes[offset + 1]
                let first = offset + 2
                guard let end = skipSubBlocks(from: first) else { return self.end(truncated: true) }
                let firstSize = Int(bytes[first])
                if label == 0xF9, firstSize >= 4 {
                    let packed = bytes[first + 1]
                    disposal = Int((packed >> 2) & 7)
                    delay = bytes.gifLE16(first + 2)
                    transparentIndex = packed & 1 != 0 ? Int(bytes[first + 4]) : nil
                } else if label == 0xFF, firstSize == 11, loopValue == nil {
                    readLoop(applicationBlock: first)
                }
                offset = end
            case 0x2C: // image descriptor
                guard offset + 10 <= bytes.count else { return end(truncated: true) }
                let flags = bytes[offset + 9]
                var frame = Frame(
                    x: bytes.gifLE16(offset + 1), y: bytes.gifLE16(offset + 3),
                    width: bytes.gifLE16(offset + 5), height: bytes.gifLE16(offset + 7),
                    interlaced: flags & 0x40 != 0, localPalette: nil,
                    transparentIndex: transparentIndex, disposal: disposal, delay: delay,
                    data: 0..<0, isComplete: false)
                offset += 10
                if flags & 0x80 != 0 {
                    let count = 2 << Int(flags & 7)
                    guard offset + count * 3 <= bytes.count else { return end(truncated: true) }
                    frame.localPalette = (offset, count)
                    offset += count * 3
                }
                let start = offset
                // The LZW minimum code size, then the data sub-blocks.
                if offset < bytes.count, let end = skipSubBlocks(from: offset + 1) {
                    frame.data = start..<end
                    frame.isComplete = true
                    offset = end
                } else {
                    frame.data = start..<max(start, bytes.count)
                    _ = end(truncated: true)
                }
                return frame
            case 0x3B: // trailer
                return end(truncated: false)
            default:
                // Not a block GIF defines: what follows is not image data (browsers stop here too).
                return end(truncated: false)
            }
        }
        return nil
    }

    private mutating func end(truncated: Bool) -> Frame? {
        isTruncated = isTruncated || truncated
        finished = true
        return nil
    }

    /// The offset just past the terminator of the sub-block chain starting at `start`, or
    /// `nil` when the bytes end first.
    private func skipSubBlocks(from start: Int) -> Int? {
        var position = start
        while position < bytes.count {
            let size = Int(bytes[position])
            if size == 0 { return position + 1 }
            position += 1 + size
        }
        return nil
    }

    /// NETSCAPE2.0 / ANIMEXTS1.0: an 11-byte identifier block, then a block [1, loop lo, loop hi].
    private mutating func readLoop(applicationBlock first: Int) {
        let identifier = bytes[(first + 1)..<(first + 12)]
        let netscape = Array("NETSCAPE2.0".utf8), animexts = Array("ANIMEXTS1.0".utf8)
        guard identifier.elementsEqual(netscape) || identifier.elementsEqual(animexts) else { return }
        let next = first + 12
        guard next + 3 < bytes.count, bytes[next] >= 3, bytes[next + 1] == 1 else { return }
        loopValue = bytes.gifLE16(next + 2)
    }
}

extension UnsafeRawBufferPointer {
    /// The little-endian 16-bit value at `offset`; the caller has checked the bounds.
    @inline(__always)
    fileprivate func gifLE16(_ offset: Int) -> Int {
        Int(self[offset]) | Int(self[offset + 1]) << 8
    }
}
