/// Lowercase hexadecimal, written once for every digest the package prints: the disk cache's
/// file names, ETags, signatures, the origin policy's digest, SigV4's hashes.
package enum Hex {
    /// The sixteen digits as UTF-8 bytes, for code that writes into a buffer of its own.
    package static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Two lowercase digits per byte, in order.
    package static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
