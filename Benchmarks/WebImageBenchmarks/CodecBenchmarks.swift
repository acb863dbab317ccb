import CPNG
import CTurboJPEG
import CWebP
import CCodecShims
import Foundation
import Synchronization
import WebImageCodecs
import WebImageCore

/// Codecs on the corpus photos: full decodes against the raw C library calls and Pillow,
/// 256 px thumbnails against pyvips and Pillow (one core and two), a Lanczos resize and q80
/// encodes against Pillow, and the peak memory of a thumbnail.
func runCodecBenchmarks(_ report: Report) {
    let photos = URL(fileURLWithPath: "../shared/corpus/photos")
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: photos.path).sorted() else {
        FileHandle.standardError.write(Data("  codecs: ../shared/corpus/photos is absent; skipped\n".utf8))
        return
    }
    let registry = CoderRegistry.system()
    let files = names.compactMap { name -> (name: String, data: Data, format: ImageFormat)? in
        guard let data = try? Data(contentsOf: photos.appendingPathComponent(name)),
              let format = ImageFormat(sniffing: data), registry.decoder(for: format) != nil else { return nil }
        return (name, data, format)
    }
    guard !files.isEmpty else {
        FileHandle.standardError.write(Data("  codecs: no decoders registered; skipped\n".utf8))
        return
    }
    guard let peers = measurePeers(photos: photos.path) else { return }

    // Full decodes, per format: total time over the format's photos.
    for format in [ImageFormat.jpeg, .png, .webp] {
        let set = files.filter { $0.format == format }
        guard !set.isEmpty else { continue }
        var ours = 0.0, raw = 0.0, pillow = 0.0, megapixels = 0.0
        for file in set {
            let rounds = file.data.count > 1_000_000 ? 3 : 7
            ours += seconds(rounds: rounds) { blackHole(try! registry.decode(file.data)) }
            raw += seconds(rounds: rounds) { blackHole(rawDecode(file.data, format: format)) }
            pillow += peers["pillow.decode:\(file.name)"] ?? .nan
            let header = ImageHeader(sniffing: file.data)
            megapixels += Double((header?.pixelWidth ?? 0) * (header?.pixelHeight ?? 0)) / 1e6
        }
        let name = "full decode, \(format.rawValue) (\(set.count) photos, \(Int(megapixels)) MP; \(Int(megapixels / ours)) MP/s)"
        report.add(.init(group: "codecs", name: name, ours: ours * 1000, reference: raw * 1000,
                         referenceName: rawName(format), unit: "ms", goal: .ratioAtMost(1 / 0.9)))
        report.add(.init(group: "codecs", name: name, ours: ours * 1000, reference: pillow * 1000,
                         referenceName: "Pillow 13 (decode to its native mode)", unit: "ms", goal: .ratioAtMost(1.0)))
    }

    // Thumbnails to 256 px, one core: every photo.
    var thumbnailOptions = ImageDecodingOptions()
    thumbnailOptions.thumbnail = .maxPixelSize(256)
    var oursThumbnails = 0.0, vips = 0.0, pillowThumbnails = 0.0
    var perFormat: [ImageFormat: (ours: Double, vips: Double, count: Int)] = [:]
    for file in files {
        let ours = seconds(rounds: 5) { blackHole(try! registry.decode(file.data, options: thumbnailOptions)) }
        let theirs = peers["pyvips.thumbnail:\(file.name)"] ?? .nan
        oursThumbnails += ours
        vips += theirs
        pillowThumbnails += peers["pillow.thumbnail:\(file.name)"] ?? .nan
        perFormat[file.format, default: (0, 0, 0)].ours += ours
        perFormat[file.format, default: (0, 0, 0)].vips += theirs
        perFormat[file.format, default: (0, 0, 0)].count += 1
    }
    // Where the time goes, per format (for information).
    for (format, sums) in perFormat.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
        report.add(.init(group: "codecs", name: "thumbnail 256 px, \(format.rawValue) only (\(sums.count) photos), 1 core", ours: sums.ours * 1000,
                         reference: sums.vips * 1000, referenceName: "pyvips thumbnail_buffer, VIPS_CONCURRENCY=1", unit: "ms", goal: .none))
    }
    let thumbnailName = "thumbnail 256 px, \(files.count) photos, 1 core"
    report.add(.init(group: "codecs", name: thumbnailName, ours: oursThumbnails * 1000, reference: vips * 1000,
                     referenceName: "pyvips thumbnail_buffer, VIPS_CONCURRENCY=1", unit: "ms", goal: .ratioAtMost(1 / 1.5)))
    report.add(.init(group: "codecs", name: thumbnailName, ours: oursThumbnails * 1000, reference: pillowThumbnails * 1000,
                     referenceName: "Pillow draft + thumbnail", unit: "ms", goal: .ratioAtMost(1 / 1.5)))

    // Both cores: two threads, against two worker processes, each side scheduled the same way:
    // the largest file first, each worker taking the next file when it is free. (A fixed split
    // by position put the three 16-megapixel WebPs, the slowest files on both sides, in one
    // half, so the row measured where they fell more than the decoders.)
    let largestFirst = files.sorted { $0.data.count > $1.data.count }
    let options = thumbnailOptions
    let twoCores = seconds(rounds: 3) {
        let next = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            while true {
                let index = next.withLock { index in
                    defer { index += 1 }
                    return index
                }
                guard index < largestFirst.count else { return }
                blackHole(try! registry.decode(largestFirst[index].data, options: options))
            }
        }
    }
    let twoCoreName = "thumbnail 256 px, \(files.count) photos, 2 cores"
    report.add(.init(group: "codecs", name: twoCoreName, ours: twoCores * 1000, reference: (peers["pyvips.thumbnail-set-2cores"] ?? .nan) * 1000,
                     referenceName: "pyvips, 2 worker processes", unit: "ms", goal: .ratioAtMost(1 / 1.5)))
    report.add(.init(group: "codecs", name: twoCoreName, ours: twoCores * 1000, reference: (peers["pillow.thumbnail-set-2cores"] ?? .nan) * 1000,
                     referenceName: "Pillow, 2 worker processes", unit: "ms", goal: .ratioAtMost(1 / 1.5)))

    // Resize 2560×1600 → 640×400, Lanczos.
    for (name, mode) in [("autumn-2560x1600-progressive.jpg", "RGB"), ("elarun-2560x1600-rgba.png", "RGBA")] {
        guard let file = files.first(where: { $0.name == name }), let bitmap = try? registry.decode(file.data).image else { continue }
        let ours = seconds(rounds: 7) { blackHole(try! bitmap.resized(width: 640, height: 400)) }
        report.add(.init(group: "codecs", name: "resize 2560×1600 → 640×400 (\(mode) source)", ours: ours * 1000,
                         reference: (peers["pillow.resize640:\(mode)"] ?? .nan) * 1000,
                         referenceName: "Pillow resize, LANCZOS, \(mode)", unit: "ms", goal: .ratioAtMost(1.0)))
    }

    // The 2560×1600 photo, for the blurs and the encodes.
    guard let file = files.first(where: { $0.name == "autumn-2560x1600-progressive.jpg" }), let image = try? registry.decode(file.data) else { return }

    // Gaussian blur: the box blurs against Pillow (which blurs with boxes too) and, at a large
    // radius, against the exact filter they replace there.
    do {
        let bitmap = image.image
        let ours = seconds(rounds: 5) { blackHole(try! bitmap.blurred(radius: 20)) }
        report.add(.init(group: "codecs", name: "Gaussian blur σ = 20, 2560×1600", ours: ours * 1000,
                         reference: (peers["pillow.blur20"] ?? .nan) * 1000, referenceName: "Pillow GaussianBlur(20)", unit: "ms", goal: .none))
        let large = seconds(rounds: 3) { blackHole(try! bitmap.blurred(radius: 100)) }
        let exact = seconds(rounds: 1) { blackHole(try! bitmap.blurredExactly(radius: 100)) }
        report.add(.init(group: "codecs", name: "Gaussian blur σ = 100, 2560×1600", ours: large * 1000, reference: exact * 1000,
                         referenceName: "the exact Gaussian (601 taps), the filter before box blurs", unit: "ms", goal: .none))
    }

    // Encodes at quality 80, alternating with Pillow's encode of the same photo in a process
    // kept waiting beside this one: both sides see the machine as it is at that moment.
    if let pillow = PillowEncoder(photos: photos.path) {
        defer { pillow.stop() }
        var options = ImageEncodingOptions()
        options.quality = 80
        for format in [ImageFormat.jpeg, .webp] where registry.encoder(for: format) != nil {
            var ours: [Double] = [], theirs: [Double] = []
            for round in 0..<10 {
                let mine = threadCPUSeconds { blackHole(try! registry.encode(image, as: format, options: options)) }
                guard let peer = pillow.encode(format.rawValue) else { break }
                // The first round of each is a warm-up.
                if round > 0 { ours.append(mine); theirs.append(peer) }
            }
            report.add(.init(group: "codecs", name: "encode \(format.rawValue) q80, 2560×1600", ours: median(ours) * 1000,
                             reference: median(theirs) * 1000, referenceName: "Pillow 13", unit: "ms", goal: .ratioAtMost(1.0)))
        }
    }
}

