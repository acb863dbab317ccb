import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// The smart crop beside libvips' attention crop (pyvips `smartcrop(interesting='attention')`,
/// the public reference the issue names), on the corpus photos: the largest square of each,
/// as a square thumbnail cuts it. Ours is computed on a 512 px decode, as the proxy would;
/// libvips works on the full image. The windows are compared in fractions of the image.
@Suite(
    .enabled(if: Reference.corpus != nil, "../shared/corpus is absent"),
    .enabled(if: LibvipsAttention.windows != nil, "pyvips is not installed (pip install pyvips pyvips-binary)")
)
struct SmartCropReferenceTests {
    static func intersectionOverUnion(_ a: [Double], _ b: [Double]) -> Double {
        let width = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
        let height = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
        let intersection = width * height
        return intersection / (a[2] * a[3] + b[2] * b[3] - intersection)
    }

    @Test func windowsOverlapLibvipsAttentionOnFourPhotosInFive() throws {
        let reference = try #require(LibvipsAttention.windows)
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(512)
        options.colorSpace = .preserve   // libvips does not convert either
        var scores: [(String, Double)] = []
        for photo in LibvipsAttention.photos {
            guard let theirs = reference[photo.path] else { continue }
            let image = try CoderRegistry.system().decode(try Data(contentsOf: photo), options: options).image
            let side = min(image.width, image.height)
            let window = ImageProcessors.SmartCrop(width: side, height: side).window(in: image)
            let ours = [Double(window.x) / Double(image.width), Double(window.y) / Double(image.height),
                        Double(window.width) / Double(image.width), Double(window.height) / Double(image.height)]
            scores.append((photo.lastPathComponent, Self.intersectionOverUnion(ours, theirs)))
        }
        #expect(scores.count >= 20, "\(scores.count) photos compared")
        let close = scores.filter { $0.1 >= 0.6 }.count
        let report = scores.map { "\($0.0) \(String(format: "%.2f", $0.1))" }.joined(separator: ", ")
        print("smart crop IoU with libvips attention: \(close) of \(scores.count) ≥ 0.6: \(report)")
        #expect(Double(close) >= 0.8 * Double(scores.count), "\(report)")
    }
}

/// libvips' attention windows for the corpus photos, from pyvips in a child process.
enum LibvipsAttention {
    static let photos: [URL] = {
        guard let corpus = Reference.corpus else { return [] }
        let folder = corpus.appendingPathComponent("photos")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { [".jpg", ".png", ".webp"].contains(where: $0.hasSuffix) }.sorted().map { folder.appendingPathComponent($0) }
    }()

    /// libvips' window for the largest square of each photo, as fractions (x, y, width, height).
    static let windows: [String: [Double]]? = {
        let script = """
            import json, sys, pyvips
            out = {}
            for path in sys.argv[1:]:
                image = pyvips.Image.new_from_file(path)
                side = min(image.width, image.height)
                _, opts = image.smartcrop(side, side, interesting='attention', attention_x=True, attention_y=True)
                x = min(max(0, opts['attention_x'] - side // 2), image.width - side)
                y = min(max(0, opts['attention_y'] - side // 2), image.height - side)
                out[path] = [x / image.width, y / image.height, side / image.width, side / image.height]
            print(json.dumps(out))
            """
        guard !photos.isEmpty, let run = try? CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script] + photos.map(\.path)),
              run.status == 0, let data = run.stdout.data(using: .utf8) else { return nil }
        return try? JSONDecoder().decode([String: [Double]].self, from: data)
    }()
}
