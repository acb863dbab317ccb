import WebImageTestSupport
import Testing
@testable import WebImageCore

/// `Bitmap.oriented` for each EXIF orientation, against images worked out by hand.
@Suite struct ProcessingOrientationTests {
    /// The stored image, 3 × 2, each pixel's grey level naming it:
    ///
    ///     1 2 3
    ///     4 5 6
    static let stored = try! Bitmap(width: 3, height: 2, pixelFormat: .gray8, pixels: [1, 2, 3, 4, 5, 6])

    /// What a viewer shows for each orientation: EXIF's meaning of the tag is where the stored
    /// first row and first column end up.
    static let expected: [(ImageOrientation, width: Int, rows: [UInt8])] = [
        (.up, 3, [1, 2, 3,
                  4, 5, 6]),
        (.upMirrored, 3, [3, 2, 1,      // mirrored left to right
                          6, 5, 4]),
        (.down, 3, [6, 5, 4,            // rotated 180°
                    3, 2, 1]),
        (.downMirrored, 3, [4, 5, 6,    // mirrored top to bottom
                            1, 2, 3]),
        (.leftMirrored, 2, [1, 4,       // transposed: stored rows become columns
                            2, 5,
                            3, 6]),
        (.right, 2, [4, 1,              // rotated 90° clockwise
                     5, 2,
                     6, 3]),
        (.rightMirrored, 2, [6, 3,      // transversed
                             5, 2,
                             4, 1]),
        (.left, 2, [3, 6,               // rotated 90° counter-clockwise
                    2, 5,
                    1, 4]),
    ]

    @Test func everyOrientationMatchesTheHandWorkedImage() throws {
        #expect(Self.expected.map(\.0) == ImageOrientation.allCases)
        for (orientation, width, rows) in Self.expected {
            let upright = Self.stored.oriented(orientation)
            #expect(upright.width == width && upright.height == 6 / width, "\(orientation)")
            #expect(upright.pixels == rows, "\(orientation)")
            #expect(upright.bytesPerRow == width)
        }
    }

    @Test func multiBytePixelsAndPaddedRows() throws {
        // The same picture as RGBA (each pixel's level in all four bytes) with 4 bytes of
        // padding after each row.
        var bytes: [UInt8] = []
        for row in 0..<2 {
            for column in 0..<3 { bytes += [UInt8](repeating: UInt8(row * 3 + column + 1), count: 4) }
            bytes += [0xEE, 0xEE, 0xEE, 0xEE]
        }
        let stored = try Bitmap(width: 3, height: 2, pixelFormat: .rgba8, bytesPerRow: 16, scale: 2, pixels: bytes)
        for (orientation, width, rows) in Self.expected {
            let upright = stored.oriented(orientation)
            // `.up` returns the bitmap itself, padding and all: compare pixel by pixel.
            let tight = (0..<upright.height).flatMap { y in (0..<upright.width).flatMap { upright.pixel($0, y) } }
            #expect(tight == rows.flatMap { [UInt8](repeating: $0, count: 4) }, "\(orientation)")
            #expect(upright.width == width && upright.scale == 2 && upright.pixelFormat == .rgba8)
        }
    }

    @Test func orientingWithTheInverseRestoresTheStoredImage() {
        // Orientations 6 and 8 undo each other; every other one is its own inverse.
        let inverse: [ImageOrientation: ImageOrientation] = [.right: .left, .left: .right]
        for orientation in ImageOrientation.allCases {
            let back = Self.stored.oriented(orientation).oriented(inverse[orientation] ?? orientation)
            #expect(back == Self.stored, "\(orientation)")
        }
    }

    @Test func oneByOneAndSingleRowImages() throws {
        let dot = try Bitmap(width: 1, height: 1, pixelFormat: .gray8, pixels: [9])
        for orientation in ImageOrientation.allCases { #expect(dot.oriented(orientation) == dot) }
        let row = try Bitmap(width: 4, height: 1, pixelFormat: .gray8, pixels: [1, 2, 3, 4])
        #expect(row.oriented(.right).pixels == [1, 2, 3, 4] && row.oriented(.right).width == 1)
        #expect(row.oriented(.left).pixels == [4, 3, 2, 1])
    }
}
