import Foundation
import Synchronization
import WebImage

/// `ImageManager.placeholder(for:)` for a source it knows, beside the floor of any thread-safe
/// lookup: a `Dictionary` from the URL's string to the placeholder, under a `Mutex`. The target
/// is absolute (issue 30): at most 1 µs, a memory lookup.
func placeholderLookupBenchmark(_ report: Report) {
    let count = 1_000
    let lookups = 100_000
    let urls = (0..<count).map { URL(string: "https://cdn.example.com/photos/2026/\(String($0 * 7919, radix: 16))/\($0).jpg")! }
    let cache = ImageCache(memory: .init(), disk: nil)
    let manager = ImageManager(configuration: .init(cache: cache, loaders: [], registry: CoderRegistry()))
    let hash = ThumbHash(encoding: try! Bitmap(width: 4, height: 3, pixelFormat: .rgba8, pixels: [UInt8](repeating: 128, count: 48)))
    var floor: [String: ImagePlaceholder] = [:]
    for url in urls {
        cache.rememberPlaceholder(hash, forKey: ImageCacheKey(url.absoluteString))
        floor[url.absoluteString] = .thumbHash(hash.base64)
    }
    let reference = Mutex(floor)
    // Fresh URL values, as a caller holds them (parsed from its own data), in a scattered order.
    let lookupURLs = urls.map { URL(string: $0.absoluteString)! }
    let order = (0..<lookups).map { ($0 &* 7_919) % count }

    let ours = nanosecondsPerOperation(operations: lookups) {
        var found = 0
        for index in order where manager.placeholder(for: lookupURLs[index]) != nil { found += 1 }
        blackHole(found)
    }
    let dictionary = nanosecondsPerOperation(operations: lookups) {
        var found = 0
        for index in order where reference.withLock({ $0[lookupURLs[index].absoluteString] }) != nil { found += 1 }
        blackHole(found)
    }
    report.add(BenchmarkRow(group: "placeholders", name: "placeholder(for:) of a known source (1k sources)", ours: ours,
                            reference: dictionary, referenceName: "Dictionary + Mutex", unit: "ns", goal: .valueAtMost(1000)))
}
