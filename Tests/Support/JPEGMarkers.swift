import Foundation

/// Marker segments written into JPEG files, for tests that need a file with a given segment.
public enum JPEGMarkers {
    /// `jpeg` with `profile` in APP2 `ICC_PROFILE` chunks of 65,519 bytes right after SOI.
    public static func insertingICCProfile(_ profile: Data, into jpeg: Data) -> Data {
        let size = 65_519
        let chunks = (profile.count + size - 1) / size
        var result = jpeg
        for index in (0..<chunks).reversed() {
            let chunk = profile[(profile.startIndex + index * size)..<min(profile.startIndex + (index + 1) * size, profile.endIndex)]
            result = insertingSegment(marker: 0xE2, payload: Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(chunks)] + Array(chunk), into: result)
        }
        return result
    }

    /// `jpeg` with an APP1 `Exif` segment right after SOI whose one tag is `Orientation` =
    /// `orientation` (1–8): a file whose pixels are stored turned, as a camera writes them.
    public static func insertingOrientation(_ orientation: Int, into jpeg: Data) -> Data {
        // A big-endian TIFF header, then IFD0 at offset 8 with one entry: tag 0x0112, type SHORT,
        // count 1, the value in the entry's first two bytes; no next IFD.
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8,
                             0, 1,
                             0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0,
                             0, 0, 0, 0]
        return insertingSegment(marker: 0xE1, payload: Array("Exif".utf8) + [0, 0] + tiff, into: jpeg)
    }

    /// `jpeg` with a marker segment inserted right after SOI.
    public static func insertingSegment(marker: UInt8, payload: [UInt8], into jpeg: Data) -> Data {
        let length = payload.count + 2
        var result = Data(jpeg.prefix(2))
        result.append(contentsOf: [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload)
        result.append(jpeg.dropFirst(2))
        return result
    }
}
