import ArgumentParser
import Foundation
import WebImage
import WebImageServer

/// `webimage demo`: the library's main job, offline. What `make run` runs.
///
/// It starts an origin on loopback serving the repository's demo images, prefetches them all
/// through the pipeline (into a fresh disk cache, with the progress bar), then loads every one
/// as a 256 px thumbnail twice in the same process: the first pass decodes the prefetched bytes
/// from disk, the second is answered from memory. It ends with a short report.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Serve the demo images on loopback, prefetch them, and load them as thumbnails twice.",
        discussion: """
            Needs no internet: the origin is a server on 127.0.0.1 started by the command \
            itself. The disk cache starts empty on every run (its folder is cleared), so the \
            report always shows the same story: the network once, then the disk, then memory.
            """
    )

    @Option(help: ArgumentHelp("The folder of images to serve.", valueName: "dir"))
    var images = "Demo/images"

    @Option(help: ArgumentHelp("The disk cache folder; cleared at the start.", valueName: "dir"))
    var cacheDir = ".build/demo-cache"

    @Option(help: ArgumentHelp("Where the thumbnails are written (WebP).", valueName: "dir"))
    var outputDir = ".build/demo-thumbnails"

    @Option(help: "The longest side of the thumbnails, in pixels.")
    var size = 256

    func validate() throws {
        guard size > 0 else { throw ValidationError("--size must be positive") }
    }

    /// One phase of the report.
    struct Phase {
        var name: String
        var images = 0
        var bytes = 0
        var elapsed: Duration = .zero
        var sources: [String: Int] = [:]
    }

    func run() async throws {
        let origin = try await startOrigin()
        try? FileManager.default.removeItem(atPath: cacheDir)
        try FileManager.default.createDirectory(atPath: outputDir, withIntermediateDirectories: true)
        let manager = try CacheOptions(cacheDir: cacheDir).makeManager()
        let urls = origin.names.map(origin.url(for:))

        // 1. Prefetch every original into the disk cache, three at a time, with the progress bar.
        let display = ProgressDisplay(total: urls.count, isTerminal: isatty(STDERR_FILENO) != 0)
        let prefetched = await ImagePrefetcher(manager: manager).prefetch(urls) { display.update($0) }
        display.finish(prefetched)
        await manager.waitUntilIdle()
        print(PrefetchCommand.summaryLine(prefetched, elapsed: display.elapsed))
        var phases = [Phase(name: "prefetch (originals)", images: prefetched.finished, bytes: prefetched.bytes, elapsed: display.elapsed, sources: ["network": prefetched.finished])]

        // 2. and 3. Every image as a thumbnail, twice.
        var failures = 0
        for pass in 1...2 {
            let (phase, passFailures) = try await thumbnailPass(pass, urls: urls, manager: manager)
            failures += passFailures
            phases.append(phase)
        }
        await manager.waitUntilIdle()
        try await origin.shutdown()

        printReport(phases)
        if failures > 0 { throw ExitCode.failure }
    }

    /// The origin on loopback serving --images, announced on standard output; a folder that
    /// cannot be served or holds no images ends the command.
    private func startOrigin() async throws -> StaticOrigin {
        let origin: StaticOrigin
        do {
            origin = try await StaticOrigin.start(serving: URL(fileURLWithPath: images))
        } catch {
            printError("webimage demo: cannot serve \(images): \(error)")
            throw ExitCode.failure
        }
        guard !origin.names.isEmpty else {
            printError("webimage demo: no images in \(images)")
            throw ExitCode.failure
        }
        print("origin: serving \(origin.names.count) images from \(images) at http://127.0.0.1:\(origin.port)/")
        fflush(nil)   // flush stdout before the progress bar, which goes to standard error
        return origin
    }

    /// One pass of thumbnails: every URL loaded at once, then the results in URL order, the
    /// first pass writing each thumbnail into --output-dir as WebP. A failed load is printed
    /// and counted (the second value), not thrown; a failed write is thrown.
    private func thumbnailPass(_ pass: Int, urls: [URL], manager: ImageManager) async throws -> (Phase, Int) {
        var phase = Phase(name: "\(size) px thumbnails, pass \(pass)")
        var failures = 0
        let started = ContinuousClock.now
        let results = await withTaskGroup(of: (URL, Result<ImageResponse, any Error>).self) { group in
            for url in urls {
                group.addTask {
                    do {
                        return (url, .success(try await manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(size)))))
                    } catch {
                        return (url, .failure(error))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        phase.elapsed = ContinuousClock.now - started
        for (url, result) in results.sorted(by: { $0.0.absoluteString < $1.0.absoluteString }) {
            switch result {
            case .success(let response):
                phase.images += 1
                phase.bytes += response.data?.count ?? 0
                phase.sources[FetchCommand.source(response.cacheType), default: 0] += 1
                if pass == 1 {
                    let container = response.container
                    let name = url.deletingPathExtension().lastPathComponent + ".webp"
                    var options = ImageEncodingOptions()
                    options.quality = 80
                    let encoded = try manager.configuration.registry.encode(container, as: .webp, options: options)
                    try encoded.write(to: URL(fileURLWithPath: outputDir).appendingPathComponent(name), options: .atomic)
                }
            case .failure(let error):
                failures += 1
                printError("webimage demo: \(url.lastPathComponent): \(error)")
            }
        }
        return (phase, failures)
    }

    /// The report: one row a phase, after a blank line, then where the results are.
    private func printReport(_ phases: [Phase]) {
        print()
        var table = TextTable(columns: [
            .init("PHASE"), .init("IMAGES", alignment: .right), .init("BYTES", alignment: .right),
            .init("TIME", alignment: .right), .init("SOURCES"),
        ])
        for phase in phases {
            let sources = phase.sources.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            table.append([phase.name, String(phase.images), String(phase.bytes), String(format: "%.1f ms", phase.elapsed.milliseconds), sources])
        }
        print(table.rendered, terminator: "")
        print("\nthumbnails written to \(outputDir); disk cache in \(cacheDir)")
    }
}