/// Pillow's encoders in a Python process that waits for orders (`peers.py --encode-server`):
/// each line names a format, and the answer is the thread CPU time of one encode of the photo
/// the process loaded at start.
private final class PillowEncoder {
    private let process = Process()
    private let input = Pipe(), output = Pipe()
    private var buffered = Data()

    init?(photos: String) {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "Benchmarks/scripts/peers.py", "--encode-server", photos]
        process.standardInput = input
        process.standardOutput = output
        do { try process.run() } catch { return nil }
    }

    /// Seconds of CPU for one encode, or `nil` if the process failed.
    func encode(_ format: String) -> Double? {
        input.fileHandleForWriting.write(Data((format + "\n").utf8))
        while !buffered.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffered.append(chunk)
        }
        let end = buffered.firstIndex(of: UInt8(ascii: "\n"))!
        let line = String(decoding: buffered[..<end], as: UTF8.self)
        buffered.removeSubrange(...end)
        return Double(line)
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

private func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// Peak memory, each in a fresh process: a 256 px thumbnail against a full decode of the
/// 5120×2880 JPEG, above the process's own baseline.
func runThumbnailMemoryBenchmarks(_ report: Report) {
    let path = URL(fileURLWithPath: "../shared/corpus/photos/shell-5120x2880.jpg").standardizedFileURL.path
    guard FileManager.default.fileExists(atPath: path) else {
        FileHandle.standardError.write(Data("  thumbnail-memory: ../shared/corpus is absent; skipped\n".utf8))
        return
    }
    let baseline = childPeakKiB(["memory", "none", path])
    let thumbnail = childPeakKiB(["memory", "thumbnail", path]) - baseline
    let full = childPeakKiB(["memory", "full", path]) - baseline
    report.add(.init(group: "codecs", name: "peak memory above baseline, 256 px thumbnail of 5120×2880 JPEG",
                     ours: Double(thumbnail) / 1024, reference: Double(full) / 1024,
                     referenceName: "full-size decode (bitmap: \((5120 * 2880 * 4) >> 20) MiB)", unit: "MiB", goal: .ratioAtMost(0.1)))
}

