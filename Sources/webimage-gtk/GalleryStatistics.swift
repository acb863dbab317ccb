import Foundation
import WebImage

/// What the status line shows: where each finished load came from (memory, disk, the source),
/// what the memory caches hold, and what the process holds.
///
/// Counted from the loads' own responses (``ImageResponse/cacheType``) rather than from the
/// manager's swift-metrics counters, which go to whatever metrics backend the process
/// bootstrapped (none here).
@MainActor
final class GalleryStatistics {
    private(set) var memoryHits = 0
    private(set) var diskHits = 0
    private(set) var downloads = 0
    private(set) var downloadedBytes = 0
    private(set) var failures = 0
    let caches: [ImageCache]
    let memoryLimit: Int

    init(caches: [ImageCache], memoryLimit: Int) {
        self.caches = caches
        self.memoryLimit = memoryLimit
    }

    func record(_ result: Result<ImageResponse, ImageError>) {
        switch result {
        case .success(let response):
            switch response.cacheType {
            case .memory: memoryHits += 1
            case .disk: diskHits += 1
            case .none:
                downloads += 1
                downloadedBytes += response.data?.count ?? 0
            }
        case .failure(.cancelled): break
        case .failure: failures += 1
        }
    }

    /// Bytes of decoded images in the memory caches.
    var memoryCost: Int { caches.reduce(0) { $0 + $1.memoryCost } }

    var line: String {
        let memory = ProcessStatus.current
        var parts = [
            "memory hits \(memoryHits)", "disk hits \(diskHits)",
            "downloads \(downloads) (\(Self.megabytes(downloadedBytes)))",
            "memory cache \(Self.megabytes(memoryCost)) of \(Self.megabytes(memoryLimit))",
            "RSS \(Self.megabytes(memory.residentBytes))",
        ]
        if failures > 0 { parts.append("failed \(failures)") }
        return parts.joined(separator: " · ")
    }

    static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_048_576)
    }
}

/// The process's resident memory now and at its peak, from `/proc/self/status` (Linux).
struct ProcessStatus {
    var residentBytes = 0
    var peakResidentBytes = 0

    static var current: ProcessStatus {
        var status = ProcessStatus()
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return status }
        for line in text.split(separator: "\n") {
            let fields = line.split { $0 == " " || $0 == "\t" }
            guard fields.count >= 2, let kilobytes = Int(fields[1]) else { continue }
            if fields[0] == "VmRSS:" { status.residentBytes = kilobytes << 10 }
            if fields[0] == "VmHWM:" { status.peakResidentBytes = kilobytes << 10 }
        }
        return status
    }
}
