import Foundation
import WebImageCore

/// `../shared/corpus/reference.json`: what Pillow reports for every corpus file.
public struct ReferenceImage: Decodable, Sendable {
    public var file: String
    public var bytes: Int
    public var format: String?
    public var size: [Int]?
    public var orientation: Int?
    public var frames: Int?
    public var loop: Int?
    public var oriented_size: [Int]?
    public var durations_ms: [Double?]?
    /// Per composed frame, 64 cells of [R, G, B, A] means.
    public var fingerprints: [[[Int]]]?
    public var decodable: Bool
    public var reason: String?
}

public enum Reference {
    /// Set in the environment (`WEBIMAGE_HIDE_CORPUS=1`), the corpus counts as absent: how CI
    /// checks, without a rebuild, that a clone with nothing beside it passes too.
    public static let corpusHidden = ProcessInfo.processInfo.environment["WEBIMAGE_HIDE_CORPUS"] == "1"

    /// The shared corpus, when present beside the repository (and not hidden).
    public static let corpus: URL? = {
        guard !corpusHidden else { return nil }
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus")
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("reference.json").path) ? url : nil
    }()

    /// Every entry of reference.json; empty when the corpus is absent.
    public static let images: [ReferenceImage] = {
        guard let corpus,
              let data = try? Data(contentsOf: corpus.appendingPathComponent("reference.json")) else { return [] }
        struct File: Decodable { var images: [ReferenceImage] }
        return (try? JSONDecoder().decode(File.self, from: data).images) ?? []
    }()

    public static func data(_ image: ReferenceImage) throws -> Data {
        try Data(contentsOf: corpus!.appendingPathComponent(image.file))
    }
}

/// The reference's 8×8 fingerprint of RGBA8 pixels (`width * height` pixels of 4 bytes, rows of
/// `bytesPerRow` bytes), computed the way `reference.json`'s really were.
///
/// The corpus README calls a cell "the mean straight-alpha R, G, B, A", but Pillow made the
/// reference by cropping each cell (x from `gx*w/8` to `(gx+1)*w/8`, at least one pixel, likewise
/// y) and resizing it to 1×1 with the BOX filter, which Pillow does in premultiplied alpha, in two
/// 8-bit passes (horizontal, then vertical) with 22-bit fixed-point weights, then un-premultiplies
/// with a truncating division; a 1×1 cell is copied unchanged. For opaque images that is the
/// plain mean within 1; with transparency the plain mean is off by up to 212
/// (`edge/transparent.png`), because fully transparent pixels would count with whatever RGB they
/// store. Computed on Pillow's own decoded pixels, this matches every frame of every file in
/// `reference.json` exactly (Pillow 13.0.0), so test tolerances measure the decoders alone.
public func fingerprint(width: Int, height: Int, bytesPerRow: Int, pixels: UnsafeRawBufferPointer) -> [[Int]] {
    var cells: [[Int]] = []
    for gy in 0..<8 {
        for gx in 0..<8 {
            let x0 = gx * width / 8, x1 = max((gx + 1) * width / 8, x0 + 1)
            let y0 = gy * height / 8, y1 = max((gy + 1) * height / 8, y0 + 1)
            cells.append(pillowBoxCell(pixels, stride: bytesPerRow, x: x0..<min(x1, width), y: y0..<min(y1, height)))
        }
    }
    return cells
}

private func pillowBoxCell(_ pixels: UnsafeRawBufferPointer, stride: Int, x: Range<Int>, y: Range<Int>) -> [Int] {
    if x.count == 1, y.count == 1 {
        let offset = y.lowerBound * stride + x.lowerBound * 4
        return (0..<4).map { Int(pixels[offset + $0]) }
    }
    // One BOX pass's weight, in Pillow's 22-bit fixed point; a pass over one value is exact.
    func weight(_ count: Int) -> Int { Int(0.5 + (1.0 / Double(count)) * Double(1 << 22)) }
    func pass(_ total: Int, _ weight: Int) -> Int { min(255, ((1 << 21) + total * weight) >> 22) }
    let rowWeight = weight(x.count), columnWeight = weight(y.count)
    var column = [0, 0, 0, 0]
    for row in y {
        // Premultiply as Pillow's RGBA → RGBa conversion does (MULDIV255, rounded), sum the row,
        // and round the horizontal pass to 8 bits.
        var sum = [0, 0, 0, 0]
        for index in x {
            let offset = row * stride + index * 4
            let alpha = Int(pixels[offset + 3])
            for channel in 0..<3 {
                let t = Int(pixels[offset + channel]) * alpha + 128
                sum[channel] += (t + (t >> 8)) >> 8
            }
            sum[3] += alpha
        }
        for channel in 0..<4 { column[channel] += pass(sum[channel], rowWeight) }
    }
    let mean = column.map { pass($0, columnWeight) }
    let alpha = mean[3]
    if alpha == 0 || alpha == 255 { return mean }
    // Un-premultiply as Pillow's RGBa → RGBA conversion does: truncating.
    return (0..<3).map { min(255, 255 * mean[$0] / alpha) } + [alpha]
}

/// The reference fingerprint of an RGBA8 bitmap.
public func fingerprint(_ bitmap: Bitmap) -> [[Int]] {
    precondition(bitmap.pixelFormat == .rgba8, "fingerprints are defined over RGBA8")
    return bitmap.pixels.withUnsafeBytes {
        fingerprint(width: bitmap.width, height: bitmap.height, bytesPerRow: bitmap.bytesPerRow, pixels: $0)
    }
}

extension Bitmap {
    /// The pixel at (`x`, `y`) as an array of its channel bytes.
    public func pixel(_ x: Int, _ y: Int) -> [UInt8] {
        let start = y * bytesPerRow + x * pixelFormat.bytesPerPixel
        return Array(pixels[start..<start + pixelFormat.bytesPerPixel])
    }
}

/// The largest per-channel difference between two fingerprints.
public func fingerprintDistance(_ a: [[Int]], _ b: [[Int]]) -> Int {
    zip(a, b).map { zip($0, $1).map { abs($0 - $1) }.max() ?? 0 }.max() ?? 0
}
