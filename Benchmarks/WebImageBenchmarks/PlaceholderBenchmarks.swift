import Foundation
import WebImage

/// The placeholder hashes (issue 30's target): computing a ThumbHash and a 4 × 3 BlurHash of a
/// decoded 256 px thumbnail must cost at most 5 % of that thumbnail's decode, since the pipeline
/// computes the ThumbHash of every source it decodes. The thumbnail is the corpus's 5120 × 2880
/// baseline JPEG (14.7 MP, the corpus's nearest to a 12 MP camera photo) decoded as the pipeline
/// decodes thumbnails (`ImageDecodingOptions.thumbnail`, `.maxPixelSize(256)`: DCT scaling,
/// then Lanczos).
func runPlaceholderBenchmarks(_ report: Report) {
    placeholderLookupBenchmark(report)
    let path = "../shared/corpus/photos/shell-5120x2880.jpg"
    guard let data = FileManager.default.contents(atPath: path) else {
        FileHandle.standardError.write(Data("  placeholders: \(path) is absent; skipped\n".utf8))
        return
    }
    let registry = CoderRegistry.system()
    var options = ImageDecodingOptions()
    options.thumbnail = .maxPixelSize(256)
    guard let thumbnail = try? registry.decode(data, options: options).image else {
        FileHandle.standardError.write(Data("  placeholders: \(path) does not decode; skipped\n".utf8))
        return
    }
    let decode = seconds(rounds: 7) { blackHole(try? registry.decode(data, options: options)) }
    // The hashes take well under a millisecond: many to a round, for the clock's resolution.
    let batch = 50
    let thumbHash = nanosecondsPerOperation(operations: batch) {
        for _ in 0..<batch { blackHole(ThumbHash(encoding: thumbnail)) }
    }
    let blurHash = nanosecondsPerOperation(operations: batch) {
        for _ in 0..<batch { blackHole(try? BlurHash(encoding: thumbnail, components: .init(x: 4, y: 3))) }
    }
    let both = nanosecondsPerOperation(operations: batch) {
        for _ in 0..<batch {
            blackHole(ThumbHash(encoding: thumbnail))
            blackHole(try? BlurHash(encoding: thumbnail, components: .init(x: 4, y: 3)))
        }
    }
    let size = "\(thumbnail.width)×\(thumbnail.height)"
    let referenceName = "decoding that thumbnail (5120×2880 JPEG to 256 px)"
    report.add(.init(group: "placeholders", name: "ThumbHash + BlurHash (4×3) of a decoded \(size) thumbnail",
                     ours: both / 1e6, reference: decode * 1000, referenceName: referenceName, unit: "ms", goal: .ratioAtMost(0.05)))
    report.add(.init(group: "placeholders", name: "ThumbHash alone, \(size)",
                     ours: thumbHash / 1e6, reference: decode * 1000, referenceName: referenceName, unit: "ms", goal: .none))
    report.add(.init(group: "placeholders", name: "BlurHash (4×3) alone, \(size)",
                     ours: blurHash / 1e6, reference: decode * 1000, referenceName: referenceName, unit: "ms", goal: .none))
}