/// The child side of the memory rows: decode as asked, then report the peak resident size.
func runMemoryChild(_ arguments: [String]) -> Never {
    let (mode, path) = (arguments[0], arguments[1])
    let data = try! Data(contentsOf: URL(fileURLWithPath: path))
    var options = ImageDecodingOptions()
    if mode == "thumbnail" { options.thumbnail = .maxPixelSize(256) }
    if mode != "none" { blackHole(try! CoderRegistry.system().decode(data, options: options)) }
    // VmHWM, not getrusage's ru_maxrss: Linux keeps ru_maxrss across execve, so a child spawned
    // by a parent that has grown reports the parent's size instead of its own.
    print(procStatusKiB("VmHWM"))
    exit(0)
}

private func childPeakKiB(_ arguments: [String]) -> Int {
    let process = Process()
    // This very binary; argv[0] is not a usable path under `swift run`.
    var buffer = [UInt8](repeating: 0, count: 4096)
    let length = buffer.withUnsafeMutableBufferPointer { readlink("/proc/self/exe", $0.baseAddress!, $0.count) }
    process.executableURL = URL(fileURLWithPath: length > 0 ? String(decoding: buffer[..<length], as: UTF8.self) : CommandLine.arguments[0])
    process.arguments = ["--child"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try! process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Int(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
}

/// Median seconds of `body` over `rounds` runs after one warm-up.
func seconds(rounds: Int, _ body: () -> Void) -> Double {
    nanosecondsPerOperation(operations: 1, rounds: rounds, body) / 1e9
}

/// The CPU time of this thread running `body` once. For single-threaded work measured against
/// a peer in another process (the encoders), it is the work's own cost, whatever else held the
/// core meanwhile: wall-clock medians of the same calls moved by ±10 % between runs.
private func threadCPUSeconds(_ body: () -> Void) -> Double {
    func cpuNow() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
    let start = cpuNow()
    body()
    return cpuNow() - start
}

/// Runs Benchmarks/scripts/peers.py (Pillow and pyvips, from PyPI) in this same run.
private func measurePeers(photos: String) -> [String: Double]? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "Benchmarks/scripts/peers.py", photos]
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch {
        FileHandle.standardError.write(Data("  codecs: cannot run peers.py: \(error); skipped\n".utf8))
        return nil
    }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0, let peers = try? JSONDecoder().decode([String: Double].self, from: output) else {
        FileHandle.standardError.write(Data("  codecs: peers.py failed (is Pillow/pyvips installed? make bench installs them); skipped\n".utf8))
        return nil
    }
    return peers
}

