import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCore

/// Whether this process may mount a tmpfs: true for root with the mount capability (CI here),
/// false on a developer's machine, where the full-disk test is skipped.
let canMountTmpfs: Bool = {
    guard getuid() == 0 else { return false }
    let directory = TemporaryDirectory("mount-check")
    defer { _ = runTool("/bin/umount", [directory.path]); directory.remove() }
    return runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", directory.path]) == 0
}()

@discardableResult
func runTool(_ path: String, _ arguments: [String]) -> Int32 {
    let process = SpawnedProcess()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return -1 }
    process.waitUntilExit()
    return process.terminationStatus
}

/// A real full disk: the cache lives on a 1 MiB tmpfs and is filled until the kernel says ENOSPC.
@Test(.enabled(if: canMountTmpfs, "needs root to mount a small tmpfs"))
func aFullDiskSkipsTheEntryReportsTheErrorAndTheCacheKeepsWorking() throws {
    let directory = TemporaryDirectory("full-disk")
    #expect(runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", directory.path]) == 0)
    defer { runTool("/bin/umount", [directory.path]); directory.remove() }

    var configuration = DiskCache.Configuration()
    configuration.sizeLimit = 100 << 20  // far above the disk: the disk fills first
    configuration.sweepsOnOpen = false
    let cache = try DiskCache(directory: directory.url, configuration: configuration)

    var stored: [String] = []
    var failure: ImageError?
    for index in 0..<20 {
        let key = "big-\(index)"
        do {
            try cache.blocking.store(testPayload(forKey: key, size: 200_000), forKey: ImageCacheKey(key))
            stored.append(key)
        } catch let error as ImageError {
            failure = error
            break
        }
    }
    guard case .storage(let storageFailure) = failure else {
        Issue.record("expected a storage error, got \(String(describing: failure))")
        return
    }
    #expect(storageFailure.isOutOfSpace)
    #expect(stored.count >= 3)
    #expect(cache.count == stored.count)
    #expect(cache.statistics.failedWrites == 1)

    // What was cached before is intact, and the failed write left no temporary file behind.
    for key in stored {
        #expect(cache.blocking.data(forKey: ImageCacheKey(key)) == testPayload(forKey: key, size: 200_000))
    }
    let leftovers = try FileManager.default.subpathsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp.") }
    #expect(leftovers.isEmpty)

    // Room again: the cache keeps working, in this process and after a reopen.
    cache.blocking.removeEntry(forKey: ImageCacheKey(stored[0]))
    try cache.blocking.store(testPayload(forKey: "small", size: 50_000), forKey: "small")
    #expect(cache.blocking.data(forKey: "small") == testPayload(forKey: "small", size: 50_000))
    let reopened = try DiskCache(directory: directory.url, configuration: configuration)
    #expect(reopened.blocking.data(forKey: ImageCacheKey(stored[1])) == testPayload(forKey: stored[1], size: 200_000))
    #expect(reopened.blocking.data(forKey: "small") != nil)
}
