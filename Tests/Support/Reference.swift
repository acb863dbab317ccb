import Foundation

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
    /// The shared corpus, when present beside the repository.
    public static let corpus: URL? = {
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

/// The reference's 8×8 fingerprint of RGBA pixels: the mean straight-alpha R, G, B, A of each
/// cell of an 8×8 grid (cell x from `gx*w/8` to `(gx+1)*w/8`, likewise y), rounded.
///
/// `pixels` are `width * height * 4` bytes, rows of `bytesPerRow` bytes.
public func fingerprint(width: Int, height: Int, bytesPerRow: Int, pixels: UnsafeRawBufferPointer) -> [[Int]] {
    var cells: [[Int]] = []
    for gy in 0..<8 {
        for gx in 0..<8 {
            let x0 = gx * width / 8, x1 = max((gx + 1) * width / 8, x0 + 1)
            let y0 = gy * height / 8, y1 = max((gy + 1) * height / 8, y0 + 1)
            var sums = [Int](repeating: 0, count: 4)
            var count = 0
            for y in y0..<min(y1, height) {
                for x in x0..<min(x1, width) {
                    let offset = y * bytesPerRow + x * 4
                    for channel in 0..<4 { sums[channel] += Int(pixels[offset + channel]) }
                    count += 1
                }
            }
            cells.append(sums.map { count == 0 ? 0 : Int((Double($0) / Double(count)).rounded()) })
        }
    }
    return cells
}

/// The largest per-channel difference between two fingerprints.
public func fingerprintDistance(_ a: [[Int]], _ b: [[Int]]) -> Int {
    zip(a, b).map { zip($0, $1).map { abs($0 - $1) }.max() ?? 0 }.max() ?? 0
}
