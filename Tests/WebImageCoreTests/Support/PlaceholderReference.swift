import Foundation
import Testing
import WebImageCore
import WebImageTestSupport

/// The placeholder hashes' reference implementations from PyPI, `thumbhash-python` and
/// `blurhash`, through `Tests/Fixtures/placeholder-reference.py`: one run answers a list of
/// encodes and decodes, so a test starts Python once.
///
/// `scripts/deps.sh --test` installs both packages; without them the suite is skipped with a
/// reason, and fails under `CI=true` (``Requirement``).
enum PlaceholderReference {
    static let script = TestFiles.fixtures.appendingPathComponent("placeholder-reference.py")

    /// Whether both packages import (the script's `--check` exits 0).
    static let isAvailable: Bool = {
        let run = try? CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, "--check"])
        return run?.status == 0
    }()

    static let missingReason: Comment = "thumbhash-python or blurhash is not installed (scripts/deps.sh --test installs them)"

    /// Pixels as the script exchanges them: straight RGBA, rows top to bottom.
    struct Pixels: Equatable {
        var width: Int
        var height: Int
        var rgba: [UInt8]

        init(width: Int, height: Int, rgba: [UInt8]) {
            self.width = width
            self.height = height
            self.rgba = rgba
        }

        /// A tightly packed rgba8 bitmap's pixels.
        init(_ bitmap: Bitmap) {
            precondition(bitmap.pixelFormat == .rgba8 && bitmap.bytesPerRow == bitmap.width * 4)
            self.init(width: bitmap.width, height: bitmap.height, rgba: bitmap.pixels)
        }

        /// The mean absolute difference of every channel sample (0–255 units), and the largest.
        func difference(from other: Pixels) -> (mean: Double, maximum: Int) {
            precondition(width == other.width && height == other.height, "\(width)×\(height) vs \(other.width)×\(other.height)")
            let differences = zip(rgba, other.rgba).map { abs(Int($0) - Int($1)) }
            return (Double(differences.reduce(0, +)) / Double(max(differences.count, 1)), differences.max() ?? 0)
        }
    }

    /// One thing to ask the reference.
    enum Item {
        case thumbHashEncode(Pixels)
        case thumbHashDecode(base64: String)
        case blurHashEncode(Pixels, components: BlurHash.Components)
        case blurHashDecode(String, width: Int, height: Int, punch: Double)

        var json: [String: Any] {
            switch self {
            case .thumbHashEncode(let pixels):
                ["op": "thumbhash-encode", "width": pixels.width, "height": pixels.height, "rgba": Data(pixels.rgba).base64EncodedString()]
            case .thumbHashDecode(let base64):
                ["op": "thumbhash-decode", "hash": base64]
            case .blurHashEncode(let pixels, let components):
                ["op": "blurhash-encode", "width": pixels.width, "height": pixels.height,
                 "rgba": Data(pixels.rgba).base64EncodedString(), "x": components.x, "y": components.y]
            case .blurHashDecode(let hash, let width, let height, let punch):
                ["op": "blurhash-decode", "hash": hash, "width": width, "height": height, "punch": punch]
            }
        }
    }

    /// What the reference answered to one item: a hash for an encode, pixels for a decode.
    struct Answer {
        var hash: String?
        var pixels: Pixels?
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The reference's answers to `items`, in order; throws (failing the test) when Python or a
    /// package is missing or the script fails.
    static func ask(_ items: [Item]) throws -> [Answer] {
        let request = FileManager.default.temporaryDirectory
            .appendingPathComponent("placeholder-reference-\(getpid())-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: ["items": items.map(\.json)]).write(to: request)
        defer { try? FileManager.default.removeItem(at: request) }
        let run = try CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, request.path])
        guard run.status == 0, run.exited else {
            throw Failure(description: "placeholder-reference.py exited with \(run.status): \(run.stderr.suffix(2000))")
        }
        guard let answers = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]],
              answers.count == items.count else {
            throw Failure(description: "placeholder-reference.py answered \(run.stdout.prefix(500))")
        }
        return try answers.map { answer in
            var result = Answer(hash: answer["hash"] as? String)
            if let width = answer["width"] as? Int, let height = answer["height"] as? Int, let rgba = answer["rgba"] as? String {
                guard let bytes = Data(base64Encoded: rgba), bytes.count == width * height * 4 else {
                    throw Failure(description: "placeholder-reference.py answered \(width)×\(height) with malformed pixels")
                }
                result.pixels = Pixels(width: width, height: height, rgba: Array(bytes))
            }
            return result
        }
    }
}
