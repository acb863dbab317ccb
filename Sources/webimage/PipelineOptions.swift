import ArgumentParser
import Foundation
import WebImage

/// The `--cache-dir` every pipeline command shares, so that `fetch`, `info`, `convert` and
/// `cache` see one cache.
struct CacheOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The disk cache folder (default: $XDG_CACHE_HOME/swift-web-image, or ~/.cache/swift-web-image).", valueName: "dir"))
    var cacheDir: String?

    init() {}

    init(cacheDir: String) {
        self.cacheDir = cacheDir
    }

    var directory: URL {
        cacheDir.map { URL(fileURLWithPath: $0) } ?? DiskCache.userCacheDirectory.appendingPathComponent("swift-web-image")
    }

    func openCache() throws -> DiskCache {
        do {
            return try DiskCache(directory: directory)
        } catch {
            throw CommandFailure("cannot open the cache at \(directory.path): \(error)")
        }
    }

    /// A manager over the disk cache, with downloads `concurrency` wide, retried as
    /// `retryPolicy` says (`nil`: the loader's default).
    func makeManager(concurrency: Int = 6, retryPolicy: RetryPolicy? = nil) throws -> ImageManager {
        let registry = CoderRegistry.command()
        var http = HTTPImageLoader.Configuration()
        http.maximumConcurrentDownloads = concurrency
        if let retryPolicy { http.retryPolicy = retryPolicy }
        return ImageManager(configuration: .standard(cache: ImageCache(disk: try openCache()), http: http, registry: registry))
    }
}

/// `--retries`, of the commands that download (`fetch`, `prefetch`).
struct RetryOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Tries after the first of a download that failed in a way that may pass (a refused or reset connection, a timeout, 408, 429, 500, 502, 503, 504), with jittered waits of up to 2 s, honouring Retry-After; 0 for none (default 2).",
        valueName: "n"))
    var retries: Int?

    func validate() throws {
        if let retries, retries < 0 { throw ValidationError("--retries must be 0 or more") }
    }

    /// The loader's policy with `--retries`, or `nil` (the default policy) without it.
    var policy: RetryPolicy? {
        retries.map { RetryPolicy(maximumAttempts: $0 + 1) }
    }
}

/// A failure a command reports as one line on standard error, then exits with status 1.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Whether a command-line input names a URL to load through the pipeline rather than a file.
func isRemote(_ input: String) -> Bool {
    let lowered = input.lowercased()
    return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
}

/// The bytes of an `http(s)://` input, through the pipeline (and so through its disk cache).
func remoteBytes(_ input: String, cache: CacheOptions) async throws -> Data {
    guard let url = URL(string: input) else { throw CommandFailure("\(input): not a valid URL") }
    let manager = try cache.makeManager()
    let response = try await manager.data(for: ImageRequest(url: url))
    await manager.waitUntilIdle()
    return response.data
}

/// Writes a line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
