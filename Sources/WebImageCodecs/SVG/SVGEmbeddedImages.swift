import Foundation
import WebImageCore

/// The raster images an SVG document embeds as `data:` URLs, checked against the pixel limit
/// before librsvg decodes them (through gdk-pixbuf, which has no limit of its own): a 1.5 MB
/// SVG of a 200 × 200 canvas embedding a 20,000 × 20,000 PNG took 15 s and 2.7 GB, where the same
/// PNG requested directly is refused (hostile-input finding 4).
///
/// The document's text is scanned for `data:` URLs wherever they stand (`href`, `xlink:href`,
/// a style); each one's first bytes are decoded (Base64 or percent-encoding) and sniffed for the
/// size its header states. A URL built from entities escapes the scan: the renderer's own limits
/// (``RenderProcess``'s memory and time) bound what it can do.
enum SVGEmbeddedImages {
    /// The most of each URL decoded to find its header: a JPEG's frame header can follow 64 KB
    /// of EXIF and ICC data.
    static let headerBytes = 256 << 10
    /// The most `data:` URLs read: past it the document is refused.
    static let maximumURLs = 1_000

    /// Throws ``ImageError/tooLarge(_:)`` when an embedded image states more than
    /// `maximumPixelCount` pixels, or the document embeds more than ``maximumURLs`` of them.
    static func check(_ document: Data, maximumPixelCount: Int) throws {
        let bytes = [UInt8](document)
        let pattern = Array("data:".utf8)
        var index = 0, found = 0
        while index + pattern.count <= bytes.count {
            guard matches(bytes, at: index, pattern) else {
                index += 1
                continue
            }
            found += 1
            guard found <= maximumURLs else { throw ImageError.tooLarge("SVG: more than \(maximumURLs) embedded data: URLs") }
            index += pattern.count
            guard let header = sniff(bytes, from: &index), let pixels = header.pixelCount else { continue }
            guard pixels <= maximumPixelCount else {
                throw ImageError.tooLarge(
                    "SVG: an embedded \(header.format) image of \(header.pixelWidth ?? 0)×\(header.pixelHeight ?? 0) exceeds the limit of \(maximumPixelCount) pixels")
            }
        }
    }

    /// `data:` at `index` without case.
    private static func matches(_ bytes: [UInt8], at index: Int, _ pattern: [UInt8]) -> Bool {
        for offset in 0..<pattern.count where bytes[index + offset] | 0x20 != pattern[offset] | 0x20 {
            return false
        }
        return true
    }

    /// The header of the URL whose media type starts at `index` (moved past what was read).
    private static func sniff(_ bytes: [UInt8], from index: inout Int) -> ImageHeader? {
        // The media type and parameters run to the first comma.
        guard let comma = bytes[index..<min(bytes.count, index + 256)].firstIndex(of: UInt8(ascii: ",")) else { return nil }
        let parameters = String(decoding: bytes[index..<comma], as: UTF8.self).lowercased()
        index = comma + 1
        var payload: [UInt8] = []
        let isBase64 = parameters.hasSuffix(";base64")
        // A URL ends at a quote, a parenthesis or a bracket (never part of Base64 or of a
        // percent-encoded URL); white space inside is skipped, as decoders skip it.
        while index < bytes.count, payload.count < (isBase64 ? headerBytes / 3 * 4 : headerBytes) {
            let byte = bytes[index]
            if [UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: "&")].contains(byte) { break }
            if ![0x20, 0x09, 0x0A, 0x0D].contains(byte) { payload.append(byte) }
            index += 1
        }
        let decoded: Data?
        if isBase64 {
            let whole = payload.count - payload.count % 4
            decoded = Data(base64Encoded: Data(payload.prefix(whole)))
        } else {
            // A cut may leave a partial escape at the end: decoded up to it.
            let text = String(decoding: payload, as: UTF8.self)
            decoded = (PercentDecoding.bytes(text[...]) ?? PercentDecoding.bytes(text.dropLast(2))).map { Data($0) }
        }
        guard let decoded else { return nil }
        return decoded.withUnsafeBytes { ImageHeader(sniffing: $0) }
    }
}
