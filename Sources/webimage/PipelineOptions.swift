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

    /// A manager over the disk cache, with downloads `concurrency` wide.
    func makeManager(concurrency: Int = 6) throws -> ImageManager {
        let registry = CoderRegistry.command()
        var http = HTTPImageLoader.Configuration()
        http.maximumConcurrentDownloads = concurrency
        return ImageManager(configuration: .standard(cache: ImageCache(disk: try openCache()), http: http, registry: registry))
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
