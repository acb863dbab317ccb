import Foundation
import WebImage
import WebImageTestSupport

/// The desktop gallery (`webimage-gtk`, release build) scrolled through 2,000 images at 60 rows
/// a second under Xvfb (issue 14's target), driven over its `--automation` commands.
///
/// Every URL is a 128 px PNG of its own colour (with a little noise, so it weighs about 40 KB),
/// served by a loopback origin that paces its bodies (8 KB every 10 ms): a thumbnail takes
/// tens of milliseconds, and at 60 rows a second most cells leave the screen before their
/// download could start. The figures:
///
/// - **stale images displayed**: at every frame the gallery reads its window back and samples
///   each bound cell on screen; a sample of another item's colour is stale. Added to it, the
///   views' own reports of an image shown for another URL. Must be 0. Samples of no item's
///   colour and not the placeholder's (the background, where a cell drew nothing in that
///   frame) are counted apart.
/// - **bytes downloaded for cells that left the screen before their download started**: the
///   body bytes of every request whose download started (left the loader's queue and sent its
///   request, which the gallery logs on `CLOCK_MONOTONIC`, the clock the origin stamps arrivals
///   with) while no cell was bound to its item (binds and unbinds logged on the same clock).
///   Must be 0: unbinding cancels, and a cancelled load that was still queued never sends its
///   request.
/// - **peak RSS** (`VmHWM`) against the RSS before the scroll plus the thumbnails' memory cache
///   limit (16 MiB) plus an allowance of 64 MiB (decode buffers in flight, the textures of the
///   cells on screen, the window read back every frame, allocator slack).
func runGalleryScrollBenchmarks(_ report: Report) {
    guard let executable = galleryExecutable, let xvfb = xvfbExecutable else {
        let missing = galleryExecutable == nil ? "webimage-gtk was not built beside the benchmarks (make bench builds it)" : "Xvfb is not installed"
        print("gallery: skipped, \(missing)")
        FileHandle.standardError.write(Data("  gallery: skipped, \(missing)\n".utf8))
        return
    }
    let result: GalleryScrollResult
    do {
        result = try waitFor { await Result { try await scrollGallery(executable: executable, xvfb: xvfb) } }.get()
    } catch {
        print("gallery: skipped, the run failed: \(error)")
        FileHandle.standardError.write(Data("  gallery: skipped, the run failed: \(error)\n".utf8))
        return
    }
    report.add(.init(
        group: "gallery", name: "stale images displayed, 2,000 images at 60 rows/s (\(result.frames) frames in \(String(format: "%.1f", result.seconds)) s)",
        ours: Double(result.staleSamples + result.staleDisplays), reference: Double(result.samples),
        referenceName: "cell samples read back (\(result.placeholderSamples) placeholders)", unit: "", goal: .valueAtMost(0)))
    report.add(.init(
        group: "gallery", name: "cell samples showing nothing (the background: neither an image nor the placeholder)",
        ours: Double(result.blankSamples), reference: Double(result.samples),
        referenceName: "cell samples read back", unit: "", goal: .none))
    report.add(.init(
        group: "gallery", name: "bytes downloaded for cells that left the screen before their download started (\(result.unboundRequests) requests, "
            + "\(result.unboundCompleted) sent whole; started \(delays(result.unboundDelays)) after the unbind)",
        ours: Double(result.unboundBytes) / 1024, reference: Double(result.downloadedBytes) / 1024,
        referenceName: "bytes downloaded in all (\(result.requests) requests for \(result.boundItems) items bound)", unit: "KB", goal: .valueAtMost(0)))
    report.add(.init(
        group: "gallery", name: "peak RSS while scrolling",
        ours: Double(result.peakRSS) / 1_048_576, reference: Double(result.baselineRSS + galleryMemoryLimit + galleryAllowance) / 1_048_576,
        referenceName: "RSS before (\(result.baselineRSS >> 20) MiB) + cache limit 16 MiB + allowance 64 MiB", unit: "MiB", goal: .ratioAtMost(1.0)))
}

/// "median M ms, max X ms" of `milliseconds`.
private func delays(_ milliseconds: [Double]) -> String {
    guard !milliseconds.isEmpty else { return "-" }
    let sorted = milliseconds.sorted()
    return String(format: "median %.1f ms, max %.1f ms", sorted[sorted.count / 2], sorted[sorted.count - 1])
}

