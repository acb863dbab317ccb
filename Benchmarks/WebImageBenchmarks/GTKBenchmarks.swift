import Foundation
import Synchronization
import WebImage
import WebImageTestSupport

/// `WebImageView` in a real GTK window under Xvfb (the `webimage-gtk-probe` program, built
/// beside this one), over a loopback origin:
///
/// - **a memory hit on bind**: `setImage` on an image the memory cache holds shows it before it
///   returns; the time of the call, texture creation included, for 256 px thumbnails (the
///   issue's target: 50 µs), beside making the texture alone;
/// - **the player**: a 50 fps GIF of 640 × 480 frames (100 frames, 123 MB decoded, against the
///   32 MiB default limit) played for `BENCH_GTK_PLAY_SECONDS` (default 60) while as many
///   threads as there are cores decode JPEGs at normal priority: the share of frames shown
///   later than one frame interval after they were due (target < 1 %), and the most memory of
///   decoded frames the player held (never above its limit).
func runGTKBenchmarks(_ report: Report) {
    guard Xvfb.executable != nil, GTKProbe.executable != nil else {
        FileHandle.standardError.write(Data("  gtk: Xvfb or webimage-gtk-probe (make bench builds it) is missing; skipped\n".utf8))
        return
    }
    // Without a display the group is skipped, not the whole run ended.
    let outcome = waitFor { await Result { try await measureGTK() } }
    do {
        let (hits, play) = try outcome.get()
        report.add(.init(
            group: "gtk", name: "memory hit on bind, 256 px thumbnail, median of \(hits.count) (p99 \(String(format: "%.1f", hits.p99)) µs, \(hits.misses) misses)",
            ours: hits.median, reference: hits.texture,
            referenceName: "making its texture alone", unit: "µs", goal: .valueAtMost(50)))
        report.add(.init(
            group: "gtk", name: "animation frames shown more than a frame late, 50 fps, \(play.seconds) s under load (\(play.frames) frames)",
            ours: Double(play.late) / Double(max(1, play.frames)) * 100, reference: 1,
            referenceName: "the issue's 1 %", unit: "%", goal: .valueAtMost(1)))
        report.add(.init(
            group: "gtk", name: "decoded frames the player held at most (123 MB of frames in all)",
            ours: Double(play.peak) / 1_048_576, reference: Double(play.limit) / 1_048_576,
            referenceName: "its memory limit", unit: "MiB", goal: .ratioAtMost(1)))
    } catch {
        FileHandle.standardError.write(Data("  gtk: \(error); skipped\n".utf8))
    }
}

private struct HitResult: Sendable {
    var count = 0, misses = 0
    var median = 0.0, p99 = 0.0, texture = 0.0
}

private struct PlayResult: Sendable {
    var seconds = 0, frames = 0, late = 0, peak = 0, limit = 0
}

private func measureGTK() async throws -> (HitResult, PlayResult) {
    let origin = try await TestOrigin.start()
    defer { Task { try? await origin.shutdown() } }
    origin.register("/a.png", data: try solidThumbnail(red: 200))
    origin.register("/b.png", data: try solidThumbnail(red: 40))
    origin.register("/50fps.gif", data: try fiftyFPSGIF())
    let display = try await Xvfb.start()
    defer { display.stop() }
    let probe = try GTKProbe.start(origin: origin.baseURL.absoluteString, display: display.name)
    defer { probe.kill() }
    guard await probe.waitForLine(where: { $0 == "mapped" }) != nil else { throw Xvfb.Unavailable(description: "the probe did not map its window: \(probe.stderr)") }

    for path in ["/a.png", "/b.png"] {
        _ = await probe.ask("bind \(path)", expecting: "bound")
        _ = await probe.waitForLine { $0.hasPrefix("completed \(path)") }
    }
    let hitLine = await probe.ask("benchhit 5000 /a.png /b.png", expecting: "benchhit") ?? ""
    let hits = fields(of: hitLine)
    let hitResult = HitResult(
        count: Int(hits["n"] ?? 0), misses: Int(hits["misses"] ?? 0),
        median: hits["median"] ?? .nan, p99: hits["p99"] ?? .nan, texture: hits["texture"] ?? .nan)

    let seconds = Int(ProcessInfo.processInfo.environment["BENCH_GTK_PLAY_SECONDS"] ?? "") ?? 60
    let stop = StopFlag()
    let load = (0..<ProcessInfo.processInfo.activeProcessorCount).map { _ in
        Thread { busyDecoding(until: stop) }
    }
    load.forEach { $0.start() }
    let playLine = await probe.ask("benchplay \(seconds) /50fps.gif", expecting: "benchplay") ?? ""
    stop.stopped.store(true, ordering: .relaxed)
    let play = fields(of: playLine)
    probe.send("quit")
    _ = await probe.waitForExit()
    return (hitResult, PlayResult(
        seconds: seconds, frames: Int(play["frames"] ?? 0), late: Int(play["late"] ?? 0),
        peak: Int(play["peak"] ?? 0), limit: Int(play["limit"] ?? 0)))
}

/// "name=value" words of a probe's answer.
private func fields(of line: String) -> [String: Double] {
    Dictionary(line.split(separator: " ").compactMap { word -> (String, Double)? in
        let parts = word.split(separator: "=")
        guard parts.count == 2, let value = Double(parts[1]) else { return nil }
        return (String(parts[0]), value)
    }, uniquingKeysWith: { $1 })
}

/// A 256 × 256 PNG with a gradient, so that it is not one flat colour.
private func solidThumbnail(red: UInt8) throws -> Data {
    var pixels = [UInt8](repeating: 255, count: 256 * 256 * 4)
    for y in 0..<256 {
        for x in 0..<256 {
            let offset = (y * 256 + x) * 4
            pixels[offset] = red
            pixels[offset + 1] = UInt8(x)
            pixels[offset + 2] = UInt8(y)
        }
    }
    let bitmap = try Bitmap(width: 256, height: 256, pixelFormat: .rgba8, pixels: pixels)
    return try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .png)
}

/// 100 frames of 640 × 480 at 20 ms each (50 fps), a bar moving across a gradient.
private func fiftyFPSGIF() throws -> Data {
    let width = 640, height = 480
    let frames = try (0..<100).map { index -> AnimatedImage.Frame in
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        let bar = index * width / 100
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 4
                let onBar = abs(x - bar) < 8
                pixels[offset] = onBar ? 0 : UInt8(x * 255 / width)
                pixels[offset + 1] = onBar ? 0 : UInt8(y * 255 / height)
                pixels[offset + 2] = onBar ? 0 : 128
            }
        }
        return .init(bitmap: try Bitmap(width: width, height: height, pixelFormat: .rgba8, pixels: pixels), duration: .milliseconds(20))
    }
    let animation = AnimatedImage(frames: frames, loopCount: 0)
    return try CoderRegistry.system().encode(ImageContainer(image: frames[0].bitmap, animation: animation), as: .gif)
}

/// The load: decoding a corpus-sized JPEG again and again until told to stop.
private final class StopFlag: Sendable {
    let stopped = Atomic(false)
}

private func busyDecoding(until stop: StopFlag) {
    var pixels = [UInt8](repeating: 0, count: 1024 * 768 * 3)
    for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }
    guard let bitmap = try? Bitmap(width: 1024, height: 768, pixelFormat: .rgb8, pixels: pixels),
          let jpeg = try? CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .jpeg)
    else { return }
    let registry = CoderRegistry.system()
    while !stop.stopped.load(ordering: .relaxed) { _ = try? registry.decode(jpeg) }
}
