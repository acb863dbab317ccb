import Foundation
import Glibc
import WebImageCore

/// Disk cache: hits against a raw `open` + `read` of the very same file, misses, writes against
/// a raw write-and-rename, eviction, and the cost of opening a large cache (the index design).
func runDiskCacheBenchmarks(_ report: Report) {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-disk-\(getpid())")
    defer { try? FileManager.default.removeItem(at: root) }

    func openCache(_ name: String, limit: Int = 4 << 30) -> DiskCache {
        var configuration = DiskCache.Configuration()
        configuration.sizeLimit = limit
        configuration.sweepsOnOpen = false
        configuration.ageLimit = nil
        return try! DiskCache(directory: root.appendingPathComponent(name), configuration: configuration)
    }

    /// The path of an entry's file, found by the one file the cache holds for it.
    func entryPath(in directory: URL) -> String {
        let data = directory.appendingPathComponent("v1/data")
        let shard = try! FileManager.default.contentsOfDirectory(atPath: data.path).first!
        let name = try! FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent(shard).path).first!
        return data.appendingPathComponent(shard).appendingPathComponent(name).path
    }

    // Hits: the file is in the page cache on both sides, as it is for a hot entry.
    for size in [4 << 10, 200 << 10] {
        let name = "hit-\(size)"
        let cache = openCache(name)
        let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0) })
        let key: ImageCacheKey = "https://images.example.com/photos/\(size)/original.jpg"
        try! cache.blocking.store(bytes, forKey: key)
        let path = entryPath(in: root.appendingPathComponent(name))
        let operations = size > 10_000 ? 5_000 : 50_000
        let ours = nanosecondsPerOperation(operations: operations) {
            for _ in 0..<operations { blackHole(cache.blocking.data(forKey: key)) }
        }
        let raw = nanosecondsPerOperation(operations: operations) {
            for _ in 0..<operations { blackHole(rawRead(path)) }
        }
        report.add(.init(group: "disk", name: "hit, \(size >> 10) KB entry", ours: ours, reference: raw,
                         referenceName: "raw open+fstat+read+close of the same file", unit: "ns", goal: .ratioAtMost(1.5)))
        if size == 200 << 10 {
            // What the first read of an entry in a process adds: the payload's checksum.
            let checksum = nanosecondsPerOperation(operations: operations) {
                for _ in 0..<operations { blackHole(bytes.withUnsafeBytes(payloadChecksum)) }
            }
            report.add(.init(group: "disk", name: "payload checksum of a 200 KB entry (first read in a process)", ours: checksum, reference: raw,
                             referenceName: "raw open+fstat+read+close of the same file", unit: "ns", goal: .none))
        }

        if size == 4 << 10 {
            // The async API adds one hop to the I/O threads and back; so does the reference.
            let asyncOperations = 20_000
            let (oursAsync, rawAsync) = blockingWait {
                let ours = await asyncNanoseconds(operations: asyncOperations) { _ = await cache.data(forKey: key) }
                let raw = await asyncNanoseconds(operations: asyncOperations) {
                    _ = try! await BlockingExecutor.io.run { rawRead(path) }
                }
                return (ours, raw)
            }
            report.add(.init(group: "disk", name: "hit via async API, 4 KB", ours: oursAsync, reference: rawAsync,
                             referenceName: "raw read through the same executor hop", unit: "ns", goal: .ratioAtMost(1.5)))
        }
    }

    // Misses, in a cache of 100,000 entries: answered by the in-memory index.
    let large = openCache("large")
    let entryBytes = Data(repeating: 7, count: 512)
    let populateStart = now()
    for index in 0..<100_000 {
        try! large.blocking.store(entryBytes, forKey: "https://images.example.com/feed/\(index).jpg")
    }
    let writeNanoseconds = Double(now() - populateStart) / 100_000
    let missOperations = 200_000
    let miss = nanosecondsPerOperation(operations: missOperations) {
        for index in 0..<missOperations { blackHole(large.blocking.data(forKey: "https://images.example.com/absent/\(index).jpg")) }
    }
    let statMiss = nanosecondsPerOperation(operations: missOperations) {
        var info = stat()
        for index in 0..<missOperations { blackHole(stat(root.path + "/absent/\(index).jpg", &info)) }
    }
    report.add(.init(group: "disk", name: "miss (100k entries cached)", ours: miss, reference: statMiss,
                     referenceName: "stat() of a missing file (a file-system probe)", unit: "ns", goal: .valueAtMost(2000)))

    // Writes: our store against writing the same bytes to a temporary file and renaming it.
    for size in [4 << 10, 200 << 10] {
        let cache = openCache("write-\(size)")
        let bytes = Data(repeating: 3, count: size)
        let operations = size > 10_000 ? 1_000 : 5_000
        var round = 0
        let ours = nanosecondsPerOperation(operations: operations, rounds: 3) {
            round += 1
            for index in 0..<operations { try! cache.blocking.store(bytes, forKey: "w\(round)-\(index)") }
        }
        let rawDirectory = root.appendingPathComponent("raw-write-\(size)").path
        mkdir(rawDirectory, 0o755)
        let raw = nanosecondsPerOperation(operations: operations, rounds: 3) {
            round += 1
            for index in 0..<operations { rawWrite(bytes, directory: rawDirectory, name: "w\(round)-\(index)") }
        }
        report.add(.init(group: "disk", name: "write, \(size >> 10) KB entry", ours: ours, reference: raw,
                         referenceName: "raw write of a temporary file + rename", unit: "ns", goal: .none))
    }
    report.add(.init(group: "disk", name: "write, 512 B entries into a 100k cache", ours: writeNanoseconds, reference: writeNanoseconds,
                     referenceName: "(same; absolute figure)", unit: "ns", goal: .none))

    // The index design: opening a cache of 100k entries by replaying the journal, against
    // rebuilding the index by scanning the directory (what a design without a journal does on
    // every start, and what this one does only when the journal is lost).
    let largeDirectory = root.appendingPathComponent("large")
    let replayStart = now()
    let replayed = openCache("large")
    let replayMilliseconds = Double(now() - replayStart) / 1e6
    precondition(replayed.count == large.count)
    try! FileManager.default.removeItem(at: largeDirectory.appendingPathComponent("v1/journal"))
    let scanStart = now()
    let scanned = openCache("large")
    let scanMilliseconds = Double(now() - scanStart) / 1e6
    precondition(scanned.count == large.count)
    report.add(.init(group: "disk", name: "open a cache of \(large.count / 1000)k entries (journal replay)", ours: replayMilliseconds, reference: scanMilliseconds,
                     referenceName: "rebuild by scanning the files", unit: "ms", goal: .none))

    // Eviction: trimming 100k entries by a fifth, against unlinking the same number of files.
    let victims = 20_000
    let entrySize = large.totalSize / large.count
    let evictStart = now()
    scanned.blocking.trim(toSize: scanned.totalSize - victims * entrySize)
    let evictMilliseconds = Double(now() - evictStart) / 1e6
    // The floor: unlinking as many files laid out like the cache's (256 folders), in the
    // same scattered order.
    let unlinkDirectory = root.appendingPathComponent("unlink").path
    mkdir(unlinkDirectory, 0o755)
    for shard in 0..<256 { mkdir(unlinkDirectory + "/\(shard)", 0o755) }
    let scattered = (0..<victims).map { "\(($0 &* 2_654_435_761) % 256)/\($0)" }
    for name in scattered { rawWrite(entryBytes, directory: unlinkDirectory, name: name) }
    let unlinkStart = now()
    for name in scattered.shuffled() { unlink(unlinkDirectory + "/" + name) }
    let unlinkMilliseconds = Double(now() - unlinkStart) / 1e6
    report.add(.init(group: "disk", name: "eviction sweep: 20k of 100k entries", ours: evictMilliseconds, reference: unlinkMilliseconds,
                     referenceName: "unlink() of 20k files in 256 folders", unit: "ms", goal: .none))

}