private func rawName(_ format: ImageFormat) -> String {
    switch format {
    case .jpeg: "raw tjDecompress2 to RGBA"
    case .png: "raw libpng png_image_finish_read, RGBA"
    default: "raw WebPDecodeRGBA"
    }
}

/// The C library called directly: the floor for a decode to RGBA.
private func rawDecode(_ data: Data, format: ImageFormat) -> Int {
    data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int in
        let input = bytes.bindMemory(to: UInt8.self).baseAddress!
        switch format {
        case .jpeg:
            let handle = tjInitDecompress()
            defer { tjDestroy(handle) }
            var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
            tjDecompressHeader3(handle, input, UInt(bytes.count), &width, &height, &subsampling, &colorspace)
            let output = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(width * height * 4))
            defer { output.deallocate() }
            tjDecompress2(handle, input, UInt(bytes.count), output, width, 0, height, Int32(TJPF_RGBA.rawValue), 0)
            return Int(width * height)
        case .png:
            var image = png_image()
            image.version = UInt32(PNG_IMAGE_VERSION)
            guard png_image_begin_read_from_memory(&image, input, bytes.count) != 0 else { return 0 }
            image.format = wi_png_format_rgba
            let size = Int(image.width * image.height * 4)
            let output = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
            defer { output.deallocate() }
            png_image_finish_read(&image, nil, output, 0, nil)
            png_image_free(&image)
            return size / 4
        default:
            var width: Int32 = 0, height: Int32 = 0
            guard let output = WebPDecodeRGBA(input, bytes.count, &width, &height) else { return 0 }
            WebPFree(output)
            return Int(width * height)
        }
    }
}
