import Foundation
import Synchronization
import WebImage

// Everything below uses the library as an application would: `import WebImage`, nothing else.
// The demo images are loaded through file URLs (the standard loaders include the file loader),
// so the run needs no network. Each step checks what it promises; a failed check exits 1.

let images = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? "Demo/images", isDirectory: true)
let urls = try FileManager.default.contentsOfDirectory(at: images, includingPropertiesForKeys: nil)
    .filter { ["jpg", "png", "webp", "gif"].contains($0.pathExtension) }
    .sorted { $0.lastPathComponent < $1.lastPathComponent }
let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-consumer-\(getpid())")
defer { try? FileManager.default.removeItem(at: cacheDirectory) }

let failures = Mutex(0)
func check(_ condition: Bool, _ what: String) {
    print(condition ? "ok   \(what)" : "FAIL \(what)")
    if !condition { failures.withLock { $0 += 1 } }
}

// The one-line configuration, installed as the shared manager.
ImageManager.shared = try ImageManager(diskCacheDirectory: cacheDirectory, memoryLimit: 64 << 20)
let manager = ImageManager.shared
check(urls.count >= 5, "found \(urls.count) demo images")

try await Tour.thumbnail(manager, urls[0])
try await Tour.concurrentLoads(manager, urls)
await Tour.cancelAndPriority(manager, urls)
try await Tour.cacheQueries(manager, urls[1])
await Tour.prefetch(manager, urls)
try await Tour.closureProcessor(manager, urls[2])
try Tour.metadata(urls)
try await Tour.encoding(manager, urls[0])
try await Tour.mainActorTarget(urls[3])

await manager.shutdown()
let failed = failures.withLock { $0 }
print(failed == 0 ? "consumer: every check passed" : "consumer: \(failed) checks failed")
exit(failed == 0 ? 0 : 1)
