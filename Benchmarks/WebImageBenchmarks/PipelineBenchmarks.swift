import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
import WebImage
import WebImageTestSupport

/// The manager: its memory-hit path beside the bare memory-cache lookup, and a cold load of
/// the photo corpus from nginx on loopback beside its parts measured alone (the same HTTP
/// client fetching every photo, then the same decoder making every thumbnail).
func runPipelineBenchmarks(_ report: Report) {
    memoryHitBenchmarks(report)
    coldLoadBenchmarks(report)
}

/// Runs `body` to completion from a thread outside the cooperative pool (the benchmark's main
/// thread), which may block.
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome = await Result { try await body() }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try! result.withLock { $0! }.get()
}

extension Result where Failure == any Error {
    init(_ body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

// MARK: - Memory hits

private func memoryHitBenchmarks(_ report: Report) {
    let cache = ImageCache(disk: nil)
    let manager = ImageManager(configuration: .init(cache: cache, loaders: [], registry: CoderRegistry()))
    let urls = (0..<1000).map { URL(string: "https://cdn.example.com/photos/2024/\($0)/avatar.jpg")! }
    let bitmap = try! Bitmap(width: 8, height: 8, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 256))
    for url in urls {
        cache.memory.set(ImageContainer(image: bitmap), forKey: ImageCacheKey(url.absoluteString), cost: 256)
    }
    let operations = 200_000

    // The floor: the key the manager computes (the absolute URL), looked up in the cache.
    let bare = nanosecondsPerOperation(operations: operations) {
        for index in 0..<operations {
            blackHole(cache.memory.value(forKey: ImageCacheKey(urls[index % urls.count].absoluteString)))
        }
    }
    let sync = nanosecondsPerOperation(operations: operations) {
        for index in 0..<operations {
            blackHole(manager.cachedResponse(for: ImageRequest(url: urls[index % urls.count])))
        }
    }
    report.add(.init(group: "pipeline", name: "memory hit, manager.cachedResponse(for:) (request built per call)", ours: sync, reference: bare,
                     referenceName: "MemoryCache.value(forKey:) on the URL string", unit: "ns", goal: .valueAtMost(2000)))

    let asyncHit = waitFor {
        await nanosecondsPerOperationAsync(operations: operations) {
            for index in 0..<operations {
                blackHole(try! await manager.image(for: ImageRequest(url: urls[index % urls.count])))
            }
        }
    }
    report.add(.init(group: "pipeline", name: "memory hit, try await manager.image(for:)", ours: asyncHit, reference: bare,
                     referenceName: "MemoryCache.value(forKey:) on the URL string", unit: "ns", goal: .valueAtMost(2000)))

    let completion = nanosecondsPerOperation(operations: operations) {
        for index in 0..<operations {
            blackHole(manager.loadImage(with: ImageRequest(url: urls[index % urls.count])) { blackHole($0) })
        }
    }
    report.add(.init(group: "pipeline", name: "memory hit, manager.loadImage(with:completion:) (an ImageTask per call)", ours: completion, reference: bare,
                     referenceName: "MemoryCache.value(forKey:) on the URL string", unit: "ns", goal: .valueAtMost(2000)))
}

private func nanosecondsPerOperationAsync(operations: Int, rounds: Int = 7, _ body: () async -> Void) async -> Double {
    await body()
    var samples: [Double] = []
    for _ in 0..<rounds {
        let start = now()
        await body()
        samples.append(Double(now() - start) / Double(operations))
    }
    samples.sort()
    return samples[samples.count / 2]
}

// MARK: - Cold loads from nginx

private func coldLoadBenchmarks(_ report: Report) {
    guard let (photos, names) = decodableCorpusPhotos(for: "pipeline") else { return }
    let registry = CoderRegistry.system()
    guard let nginx = Nginx(root: photos) else { return }
    defer { nginx.stop() }
    let urls = names.map { URL(string: "http://127.0.0.1:\(nginx.port)/\($0)")! }
    let concurrency = 6

    // The parts alone: the same client fetching every photo (6 at a time, as the manager's
    // default), then every thumbnail decoded on the manager's decode threads (one per core).
    var loaderConfiguration = HTTPImageLoader.Configuration(acceptedFormats: registry.decodableFormats)
    loaderConfiguration.maximumConcurrentDownloads = concurrency
    let loader = HTTPImageLoader(configuration: loaderConfiguration)
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    defer {
        waitFor { try await loader.shutdown() }
        waitFor { try await client.shutdown() }
    }
    let fetched = Mutex<[Data]>([])
    let fetch = medianSeconds(rounds: 3) {
        let bodies = waitFor { try await rawFetch(urls, client: client, concurrency: concurrency) }
        fetched.withLock { $0 = bodies }
    }
    let bodies = fetched.withLock { $0 }
    var options = ImageDecodingOptions()
    options.thumbnail = .maxPixelSize(256)
    let decodeOptions = options
    let decode = medianSeconds(rounds: 3) {
        let next = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: BlockingExecutor.decoding.width) { _ in
            while true {
                let index = next.withLock { value in
                    defer { value += 1 }
                    return value
                }
                guard index < bodies.count else { return }
                blackHole(try! registry.decode(bodies[index], options: decodeOptions))
            }
        }
    }

