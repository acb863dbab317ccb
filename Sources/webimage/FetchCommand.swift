import ArgumentParser
import Foundation
import WebImage

/// `webimage fetch URL...`: load every URL through the pipeline and say where each came from.
///
/// ```
/// $ webimage fetch https://example.com/a.jpg https://example.com/a.jpg --resize 256x256
/// URL                        SOURCE   BYTES   DIMENSIONS  TIME
/// https://example.com/a.jpg  network  84213   256×171     41 ms
/// https://example.com/a.jpg  network  84213   256×171     41 ms
/// ```
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load images through the cache and the network, and report where each came from.",
        discussion: """
            Every URL goes through the pipeline: the memory cache, the disk cache (shared by \
            every webimage command through --cache-dir), then the network. The same URL given \
            twice is downloaded once. A download that fails in a way that may pass (a 503, \
            a reset connection, a timeout) is tried twice more, or --retries times. SOURCE is \
            memory, disk or network; BYTES are the original's. With --output-dir each image is written there: the original bytes, \
            or with --resize the thumbnail in the source's format. The exit status is 1 if any \
            URL failed.
            """
    )

    @Argument(help: ArgumentHelp("The images: URLs (http, https, file or data) or paths on this machine.", valueName: "url"))
    var urls: [String]

    @Flag(help: "Print one JSON object per URL per line (keys: url, source, bytes, width, height, ms, and error when it failed).")
    var json = false

    @Option(help: "Downloads running at once.")
    var concurrency = 6

    @Option(help: ArgumentHelp("Write the images into this folder.", valueName: "dir"))
    var outputDir: String?

    @Option(help: ArgumentHelp("Decode to fit a box: WxH, W or Wx (width only), xH (height only).", valueName: "WxH"))
    var resize: ConvertCommand.ResizeBox?

    @OptionGroup var cache: CacheOptions

    @OptionGroup var retry: RetryOptions

    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        guard concurrency > 0 else { throw ValidationError("--concurrency must be at least 1") }
    }

    struct Outcome {
        var url: String
        var response: ImageResponse?
        var error: (any Error)?
        var milliseconds: Double
    }

    func run() async throws {
        try await Telemetry.tracing { try await fetchAll() }
    }

    private func fetchAll() async throws {
        let manager: ImageManager
        do {
            manager = try cache.makeManager(concurrency: concurrency, retryPolicy: retry.policy)
        } catch {
            printError("webimage fetch: \(reporting.describe(error))")
            throw ExitCode.failure
        }
        if let outputDir {
            try FileManager.default.createDirectory(atPath: outputDir, withIntermediateDirectories: true)
        }
        // Every request starts at once (the manager queues the downloads); results are printed
        // in the order given.
        let tasks = startRequests(manager)
        var table = TextTable(columns: [
            .init("URL"), .init("SOURCE"), .init("BYTES", alignment: .right), .init("DIMENSIONS"), .init("TIME", alignment: .right),
        ])
        var failures = 0
        var written = Set<String>()
        for (_, task) in tasks {
            var outcome = await task.value
            if outcome.error == nil, let outputDir, let response = outcome.response {
                do {
                    try write(response, into: outputDir, names: &written)
                } catch {
                    outcome.error = error
                }
            }
            if outcome.error != nil { failures += 1 }
            if json {
                print(Self.jsonLine(outcome, reporting: reporting))
            } else if let response = outcome.response, outcome.error == nil {
                table.append([
                    outcome.url, Self.source(response.cacheType), response.data.map { String($0.count) } ?? "-",
                    "\(response.image.width)×\(response.image.height)", String(format: "%.0f ms", outcome.milliseconds),
                ])
            } else {
                printError("webimage fetch: \(outcome.url): \(outcome.error.map(reporting.describe) ?? "failed")")
            }
        }
        if !json, !table.rows.isEmpty { print(table.rendered, terminator: "") }
        // Let the disk writes that follow the loads finish before the process exits.
        await manager.waitUntilIdle()
        if failures > 0 { throw ExitCode.failure }
    }

    /// A task for each of `urls`, all started at once (the manager queues the downloads), in
    /// the order given; each loads its image at --resize's size (or whole) and times it.
    private func startRequests(_ manager: ImageManager) -> [(String, Task<Outcome, Never>)] {
        let thumbnail = resize.map { box in
            ImageDecodingOptions.Thumbnail.size(width: box.width ?? Int(Int32.max), height: box.height ?? Int(Int32.max), contentMode: .fit)
        }
        return urls.map { string in
            (string, Task {
                let started = ContinuousClock.now
                guard let url = imageURL(string) else {
                    return Outcome(url: string, error: CommandFailure("neither a URL nor a path"), milliseconds: 0)
                }
                do {
                    var request = ImageRequest(url: url, thumbnail: thumbnail)
                    request.options = [.retryFailed]
                    let response = try await manager.image(for: request)
                    return Outcome(url: string, response: response, milliseconds: (ContinuousClock.now - started).milliseconds)
                } catch {
                    return Outcome(url: string, error: error, milliseconds: (ContinuousClock.now - started).milliseconds)
                }
            })
        }
    }

    static func source(_ cacheType: CacheType) -> String {
        switch cacheType {
        case .memory: "memory"
        case .disk: "disk"
        case .none: "network"
        }
    }

    static func jsonLine(_ outcome: Outcome, reporting: ReportingOptions) -> String {
        var object: [String: Any] = ["url": outcome.url, "ms": (outcome.milliseconds * 10).rounded() / 10]
        if let error = outcome.error {
            object["error"] = reporting.describe(error)
        } else if let response = outcome.response {
            object["source"] = source(response.cacheType)
            object["bytes"] = response.data?.count ?? 0
            object["width"] = response.image.width
            object["height"] = response.image.height
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes the original bytes, or the resized image in the source's format, under a name
    /// taken from the URL (made unique within this run).
    private func write(_ response: ImageResponse, into folder: String, names: inout Set<String>) throws {
        let registry = CoderRegistry.command()
        let bytes: Data
        var format = response.container.format ?? response.data.flatMap(ImageFormat.init(sniffing:))
        if resize != nil {
            if format.map({ registry.encoder(for: $0) == nil }) ?? true { format = .png }
            bytes = try registry.encode(response.container, as: format ?? .png)
        } else if let data = response.data {
            bytes = data
        } else {
            throw CommandFailure("no bytes to write")
        }
        var base = response.url.deletingPathExtension().lastPathComponent.filter { $0.isLetter || $0.isNumber || "-_.@".contains($0) }
        if base.isEmpty || base == "/" { base = "image" }
        let ext = format?.fileExtension ?? "bin"
        var name = "\(base).\(ext)"
        var counter = 1
        while names.contains(name) {
            counter += 1
            name = "\(base)-\(counter).\(ext)"
        }
        names.insert(name)
        try bytes.write(to: URL(fileURLWithPath: folder).appendingPathComponent(name), options: .atomic)
    }
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