private let galleryImages = 2000
private let galleryMemoryLimit = 16 << 20
private let galleryAllowance = 64 << 20

private var galleryExecutable: URL? {
    let url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("webimage-gtk")
    return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
}

private var xvfbExecutable: URL? {
    ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"].map(URL.init(fileURLWithPath:)).first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

struct GalleryScrollResult: Sendable {
    var frames = 0, seconds = 0.0
    var samples = 0, staleSamples = 0, placeholderSamples = 0, staleDisplays = 0
    /// Samples of neither an image nor the placeholder: the grid's background where a cell drew nothing.
    var blankSamples = 0
    var requests = 0, downloadedBytes = 0, unboundRequests = 0, unboundBytes = 0, boundItems = 0
    /// Of the requests for unbound items: those whose response was sent whole, and how many
    /// milliseconds after the unbind each started.
    var unboundCompleted = 0, unboundDelays: [Double] = []
    var baselineRSS = 0, peakRSS = 0
}

private func scrollGallery(executable: URL, xvfb: URL) async throws -> GalleryScrollResult {
    let origin = try await TestOrigin.start()
    defer { Task { try? await origin.shutdown() } }
    let colours = SolidColours.palette(count: galleryImages)
    let list = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-gallery-\(getpid()).txt")
    defer { try? FileManager.default.removeItem(at: list) }
    var lines: [String] = []
    for (index, colour) in colours.enumerated() {
        origin.register("/c/\(index).png", data: try noisyPNG(colour, seed: UInt64(index)))
        lines.append(origin.url("/slow/c/\(index).png?chunk=8192&delayMs=10").absoluteString)
    }
    try (lines.joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
    progress("\(galleryImages) images on the origin")

    let server = try ChildProcess(xvfb, ["-displayfd", "1", "-screen", "0", "640x480x24", "-nolisten", "tcp"])
    defer { server.kill(SIGKILL) }
    guard let display = await server.waitForLine(where: { Int($0) != nil }) else { throw GalleryBenchmarkError.noDisplay(server.stderr) }
    let gallery = try ChildProcess(executable, [
        list.path, "--automation", "--no-disk-cache", "--size", "640x480", "--cell", "64", "--memory-limit", String(galleryMemoryLimit >> 20),
    ], environment: ["DISPLAY": ":" + display, "GDK_BACKEND": "x11", "GSK_RENDERER": "cairo", "NO_AT_BRIDGE": "1", "GTK_A11Y": "none"])
    defer { gallery.kill() }
    guard let ready = await within(.seconds(120), { await gallery.waitForLine(where: { $0.hasPrefix("ready ") }) }) else {
        throw GalleryBenchmarkError.noGallery(gallery.stderr)
    }
    progress(ready)
    let placeholder = SolidColours.RGB(hex: fields(ready)["placeholder"] ?? "")
    let before = fields(await gallery.ask("stats", expecting: "stats ") ?? "")
    // 223 rows at 60 a second take under 4 s; two minutes means the scroll is stuck.
    guard let done = await within(.seconds(120), { await gallery.ask("autoscroll 60", expecting: "autoscrolled ") }) else {
        throw GalleryBenchmarkError.stuck(gallery.stdout.suffix(3) + gallery.stderr.suffix(5))
    }
    progress(done)
    let after = fields(await gallery.ask("stats", expecting: "stats ") ?? "")
    gallery.send("quit")

    var result = GalleryScrollResult()
    result.frames = Int(fields(done)["frames"] ?? "") ?? 0
    result.seconds = Double(fields(done)["seconds"] ?? "") ?? 0
    result.baselineRSS = Int(before["rss"] ?? "") ?? 0
    result.peakRSS = Int(after["peak"] ?? "") ?? 0
    let output = gallery.stdout
    tallySamples(output, colours: colours, placeholder: placeholder, into: &result)
    tallyRequests(output, records: origin.allRequests, into: &result)
    return result
}

/// Every frame's samples: each the cell's own colour, the placeholder's, or stale.
private func tallySamples(_ output: [String], colours: [SolidColours.RGB], placeholder: SolidColours.RGB?, into result: inout GalleryScrollResult) {
    for line in output {
        if line.hasPrefix("stale ") {
            result.staleDisplays += 1
            progress(line)
        }
        guard line.hasPrefix("frame ") else { continue }
        for sample in line.split(separator: " ").dropFirst(2) {
            let parts = sample.split(separator: ":")
            guard parts.count == 2, let position = Int(parts[0]), colours.indices.contains(position),
                  let shown = SolidColours.RGB(hex: String(parts[1])) else { continue }
            result.samples += 1
            if shown.isClose(to: colours[position]) { continue }
            if let placeholder, shown.isClose(to: placeholder) {
                result.placeholderSamples += 1
            } else if let other = colours.firstIndex(where: { shown.isClose(to: $0) }) {
                result.staleSamples += 1
                progress("stale sample: cell \(position) shows item \(other)'s colour at scroll \(line.split(separator: " ")[1])")
            } else {
                result.blankSamples += 1
                progress("blank sample: cell \(position) shows \(shown) at scroll \(line.split(separator: " ")[1])")
            }
        }
    }
}

/// Every request the origin saw, against the times each item was bound to a cell.
private func tallyRequests(_ output: [String], records: [TestOrigin.Record], into result: inout GalleryScrollResult) {
    var bindings: [Int: [(bound: UInt64, unbound: UInt64)]] = [:]
    for line in output {
        let words = line.split(separator: " ")
        guard words.count == 3, let position = Int(words[1]), let time = UInt64(words[2]) else { continue }
        if words[0] == "bound" { bindings[position, default: []].append((time, .max)) }
        if words[0] == "unbound", let last = bindings[position]?.indices.last { bindings[position]![last].unbound = time }
    }
    result.boundItems = bindings.count
    // When each download sent its request, in the gallery, by path: a request's start is the
    // latest start of its path before it arrived. A request sent just before an unbind can arrive
    // just after it; the start, not the arrival, says whether the download began for a cell on
    // screen.
    var starts: [String: [UInt64]] = [:]
    for line in output where line.hasPrefix("started ") {
        let words = line.split(separator: " ")
        guard words.count == 3, let url = URL(string: String(words[1])), let time = UInt64(words[2]) else { continue }
        starts[url.path, default: []].append(time)
    }
    for record in records where record.path.hasPrefix("/slow/c/") {
        result.requests += 1
        result.downloadedBytes += record.bodyBytesSent
        guard let position = Int(record.path.dropFirst("/slow/c/".count).split(separator: ".")[0]) else { continue }
        let started = starts[record.path, default: []].last { $0 <= record.arrivalNanoseconds } ?? record.arrivalNanoseconds
        let intervals = bindings[position, default: []]
        let shown = intervals.contains { $0.bound <= started && started <= $0.unbound }
        if !shown {
            result.unboundRequests += 1
            result.unboundBytes += record.bodyBytesSent
            if record.outcome == .completed { result.unboundCompleted += 1 }
            // How long after the item's last unbind the request arrived.
            if let unbound = intervals.last(where: { $0.unbound <= started })?.unbound {
                result.unboundDelays.append(Double(started - unbound) / 1e6)
            }
        }
    }
}

/// A 128 px PNG of `colour` with ±2 of noise per channel: about 40 KB, where a flat colour
/// would compress to almost nothing and cost no download time.
private func noisyPNG(_ colour: SolidColours.RGB, seed: UInt64) throws -> Data {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    let base = [colour.red, colour.green, colour.blue]
    let pixels = (0..<(128 * 128 * 3)).map { index -> UInt8 in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17   // xorshift64: cheap noise, the same every run
        return UInt8(clamping: Int(base[index % 3]) + Int(state % 5) - 2)
    }
    return try CoderRegistry.system().encode(ImageContainer(image: try Bitmap(width: 128, height: 128, pixelFormat: .rgb8, pixels: pixels)), as: .png)
}

private func progress(_ line: String) {
    FileHandle.standardError.write(Data("  gallery: \(line)\n".utf8))
}

private func fields(_ line: String) -> [String: String] {
    Dictionary(line.split(separator: " ").compactMap { word -> (String, String)? in
        let parts = word.split(separator: "=", maxSplits: 1)
        return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
    }, uniquingKeysWith: { $1 })
}

/// `body`'s answer, or `nil` once `limit` has passed (which cancels it).
private func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T?) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

enum GalleryBenchmarkError: Error {
    case noDisplay([String])
    case noGallery([String])
    case stuck([String])
}