    func load(repeats: Int) -> Double {
        medianSeconds(rounds: 3) {
            let manager = ImageManager(configuration: .init(cache: ImageCache(disk: nil), loaders: [loader], registry: registry))
            waitFor {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<repeats {
                        for url in urls {
                            group.addTask { blackHole(try await manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(256)))) }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }
    let before = nginx.requestCount
    let once = load(repeats: 1)
    let afterOnce = nginx.requestCount
    let four = load(repeats: 4)
    let afterFour = nginx.requestCount

    let name = "cold load, \(urls.count) photos as 256 px thumbnails from nginx (caches off)"
    report.add(.init(group: "pipeline", name: name, ours: once * 1000, reference: (fetch + decode) * 1000,
                     referenceName: String(format: "raw AsyncHTTPClient fetch (%.0f ms) + raw thumbnail decode (%.0f ms)", fetch * 1000, decode * 1000),
                     unit: "ms", goal: .ratioAtMost(1 / 0.85)))
    report.add(.init(group: "pipeline", name: "cold load, every URL requested 4 times", ours: four * 1000, reference: once * 1000,
                     referenceName: "each URL once", unit: "ms", goal: .ratioAtMost(1.10)))
    // medianSeconds(rounds:) runs a warm-up plus the rounds: 4 runs of each load.
    report.add(.init(group: "pipeline", name: "origin requests per run, every URL requested 4 times", ours: Double(afterFour - afterOnce) / 4,
                     reference: Double(afterOnce - before) / 4, referenceName: "each URL once", unit: "requests", goal: .ratioAtMost(1.0)))
}

private func rawFetch(_ urls: [URL], client: HTTPClient, concurrency: Int) async throws -> [Data] {
    try await withThrowingTaskGroup(of: (Int, Data).self) { group in
        var results = [Data](repeating: Data(), count: urls.count)
        var next = 0
        func add() {
            let index = next
            next += 1
            group.addTask {
                let response = try await client.execute(HTTPClientRequest(url: urls[index].absoluteString), timeout: .seconds(30))
                var body = try await response.body.collect(upTo: 64 << 20)
                return (index, Data(body.readBytes(length: body.readableBytes) ?? []))
            }
        }
        while next < min(concurrency, urls.count) { add() }
        while let (index, data) = try await group.next() {
            results[index] = data
            if next < urls.count { add() }
        }
        return results
    }
}

/// nginx serving a folder on a free loopback port, with its own configuration and access log
/// in a temporary folder.
final class Nginx {
    let port: Int
    private let process = Process()
    private let folder: URL

    init?(root: URL) {
        let binary = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let binary else {
            FileHandle.standardError.write(Data("  pipeline: nginx is not installed (scripts/bench-deps.sh installs it); cold loads skipped\n".utf8))
            return nil
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-nginx-\(getpid())")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = LoopbackPort.free() ?? Int.random(in: 20_000..<60_000)
        let configuration = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(folder.path)/nginx.pid;
            error_log \(folder.path)/error.log;
            events { worker_connections 1024; }
            http {
                access_log \(folder.path)/access.log;
                client_body_temp_path \(folder.path)/body;
                proxy_temp_path \(folder.path)/proxy;
                fastcgi_temp_path \(folder.path)/fastcgi;
                uwsgi_temp_path \(folder.path)/uwsgi;
                scgi_temp_path \(folder.path)/scgi;
                sendfile on;
                keepalive_requests 100000;
                types { image/jpeg jpg jpeg; image/png png; image/webp webp; image/gif gif; }
                server {
                    listen 127.0.0.1:\(port);
                    root \(root.standardizedFileURL.path);
                }
            }
            """
        let configurationFile = folder.appendingPathComponent("nginx.conf")
        try? configuration.write(to: configurationFile, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-c", configurationFile.path, "-p", folder.path, "-e", folder.appendingPathComponent("error.log").path]
        do { try process.run() } catch {
            FileHandle.standardError.write(Data("  pipeline: nginx did not start (\(error)); cold loads skipped\n".utf8))
            return nil
        }
        // Wait until it accepts connections (a benchmark set-up step; tests never do this).
        for _ in 0..<200 {
            if LoopbackPort.accepts(port) { return }
            usleep(10_000)
        }
        FileHandle.standardError.write(Data("  pipeline: nginx did not listen on \(port); cold loads skipped\n".utf8))
        process.terminate()
        return nil
    }

    /// Requests served so far (lines in the access log).
    var requestCount: Int {
        let log = (try? String(contentsOf: folder.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").count
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Median seconds of `body` over `rounds` runs after one warm-up.
private func medianSeconds(rounds: Int, _ body: () -> Void) -> Double {
    nanosecondsPerOperation(operations: 1, rounds: rounds, body) / 1e9
}
