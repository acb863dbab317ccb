import Foundation
import WebImage
import WebImageTestSupport

/// HEIC and AVIF beside libvips over the same Debian libheif (Benchmarks/scripts/formats_peers.py,
/// pyvips on Debian's libvips42, one thread), on corpus photos converted by libvips:
///
/// - decode and 256 px thumbnail of each file, summed over the files (issue target: ≥ 1.0×
///   libvips' rate, so ours / theirs ≤ 1);
/// - AVIF encode of a 512 px thumbnail: ours (libavif over libaom at speed 10) beside libvips'
///   heifsave (libheif over libaom at effort 0, its fastest) at the quality that gives the same
///   size, time and DSSIM against the thumbnail (lower is better) summed over the files.
func runFormatBenchmarks(_ report: Report) {
    let photos = "../shared/corpus/photos"
    guard FileManager.default.fileExists(atPath: photos) else {
        FileHandle.standardError.write(Data("  formats: \(photos) is absent; skipped\n".utf8))
        return
    }
    let folder = TemporaryDirectory("formats-bench")
    defer { folder.remove() }
    let count = Int(ProcessInfo.processInfo.environment["BENCH_FORMAT_PHOTOS"] ?? "") ?? 6
    guard runPeerScript(["prepare", folder.path, photos, String(count)]) != nil else { return }
    let registry = CoderRegistry.system()
    var ours: [String: Double] = [:]
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    for name in files {
        guard let data = FileManager.default.contents(atPath: folder.url.appendingPathComponent(name).path) else { continue }
        if name.hasSuffix(".heic") || name.hasSuffix(".avif") {
            var thumbnail = ImageDecodingOptions()
            thumbnail.thumbnail = .maxPixelSize(256)
            ours["decode:" + name] = seconds(rounds: 5) { blackHole(try? registry.decode(data)) }
            ours["thumbnail:" + name] = seconds(rounds: 5) { blackHole(try? registry.decode(data, options: thumbnail)) }
        } else if name.hasSuffix("-512.png"), let image = try? registry.decode(data) {
            var options = ImageEncodingOptions()
            options.quality = 60
            let encoder = AVIFEncoder(speed: 10)
            guard let avif = try? encoder.encode(image, options: options) else { continue }
            let stem = String(name.dropLast("-512.png".count))
            try? avif.write(to: folder.url.appendingPathComponent(stem + "-ours.avif"))
            // Nine rounds, as formats_peers.py times libvips: a 512 px encode takes 4–9 ms, and
            // medians of three moved the sum by ±8 % between runs on a 2-vCPU VM.
            ours["encode:" + stem] = seconds(rounds: 9) { blackHole(try? encoder.encode(image, options: options)) }
        }
    }
    guard let theirs = runPeerScript(["time", folder.path]) else { return }
    reportFormats(report, ours: ours, theirs: theirs, photos: count)
}

private func reportFormats(_ report: Report, ours: [String: Double], theirs: [String: Double], photos: Int) {
    let libvips = theirs["libvips"].map { "libvips \(Int($0) / 100).\(Int($0) % 100)" } ?? "libvips"
    for (format, suffix) in [("HEIC", ".heic"), ("AVIF", ".avif")] {
        for (task, label) in [("decode", "decode"), ("thumbnail", "256 px thumbnail")] {
            let keys = ours.keys.filter { $0.hasPrefix(task + ":") && $0.hasSuffix(suffix) }
            let mine = keys.reduce(0) { $0 + ours[$1]! }, reference = keys.reduce(0) { $0 + (theirs[$1] ?? .nan) }
            report.add(.init(
                group: "formats", name: "\(format) \(label), \(keys.count) corpus photos", ours: mine * 1000, reference: reference * 1000,
                referenceName: format == "HEIC" ? "pyvips on Debian's \(libvips), same libheif, 1 thread" : "pyvips on Debian's \(libvips) (AVIF through libheif), 1 thread", unit: "ms", goal: .ratioAtMost(1.0)))
        }
    }
    let stems = ours.keys.filter { $0.hasPrefix("encode:") }.map { String($0.dropFirst("encode:".count)) }
    let time = stems.reduce(0) { $0 + ours["encode:" + $1]! }, theirTime = stems.reduce(0) { $0 + (theirs["encode:" + $1] ?? .nan) }
    report.add(.init(
        group: "formats", name: "AVIF encode of a 512 px thumbnail, \(stems.count) photos (libaom speed 10 vs heifsave effort 0, equal size)",
        ours: time * 1000, reference: theirTime * 1000, referenceName: "pyvips heifsave", unit: "ms", goal: .ratioAtMost(1.0)))
    let quality = stems.reduce(0) { $0 + (theirs["dssim-ours:" + $1] ?? .nan) }, theirQuality = stems.reduce(0) { $0 + (theirs["dssim-theirs:" + $1] ?? .nan) }
    report.add(.init(
        group: "formats", name: "AVIF 512 px DSSIM at equal size (lower is better), summed",
        ours: quality, reference: theirQuality, referenceName: "pyvips heifsave", unit: "", goal: .ratioAtMost(1.0)))
}

/// Runs formats_peers.py; its JSON output (empty for `prepare`), or `nil` after saying why.
private func runPeerScript(_ arguments: [String]) -> [String: Double]? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "Benchmarks/scripts/formats_peers.py"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch {
        FileHandle.standardError.write(Data("  formats: cannot run formats_peers.py: \(error); skipped\n".utf8))
        return nil
    }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        FileHandle.standardError.write(Data("  formats: formats_peers.py \(arguments[0]) failed (make bench installs libvips42 and pyvips); skipped\n".utf8))
        return nil
    }
    if output.isEmpty { return [:] }
    return try? JSONDecoder().decode([String: Double].self, from: output)
}
