/// ThumbHash (Evan Wallace's algorithm): a ~25-byte picture of an image, alpha and aspect ratio
/// included.
///
/// A ThumbHash keeps the lowest cosine frequencies of an image reduced to at most 100 px a side:
/// luminance in up to 7 × 7 terms, two colour differences (yellow–blue, red–green) in 3 × 3,
/// alpha in 5 × 5 when the image has any (luminance then gets 5 × 5), each quantised to four
/// bits and scaled by a per-channel maximum, with the average colour and the approximate aspect
/// ratio in a 5- or 6-byte header. Decoded, it is a soft picture of the image at its own aspect
/// ratio, good as a placeholder while the image loads. The format is
/// [the reference implementation's](https://github.com/evanw/thumbhash), byte for byte.
///
/// Like the reference, it works in gamma-encoded sRGB: the stored 8-bit values are averaged
/// and transformed as they are, not converted to linear light (``BlurHash`` is).
///
/// ```swift
/// let hash = ThumbHash(encoding: photo)          // any bitmap, any pixel format
/// print(hash.base64, hash.bytes.count)           // 28 characters, 21 bytes for an opaque landscape
/// let placeholder = hash.bitmap(maxSide: 32)     // rgba8, 32 px on its longer side
/// let received = try ThumbHash("3OcRJYB4d3h/iIeHeEh3eIhw+j3A")
/// print(received.aspectRatio, received.hasAlpha)
/// ```
public struct ThumbHash: Hashable, Sendable, CustomStringConvertible {
    /// The hash's bytes: a header of 5 bytes (6 with alpha), then the coefficients, two to a byte.
    public let bytes: [UInt8]

    /// Validates the header and that the bytes hold every coefficient the header announces.
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` for fewer than 5 bytes, a luminance count of 0
    ///   or above the channel's maximum (no encoder writes one), an alpha flag without its byte,
    ///   or a length other than the header's (a truncated hash, or bytes after its end).
    public init(bytes: [UInt8]) throws(ImageError) {
        try Layout.validate(bytes)
        self.bytes = bytes
    }

    /// Parses standard base64 (`+` and `/`), with or without its `=` padding.
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` for text that is not base64 (whitespace and
    ///   URL-safe characters included) or whose bytes are not a ThumbHash.
    public init(_ base64: String) throws(ImageError) {
        guard let bytes = PlaceholderCoding.bytes(base64: base64, maximumBytes: Layout.maximumByteCount) else {
            throw ImageError.corruptData("a ThumbHash of \(base64.utf8.count) characters is not standard base64 of at most \(Layout.maximumByteCount) bytes")
        }
        try self.init(bytes: bytes)
    }

    /// Bytes that are known to be a valid hash: the encoder's.
    init(validated bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The bytes in standard base64, padded: what ``init(_:)`` reads back.
    public var base64: String { PlaceholderCoding.base64(bytes) }

    /// ``base64``.
    public var description: String { base64 }

    /// The image's approximate width / height, from the number of luminance terms kept along
    /// each axis (so between 1/7 and 7): the reference's `thumbHashToApproximateAspectRatio`.
    public var aspectRatio: Double {
        let layout = self.layout
        return Double(layout.storedColumns) / Double(layout.storedRows)
    }

    /// Whether the hash has an alpha channel: some pixel of the image was not opaque.
    public var hasAlpha: Bool { layout.hasAlpha }

    /// The header, read from bytes that ``Layout/validate(_:)`` accepted.
    var layout: Layout { Layout(bytes) }
}

extension ThumbHash {
    /// What the header says: the DC terms and scales, which channels and how many terms each.
    ///
    /// Bytes 0–2 hold, from the lowest bit: L DC (6 bits), P DC (6), Q DC (6), L scale (5) and
    /// the alpha flag (1). Bytes 3–4: the luminance count (3), P scale (6), Q scale (6) and the
    /// landscape flag (1). With alpha, byte 5 holds A DC (low 4 bits) and A scale (high 4).
    /// The AC terms follow, four bits each, low nibble first: L, P, Q, then A.
    struct Layout {
        var header24: UInt32
        var header16: UInt32
        var hasAlpha: Bool { header24 >> 23 != 0 }
        var isLandscape: Bool { header16 >> 15 != 0 }
        /// Luminance terms along the image's shorter axis, as stored (the longer axis has
        /// `maximumLuminance`).
        var luminanceCount: Int { Int(header16 & 7) }
        /// 7, or 5 when alpha takes part of the space.
        var maximumLuminance: Int { hasAlpha ? 5 : 7 }
        var storedColumns: Int { isLandscape ? maximumLuminance : luminanceCount }
        var storedRows: Int { isLandscape ? luminanceCount : maximumLuminance }
        /// The luminance grid the decoder uses: at least 3 × 3.
        var lx: Int { max(3, storedColumns) }
        var ly: Int { max(3, storedRows) }
        var acStart: Int { hasAlpha ? 6 : 5 }

        /// The AC terms of every channel, in the order the bytes store them.
        var acCount: Int {
            Channel.frequencies(nx: lx, ny: ly).count + 2 * Channel.frequencies(nx: 3, ny: 3).count
                + (hasAlpha ? Channel.frequencies(nx: 5, ny: 5).count : 0)
        }

        var byteCount: Int { acStart + (acCount + 1) / 2 }

        /// The longest hash: alpha, 5 × 5 luminance (14 ACs), 5 + 5 colour and 14 alpha ACs in
        /// 19 bytes after 6 of header. Without alpha, 7 × 7 luminance (27) and 10 colour ACs
        /// take 19 bytes after 5.
        static let maximumByteCount = 25

        /// Reads the header of bytes that hold one (at least 5, 6 with alpha).
        init(_ bytes: [UInt8]) {
            header24 = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16
            header16 = UInt32(bytes[3]) | UInt32(bytes[4]) << 8
        }

        /// Throws unless `bytes` are a ThumbHash an encoder could have written: the work is the
        /// header's few fields, whatever the length of `bytes`.
        static func validate(_ bytes: [UInt8]) throws(ImageError) {
            guard bytes.count >= 5 else {
                throw ImageError.corruptData("a ThumbHash has at least 5 bytes, not \(bytes.count)")
            }
            let layout = Layout(bytes)
            guard (1...layout.maximumLuminance).contains(layout.luminanceCount) else {
                throw ImageError.corruptData("a ThumbHash's luminance count is 1 to \(layout.maximumLuminance), not \(layout.luminanceCount)")
            }
            guard bytes.count == layout.byteCount else {
                throw ImageError.corruptData("a ThumbHash of \(bytes.count) bytes whose header announces \(layout.byteCount)")
            }
        }

        /// The scale of each channel's AC terms and the DC terms, as the decoder reads them.
        var lDC: Double { Double(header24 & 63) / 63 }
        var pDC: Double { Double((header24 >> 6) & 63) / 31.5 - 1 }
        var qDC: Double { Double((header24 >> 12) & 63) / 31.5 - 1 }
        var lScale: Double { Double((header24 >> 18) & 31) / 31 }
        var pScale: Double { Double((header16 >> 3) & 63) / 63 }
        var qScale: Double { Double((header16 >> 9) & 63) / 63 }
    }
}
