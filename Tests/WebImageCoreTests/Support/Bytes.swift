/// Builders for headers written byte by byte from the format specifications, for the cases
/// no fixture file shows (and for formats with no encoder at hand: HEIF, JPEG XL). Lengths
/// are right unless a test overwrites them to make them lie. PNG chunks carry their real CRCs:
/// sniffing never checks them, but the metadata walk checks APNG's `acTL` and `fcTL`, as the
/// decoder does.
enum Bytes {
    static func be16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
    static func be32(_ value: Int) -> [UInt8] { be16(value >> 16) + be16(value) }
    static func le16(_ value: Int) -> [UInt8] { be16(value).reversed() }
    static func le32(_ value: Int) -> [UInt8] { be32(value).reversed() }
    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// PNG's CRC-32 (ISO 3309, as zlib's `crc32`), bit by bit: an independent check of the
    /// table-driven one the metadata walk uses.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }

    /// A PNG: signature, a 4×3 IHDR of the given colour type, then `chunks` as given.
    static func png(width: Int = 4, height: Int = 3, colourType: UInt8 = 2, chunks: [(String, [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let ihdr = be32(width) + be32(height) + [8, colourType, 0, 0, 0]
        for (type, data) in [("IHDR", ihdr)] + chunks {
            bytes += be32(data.count) + ascii(type) + data + be32(Int(crc32(ascii(type) + data)))
        }
        return bytes
    }

    /// A WebP: the RIFF header, then one chunk.
    static func riff(_ chunk: String, payload: [UInt8]) -> [UInt8] {
        ascii("RIFF") + le32(12 + payload.count) + ascii("WEBP") + ascii(chunk) + le32(payload.count) + payload
    }

    /// A GIF89a with an 8×8 screen, a two-colour global table and `images` one-pixel images,
    /// each preceded by a graphic control extension when `transparent` is given.
    static func gif(images: Int, loopExtension: Bool = false, transparent: Bool? = nil, trailer: Bool = true) -> [UInt8] {
        var bytes = ascii("GIF89a") + le16(8) + le16(8) + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        if loopExtension {
            bytes += [0x21, 0xFF, 11] + ascii("NETSCAPE2.0") + [3, 1, 0, 0, 0]
        }
        for _ in 0..<images {
            if let transparent {
                bytes += [0x21, 0xF9, 4, transparent ? 1 : 0, 10, 0, 0, 0]
            }
            bytes += [0x2C] + le16(0) + le16(0) + le16(1) + le16(1) + [0x00]
            bytes += [2, 2, 0x4C, 0x01, 0] // LZW minimum code size, one sub-block, terminator
        }
        if trailer { bytes.append(0x3B) }
        return bytes
    }

    /// A JPEG frame header segment (SOFn) for three components.
    static func jpegSOF(width: Int, height: Int, code: UInt8 = 0xC0) -> [UInt8] {
        [0xFF, code] + be16(17) + [8] + be16(height) + be16(width) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    }

    /// A BMP file header and DIB header of `dibSize` bytes (no pixels).
    static func bmp(dibSize: Int, width: Int32, height: Int32, bitsPerPixel: Int,
                    compression: Int = 0, alphaMask: Int = 0) -> [UInt8] {
        var dib = le32(dibSize)
        if dibSize == 12 {
            dib += le16(Int(width)) + le16(Int(height)) + le16(1) + le16(bitsPerPixel)
        } else {
            dib += le32(Int(UInt32(bitPattern: width))) + le32(Int(UInt32(bitPattern: height)))
            dib += le16(1) + le16(bitsPerPixel) + le32(compression) + [UInt8](repeating: 0, count: 20)
            // From V2 on, the red, green and blue masks follow; from V3 on, the alpha mask.
            if dibSize >= 56 || compression == 6 {
                dib += le32(0xFF_0000) + le32(0xFF00) + le32(0xFF) + le32(alphaMask)
            }
            dib += [UInt8](repeating: 0, count: max(0, dibSize - dib.count))
        }
        return ascii("BM") + le32(14 + dib.count) + le32(0) + le32(14 + dib.count) + dib
    }

    /// An ISO-BMFF `ftyp` box (ISO/IEC 14496-12 §4.3) followed by the start of a `meta` box,
    /// as HEIF (ISO/IEC 23008-12) and AVIF files begin.
    static func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        let box = be32(16 + 4 * compatible.count) + ascii("ftyp") + ascii(major) + be32(0)
            + compatible.flatMap(ascii)
        return box + be32(33) + ascii("meta") + [0, 0, 0, 0]
    }
}
