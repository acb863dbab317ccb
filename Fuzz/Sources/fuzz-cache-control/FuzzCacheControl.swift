import Foundation
import FuzzSupport
import WebImageCore

/// `Cache-Control` parsing, as an HTTP response's header reaches it, and the expiry it yields
/// stored with an entry in a disk cache (the path a hostile origin's header takes). The expiry
/// is never before the response, and the entry reads back with it.
private let now = Date(timeIntervalSince1970: 1_800_000_000)
private let cache: DiskCache = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-fuzz-cache-control-\(getpid())")
    try? FileManager.default.removeItem(at: directory)
    var configuration = DiskCache.Configuration()
    configuration.sweepsOnOpen = false
    do {
        return try DiskCache(directory: directory, configuration: configuration)
    } catch {
        FuzzInput.finding("cannot open a cache in \(directory.path): \(error)")
    }
}()

func fuzzCacheControl(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let header = String(decoding: FuzzInput.data(bytes, count), as: UTF8.self)
    guard let expiry = DiskCache.Metadata.expiration(cacheControl: header, now: now) else { return 0 }
    if expiry < now { FuzzInput.finding("an expiry \(expiry) before the response") }
    do {
        try cache.blocking.store(Data([1, 2, 3]), forKey: "k", metadata: .init(expiresAt: expiry))
    } catch {
        FuzzInput.finding("storing an entry that expires at \(expiry) fails: \(error)")
    }
    return 0
}