/// What a cache without an index pays for a hit: open, size the file, allocate, read, close.
@inline(never)
func rawRead(_ path: String) -> Data? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { return nil }
    let size = Int(info.st_size)
    let buffer = malloc(size)!
    let count = read(fd, buffer, size)
    guard count == size else { free(buffer); return nil }
    return Data(bytesNoCopy: buffer, count: size, deallocator: .free)
}

/// An atomic file write with nothing else: temporary file, write, close, rename.
func rawWrite(_ bytes: Data, directory: String, name: String) {
    let temporary = directory + "/" + name + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    bytes.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
    close(fd)
    rename(temporary, directory + "/" + name)
}

/// Median nanoseconds per `operation` run sequentially from a task.
func asyncNanoseconds(operations: Int, rounds: Int = 5, _ operation: () async -> Void) async -> Double {
    for _ in 0..<1000 { await operation() }
    var samples: [Double] = []
    for _ in 0..<rounds {
        let start = now()
        for _ in 0..<operations { await operation() }
        samples.append(Double(now() - start) / Double(operations))
    }
    return samples.sorted()[rounds / 2]
}

/// Runs async work from the synchronous benchmark driver and waits for its result.
func blockingWait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        result.value = await body()
        done.signal()
    }
    done.wait()
    return result.value!
}

/// `@unchecked Sendable`: written once by the task before it signals the semaphore, read once
/// by the waiter after `wait()` returns; the semaphore orders the two.
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
