import Foundation
import WebImage

/// Peak memory while prefetching 500 photo URLs from nginx into a fresh disk cache, then loading
/// them as 256 px thumbnails through a memory cache with a cost limit smaller than all the
/// thumbnails together. Measured in a child process (VmHWM from /proc/self/status), so that
/// nothing an earlier group allocated counts.
func runPrefetchBenchmarks(_ report: Report) {
    guard let (photos, names) = decodableCorpusPhotos(for: "prefetch") else { return }
    guard let nginx = Nginx(root: photos) else { return }
    defer { nginx.stop() }
    let sizes = names.map { (try? FileManager.default.attributesOfItem(atPath: photos.appendingPathComponent($0).path)[.size] as? Int) ?? 0 }
    let largest = sizes.max() ?? 0
    let count = 500
    let costLimit = 32 << 20
    let cacheFolder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-prefetch-\(getpid())")
    defer { try? FileManager.default.removeItem(at: cacheFolder) }

    let arguments = ["prefetch", String(nginx.port), String(count), cacheFolder.path, String(costLimit)] + names
    let output = childOutput(arguments)
    let fields = output.split(separator: " ").compactMap { Int($0) }
    guard fields.count == 8 else {
        FileHandle.standardError.write(Data("  prefetch: the child failed: \(output)\n".utf8))
        return
    }
    // The same run as the `webimage` command runs it: with ProcessMemory's fixed mmap threshold,
    // freed decode buffers go back to the system instead of staying in malloc's arenas.
    let tuned = childOutput(arguments + ["--return-large-blocks"]).split(separator: " ").compactMap { Int($0) }
    let (baseline, afterPrefetch, peak, finished, failed, bytes, memoryCost, thumbnails) =
        (fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], fields[6], fields[7])
    let mib = { (kib: Int) in Double(kib) / 1024 }
    FileHandle.standardError.write(Data(String(format: "  prefetch: %d finished, %d failed, %.1f MiB downloaded; %d thumbnails, %.1f MiB in memory; VmHWM %.1f MiB (baseline %.1f)\n",
                                               finished, failed, Double(bytes) / 1_048_576, thumbnails, Double(memoryCost) / 1_048_576, mib(peak), mib(baseline)).utf8))

    // Prefetching alone keeps no pixels and no bodies: what it holds is the downloads in flight
    // (3 prefetches; the loader's 6 slots at most), each at most the largest photo.
    let downloadBuffers = 6 * largest
    report.add(.init(group: "prefetch", name: "peak RSS above baseline, prefetching \(count) photo URLs (disk only, 3 at once)",
                     ours: mib(afterPrefetch - baseline), reference: Double(downloadBuffers) / 1_048_576,
                     referenceName: "in-flight buffers: 6 downloads × largest photo", unit: "MiB", goal: .valueAtMost(Double(downloadBuffers) / 1_048_576)))
    // Then the thumbnails: the memory cache holds at most its limit; in flight are 6 loads (the
    // bytes read from disk) and one decode per decode thread. A decode's working memory is
    // measured per photo, alone in a child process (a progressive JPEG keeps every DCT
    // coefficient of the full image, ~90 MiB at 5120×2880, however small the thumbnail); the
    // allowance takes the costliest ones, one per decode thread.
    let decodeBaseline = Int(childOutput(["memory", "none", photos.appendingPathComponent(names[0]).path])) ?? 0
    let decodePeaks = names.map { name in
        max(0, (Int(childOutput(["memory", "thumbnail", photos.appendingPathComponent(name).path])) ?? 0) - decodeBaseline) * 1024
    }.sorted(by: >)
    if decodePeaks.first == 0 {
        FileHandle.standardError.write(Data("  prefetch: measuring the thumbnail decodes alone failed; the allowance lacks them\n".utf8))
    }
    let decodeWorkingSet = decodePeaks.prefix(BlockingExecutor.decoding.width).reduce(0, +)
    let inFlight = 6 * largest + decodeWorkingSet
    let allowance = Double(costLimit + inFlight) / 1_048_576
    report.add(.init(group: "prefetch", name: "peak RSS above baseline, prefetch then \(count) × 256 px thumbnails (glibc's malloc defaults)",
                     ours: mib(peak - baseline), reference: Double(costLimit) / 1_048_576,
                     referenceName: String(format: "memory cache cost limit (+ in flight: 6 loads × largest photo %.0f MiB, %d costliest thumbnail decodes %.0f MiB)",
                                           Double(6 * largest) / 1_048_576, BlockingExecutor.decoding.width, Double(decodeWorkingSet) / 1_048_576),
                     unit: "MiB", goal: .none))
    if tuned.count == 8 {
        report.add(.init(group: "prefetch", name: "the same as the webimage command runs it (ProcessMemory.returnLargeBlocksToSystem())",
                         ours: mib(tuned[2] - tuned[0]), reference: allowance,
                         referenceName: "the allowance: cache limit + in flight (row above)", unit: "MiB", goal: .valueAtMost(allowance)))
    }
}

/// The child side: prefetch, then load every URL as a thumbnail (6 at a time, as a screen of
/// cells would), then print `baseline afterPrefetch peak finished failed bytes memoryCost
/// thumbnails` (memory in KiB).
func runPrefetchChild(_ arguments: [String]) -> Never {
    let port = arguments[0], count = Int(arguments[1])!, folder = URL(fileURLWithPath: arguments[2]), costLimit = Int(arguments[3])!
    var names = Array(arguments.dropFirst(4))
    if names.last == "--return-large-blocks" {
        names.removeLast()
        ProcessMemory.returnLargeBlocksToSystem()
    }
    let urls = (0..<count).map { URL(string: "http://127.0.0.1:\(port)/\(names[$0 % names.count])?n=\($0)")! }
    try? FileManager.default.removeItem(at: folder)
    let disk = try! DiskCache(directory: folder)
    let memory = MemoryCache<ImageCacheKey, ImageContainer>(configuration: .init(costLimit: costLimit))
    let manager = ImageManager(configuration: .standard(cache: ImageCache(memory: memory, disk: disk)))
    let baseline = procStatusKiB("VmRSS")

    let summary = waitFor {
        let summary = await ImagePrefetcher(manager: manager).prefetch(urls)
        await manager.waitUntilIdle()
        return summary
    }
    let afterPrefetch = procStatusKiB("VmHWM")
    let thumbnails = waitFor {
        await withTaskGroup(of: Bool.self) { group in
            var next = 0, loaded = 0
            func add() {
                let url = urls[next]
                next += 1
                group.addTask {
                    (try? await manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(256)))) != nil
                }
            }
            while next < min(6, urls.count) { add() }
            while let ok = await group.next() {
                if ok { loaded += 1 }
                if next < urls.count { add() }
            }
            return loaded
        }
    }
    let peak = procStatusKiB("VmHWM")
    print(baseline, afterPrefetch, peak, summary.finished, summary.failed, summary.bytes, memory.totalCost, thumbnails)
    exit(0)
}

/// A `kB` field of /proc/self/status (VmRSS, VmHWM).
func procStatusKiB(_ field: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
    }
    return 0
}

/// Runs this very binary with `--child` and returns what it printed.
private func childOutput(_ arguments: [String], environment: [String: String] = [:]) -> String {
    let process = Process()
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let length = buffer.withUnsafeMutableBufferPointer { readlink("/proc/self/exe", $0.baseAddress!, $0.count) }
    process.executableURL = URL(fileURLWithPath: length > 0 ? String(decoding: buffer[..<length], as: UTF8.self) : CommandLine.arguments[0])
    process.arguments = ["--child"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try! process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
