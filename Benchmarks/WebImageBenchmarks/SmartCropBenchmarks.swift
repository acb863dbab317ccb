import Foundation
import WebImage

/// `ImageProcessors.SmartCrop` against libvips' attention crop (pyvips,
/// Benchmarks/scripts/smartcrop_reference.py) on the corpus photos, square crops of the shorter
/// side: how many windows overlap libvips' by an intersection-over-union of at least 0.6 (issue
/// 12's target: 80 % of the photos), and what finding the window costs beside a whole smart
/// thumbnail (decode, window, crop, 300 px resize, JPEG encode; target ≤ 10 %).
func runSmartCropBenchmarks(_ report: Report) {
    let photos = "../shared/corpus/photos"
    guard FileManager.default.fileExists(atPath: photos), let reference = smartCropReference(photos) else {
        FileHandle.standardError.write(Data("  smartcrop: the corpus or pyvips is missing; skipped\n".utf8))
        return
    }
    let registry = CoderRegistry.system()
    var agreeing = 0, compared = 0
    var windowTime = 0.0, requestTime = 0.0
    for (name, window) in reference.sorted(by: { $0.key < $1.key }) {
        guard let data = FileManager.default.contents(atPath: photos + "/" + name), let image = try? registry.decode(data) else { continue }
        let side = window[2]
        let crop = ImageProcessors.SmartCrop(width: side, height: side)
        let ours = crop.window(in: image.image)
        compared += 1
        if intersectionOverUnion((ours.x, ours.y), (window[0], window[1]), side: side) >= 0.6 { agreeing += 1 }
        windowTime += Double(nanosecondsPerOperation(operations: 1, rounds: 3) { blackHole(crop.window(in: image.image)) })
        requestTime += Double(nanosecondsPerOperation(operations: 1, rounds: 3) {
            guard let decoded = try? registry.decode(data), let cropped = try? crop.process(decoded),
                  let resized = try? cropped.image.resized(width: 300, height: 300) else { return }
            blackHole(try? registry.encode(ImageContainer(image: resized), as: .jpeg))
        })
    }
    report.add(.init(
        group: "smartcrop", name: "photos whose window overlaps libvips' attention crop by IoU ≥ 0.6 (square crops, \(compared) photos)",
        ours: Double(agreeing) / Double(max(1, compared)) * 100, reference: 80, referenceName: "the issue's 80 %", unit: "%",
        goal: .differenceAtLeast(0)))
    report.add(.init(
        group: "smartcrop", name: "finding the window, summed over the photos",
        ours: windowTime / 1e6, reference: requestTime / 1e6,
        referenceName: "the whole smart thumbnail (decode, window, crop, 300 px, JPEG)", unit: "ms", goal: .ratioAtMost(0.1)))
}

private func intersectionOverUnion(_ a: (Int, Int), _ b: (Int, Int), side: Int) -> Double {
    let width = max(0, min(a.0, b.0) + side - max(a.0, b.0)), height = max(0, min(a.1, b.1) + side - max(a.1, b.1))
    let intersection = Double(width * height)
    return intersection / (2 * Double(side * side) - intersection)
}

private func smartCropReference(_ photos: String) -> [String: [Int]]? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "Benchmarks/scripts/smartcrop_reference.py", photos]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return nil }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return try? JSONDecoder().decode([String: [Int]].self, from: output)
}
