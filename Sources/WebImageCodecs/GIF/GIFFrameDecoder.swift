import CGIF
import WebImageCore

/// Decodes the LZW data of one GIF frame with giflib, row by row.
///
/// giflib reads a whole file through a read callback; here it reads a tiny GIF made for the
/// frame: a header and screen descriptor the frame's size, an image descriptor at (0, 0) with
/// the frame's interlace flag, then the frame's own LZW data from the original bytes (no copy).
/// So giflib never parses the rest of the file, and a defect in one frame stops only that
/// frame: ``GIFStream`` knows where the next one starts.
struct GIFFrameDecoder {
    /// What the read callback serves: the synthesized headers, then the frame's data.
    private final class Source {
        let prefix: [UInt8]
        let body: UnsafeRawBufferPointer
        var position = 0

        init(prefix: [UInt8], body: UnsafeRawBufferPointer) {
            self.prefix = prefix
            self.body = body
        }

        func read(into buffer: UnsafeMutablePointer<GifByteType>, count: Int) -> Int {
            var copied = 0
            while copied < count {
                if position < prefix.count {
                    let n = min(count - copied, prefix.count - position)
                    prefix.withUnsafeBufferPointer { (buffer + copied).update(from: $0.baseAddress! + position, count: n) }
                    copied += n
                    position += n
                } else {
                    let start = position - prefix.count
                    let n = min(count - copied, body.count - start)
                    guard n > 0 else { break }
                    UnsafeMutableRawPointer(buffer + copied).copyMemory(from: body.baseAddress! + start, byteCount: n)
                    copied += n
                    position += n
                }
            }
            return copied
        }
    }

    /// giflib's input callback: a C function pointer, so it captures nothing and finds its
    /// ``Source`` through `UserData`.
    private static let readCallback: InputFunc = { gif, buffer, count in
        guard let gif, let buffer, count > 0, let userData = gif.pointee.UserData else { return 0 }
        let source = Unmanaged<Source>.fromOpaque(userData).takeUnretainedValue()
        return Int32(source.read(into: buffer, count: Int(count)))
    }

    /// The largest LZW minimum code size decoded. The GIF specification stops at 8 (256
    /// colours); giflib refuses more, and so does Chromium (its Wuffs decoder reports "bad
    /// literal width"), which this follows. Firefox decodes code sizes up to 11.
    static let largestCodeSize = 8

    /// Fails a frame whose LZW minimum code size is above ``largestCodeSize``, so that it is
    /// never shown as a frame with no pixels decoded. A frame cut short before the code size
    /// byte passes: the truncation rules deal with it.
    ///
    /// - Throws: ``ImageError/corruptData(_:)``.
    static func checkCodeSize(of frame: GIFStream.Frame, index: Int, in bytes: UnsafeRawBufferPointer) throws {
        guard frame.data.lowerBound < bytes.count else { return }
        let codeSize = Int(bytes[frame.data.lowerBound])
        guard codeSize <= largestCodeSize else {
            throw ImageError.corruptData("GIF: frame \(index) has LZW minimum code size \(codeSize), above the \(largestCodeSize) GIF allows")
        }
    }

    /// Decodes rows of `frame` in file order, calling `row(y, indices)` for each with the row's
    /// index within the frame and its palette indices (`frame.width` of them), until
    /// `rowCount` rows are done or the data fails.
    ///
    /// - Returns: the number of rows decoded. Fewer than `rowCount` means the data ended early
    ///   or is damaged; the rows delivered stand.
    static func decodeRows(
        of frame: GIFStream.Frame, in bytes: UnsafeRawBufferPointer, rowCount: Int,
        _ row: (Int, UnsafePointer<UInt8>) -> Void
    ) -> Int {
        guard rowCount > 0, frame.width > 0, frame.height > 0, !frame.data.isEmpty else { return 0 }
        func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        let prefix = Array("GIF89a".utf8) + le16(frame.width) + le16(frame.height) + [0, 0, 0]
            + [0x2C] + le16(0) + le16(0) + le16(frame.width) + le16(frame.height) + [frame.interlaced ? 0x40 : 0]
        let source = Source(prefix: prefix, body: UnsafeRawBufferPointer(rebasing: bytes[frame.data]))
        return withExtendedLifetime(source) {
            var error: Int32 = 0
            guard let gif = DGifOpen(Unmanaged.passUnretained(source).toOpaque(), readCallback, &error) else { return 0 }
            defer { DGifCloseFile(gif, &error) }
            var type = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &type) == GIF_OK, type == IMAGE_DESC_RECORD_TYPE,
                  DGifGetImageHeader(gif) == GIF_OK else { return 0 }
            let line = UnsafeMutablePointer<GifPixelType>.allocate(capacity: frame.width)
            defer { line.deallocate() }
            var order = RowOrder(height: frame.height, interlaced: frame.interlaced)
            var done = 0
            while done < rowCount {
                guard DGifGetLine(gif, line, Int32(frame.width)) == GIF_OK else { break }
                row(order.next(), line)
                done += 1
            }
            return done
        }
    }

    /// The order rows arrive in: top to bottom, or GIF's four interlace passes (every 8th row
    /// from 0, every 8th from 4, every 4th from 2, every 2nd from 1).
    struct RowOrder {
        private static let passes: [(start: Int, step: Int)] = [(0, 8), (4, 8), (2, 4), (1, 2)]
        let height: Int
        let interlaced: Bool
        private var pass = 0
        private var y = 0

        init(height: Int, interlaced: Bool) {
            self.height = height
            self.interlaced = interlaced
        }

        /// The frame row that arrives next.
        mutating func next() -> Int {
            let current = y
            guard interlaced else {
                y += 1
                return current
            }
            y += Self.passes[pass].step
            // Move to the next pass that has rows (a short frame skips some).
            while y >= height, pass < 3 {
                pass += 1
                y = Self.passes[pass].start
            }
            return current
        }

        /// How many rows must be decoded for every row above `visibleRows` to have arrived.
        func rowsNeeded(toCover visibleRows: Int) -> Int {
            guard visibleRows > 0 else { return 0 }
            guard interlaced else { return min(height, visibleRows) }
            // The last row needed is the last visible row of the last pass that has one.
            var arrived = 0, needed = 0
            for (start, step) in Self.passes {
                let count = start < height ? (height - start + step - 1) / step : 0
                let visible = start < visibleRows ? (min(visibleRows, height) - start + step - 1) / step : 0
                if visible > 0 { needed = arrived + visible }
                arrived += count
            }
            return needed
        }
    }
}
