import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCore

@Suite struct ExifTests {
    /// A minimal TIFF block: header, IFD0 with the given entries (tag, type, count, value).
    static func tiff(littleEndian: Bool, entries: [(UInt16, UInt16, UInt32, UInt32)]) -> [UInt8] {
        var bytes: [UInt8] = littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]
        func u16(_ value: UInt16) { bytes += littleEndian ? [UInt8(value & 0xff), UInt8(value >> 8)] : [UInt8(value >> 8), UInt8(value & 0xff)] }
        func u32(_ value: UInt32) {
            let (first, second) = littleEndian ? (value & 0xffff, value >> 16) : (value >> 16, value & 0xffff)
            u16(UInt16(first))
            u16(UInt16(second))
        }
        u16(42)
        u32(8)
        u16(UInt16(entries.count))
        for (tag, type, count, value) in entries {
            u16(tag); u16(type); u32(count)
            // A SHORT value sits in the first two bytes of the value field.
            if type == 3 { u16(UInt16(value)); u16(0) } else { u32(value) }
        }
        u32(0)
        return bytes
    }

    @Test(arguments: [true, false], 1...8)
    func readsTheOrientationInEitherByteOrder(littleEndian: Bool, value: Int) {
        let block = Self.tiff(littleEndian: littleEndian, entries: [(0x010F, 2, 4, 0), (0x0112, 3, 1, UInt32(value))])
        #expect(Exif.orientation(inTIFF: block) == ImageOrientation(exifValue: value))
    }

    @Test func anOutOfRangeValueOrWrongTypeOrNoTagIsNil() {
        #expect(Exif.orientation(inTIFF: Self.tiff(littleEndian: true, entries: [(0x0112, 3, 1, 9)])) == nil)
        #expect(Exif.orientation(inTIFF: Self.tiff(littleEndian: true, entries: [(0x0112, 4, 1, 6)])) == nil)
        #expect(Exif.orientation(inTIFF: Self.tiff(littleEndian: true, entries: [(0x010F, 2, 4, 0)])) == nil)
    }

    @Test func hostileBlocksNeverReadOutOfBounds() {
        let valid = Self.tiff(littleEndian: true, entries: [(0x0112, 3, 1, 6)])
        for length in 0..<valid.count {
            // A prefix is either too short to find the tag or (once complete) right.
            let result = Exif.orientation(inTIFF: Array(valid.prefix(length)))
            #expect(result == nil || result == .right)
        }
        var lying = valid
        lying[4] = 0xff; lying[5] = 0xff; lying[6] = 0xff; lying[7] = 0x7f  // IFD offset far past the end
        #expect(Exif.orientation(inTIFF: lying) == nil)
        var manyEntries = valid
        manyEntries[8] = 0xff; manyEntries[9] = 0xff  // 65535 entries claimed
        #expect(Exif.orientation(inTIFF: manyEntries) == .right || Exif.orientation(inTIFF: manyEntries) == nil)
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2000 {
            var bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if bytes.count >= 4, Bool.random(using: &generator) { bytes[0] = 0x49; bytes[1] = 0x49; bytes[2] = 42; bytes[3] = 0 }
            _ = Exif.orientation(inTIFF: bytes)
        }
    }

    @Test func orientationsThatTurnAQuarterSwapDimensions() {
        #expect(ImageOrientation.allCases.filter(\.swapsDimensions) == [.leftMirrored, .right, .rightMirrored, .left])
    }
}

@Suite struct FrameDurationTests {
    @Test func tinyDelaysDisplayAsATenthOfASecondLikeBrowsers() throws {
        let bitmap = try Bitmap(width: 1, height: 1, pixelFormat: .rgba8, pixels: [0, 0, 0, 0])
        let frame = { (ms: Int) in AnimatedImage.Frame(bitmap: bitmap, duration: .milliseconds(ms)) }
        #expect(frame(0).displayDuration == .milliseconds(100))
        #expect(frame(10).displayDuration == .milliseconds(100))
        #expect(frame(20).displayDuration == .milliseconds(20))
        #expect(frame(0).duration == .zero)  // the stored delay is kept as is
    }
}
