import ArgumentParser
import Foundation
import Synchronization
import WebImage

/// `webimage prefetch`: download a list of URLs into the disk cache, with a progress bar.
///
/// ```
/// $ webimage prefetch --input urls.txt --concurrency 4     # or: webimage prefetch URL...
/// [##############------------------]  212/500   18.4 MiB  3.1 MiB/s  ETA 0:09
/// …
/// prefetched 500 URLs: 497 finished, 1 skipped, 2 failed, 43512331 bytes (41.5 MiB) in 13.8 s
/// ```
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Download a list of images into the disk cache, without decoding them.",
        discussion: """
            The URLs (or paths on this machine) are the arguments, or are read one per line \
            from --input FILE, or from standard input (--input -, or neither arguments nor \
            --input); blank lines and lines starting with # are ignored. Images already in \
            the cache (--cache-dir, shared by every webimage command) are skipped. A \
            download that fails in a way that may pass (a 503, a reset connection, a timeout) \
            is tried twice more, or --retries times. On a \
            terminal a progress bar shows the count, bytes, rate and time left on standard \
            error; otherwise a plain line is printed there every 10% or every second. The \
            summary goes to standard output. The exit status is 1 if any URL failed.
            """
    )

    @Argument(help: ArgumentHelp("The images: URLs (http, https, file or data) or paths on this machine.", valueName: "url"))
    var urls: [String] = []

    @Option(help: ArgumentHelp("A file with one URL per line; - reads standard input (the default without URL arguments).", valueName: "file"))
    var input: String?

    @Option(help: "Prefetches in flight at once.")
    var concurrency = 3

    @OptionGroup var cache: CacheOptions

    @OptionGroup var retry: RetryOptions

    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        guard concurrency > 0 else { throw ValidationError("--concurrency must be at least 1") }
    }

    func run() async throws {
        try await Telemetry.tracing { try await prefetchAll() }
    }

    private func prefetchAll() async throws {
        var lines = urls
        let manager: ImageManager
        do {
            if input != nil || urls.isEmpty { lines += Self.urlLines(try await Self.readInput(input)) }
            manager = try cache.makeManager(concurrency: concurrency, retryPolicy: retry.policy)
        } catch {
            printError("webimage prefetch: \(reporting.describe(error))")
            throw ExitCode.failure
        }
        var urls: [URL] = []
        var invalid: [String] = []
        var given: [URL: String] = [:]   // each URL's line as the user wrote it
        var configuration = ImagePrefetcher.Configuration()
        configuration.maximumConcurrentPrefetches = concurrency
        // Each run is a fresh process: a URL that failed is tried, whatever a list says.
        configuration.options = [.retryFailed]
        let prefetcher = ImagePrefetcher(manager: manager, configuration: configuration)
        for line in lines {
            if let url = imageURL(line) {
                urls.append(url)
                given[url] = line
            } else {
                invalid.append(line)
            }
        }

        let display = ProgressDisplay(total: urls.count, isTerminal: isatty(STDERR_FILENO) == 1)
        var summary = await prefetcher.prefetch(urls) { display.update($0) }
        display.finish(summary)
        // The bytes reach the disk after the loads report back: let the writes finish.
        await manager.waitUntilIdle()
        // A line that names nothing loadable counts as failed, and is echoed as it was given.
        summary.total += invalid.count
        summary.failed += invalid.count
        print(Self.summaryLine(summary, elapsed: display.elapsed))
        for line in invalid { printError("failed: \(line): neither a URL nor a path") }
        for failure in summary.failures {
            let line = failure.url.map { given[$0] ?? $0.absoluteString } ?? "-"
            printError("failed: \(line): \(reporting.describe(failure.error))")
        }
        if summary.failed > 0 { throw ExitCode.failure }
    }

    /// The URL lines of a list: trimmed, without blank lines and `#` comments.
    static func urlLines(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// The text of `path`, or of standard input for `nil` or `-`, read on a thread of its own
    /// (standard input may block for as long as the writer takes).
    static func readInput(_ path: String?) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let data: Data
                    if let path, path != "-" {
                        data = try Data(contentsOf: URL(fileURLWithPath: path))
                    } else {
                        data = FileHandle.standardInput.readDataToEndOfFile()
                    }
                    continuation.resume(returning: String(decoding: data, as: UTF8.self))
                } catch {
                    continuation.resume(throwing: CommandFailure("cannot read \(path ?? "-"): \(error.localizedDescription)"))
                }
            }
        }
    }

    static func summaryLine(_ summary: ImagePrefetcher.Summary, elapsed: Duration) -> String {
        var line = "prefetched \(counted(summary.total, "URL")): \(summary.finished) finished, \(summary.skipped) skipped, \(summary.failed) failed"
        if summary.cancelled > 0 { line += ", \(summary.cancelled) cancelled" }
        line += ", \(summary.bytes) bytes (\(CacheCommand.Stats.format(bytes: summary.bytes))) in \(String(format: "%.2f", elapsed.milliseconds / 1000)) s"
        return line
    }
}

/// The progress of a prefetch on standard error: a bar redrawn in place (at most 10 times a
/// second) on a terminal, plain lines (every 10% or every second) otherwise.
final class ProgressDisplay: Sendable {
    private struct State {
        var lastDraw: ContinuousClock.Instant?
        var lastStep = 0
        var latest: ImagePrefetcher.Summary
        var drewBar = false
    }

    private let total: Int
    private let isTerminal: Bool
    private let started = ContinuousClock.now
    private let state: Mutex<State>

    init(total: Int, isTerminal: Bool) {
        self.total = total
        self.isTerminal = isTerminal
        self.state = Mutex(State(latest: ImagePrefetcher.Summary(total: total)))
    }

    var elapsed: Duration { ContinuousClock.now - started }

    /// Called after each URL completes (in order, one at a time).
    func update(_ summary: ImagePrefetcher.Summary) {
        let now = ContinuousClock.now
        let text = state.withLock { state -> String? in
            state.latest = summary
            let step = total == 0 ? 10 : summary.completed * 10 / total
            if isTerminal {
                if let last = state.lastDraw, now - last < .milliseconds(100), !summary.isComplete { return nil }
                state.lastDraw = now
                state.drewBar = true
                return "\r" + bar(summary, now: now) + "\u{1B}[K"
            }
            let due = state.lastDraw.map { now - $0 >= .seconds(1) } ?? false
            guard step > state.lastStep || due else { return nil }
            state.lastStep = max(state.lastStep, step)
            state.lastDraw = now
            return line(summary, now: now) + "\n"
        }
        if let text { FileHandle.standardError.write(Data(text.utf8)) }
    }

    /// Draws the final state and ends the bar's line.
    func finish(_ summary: ImagePrefetcher.Summary) {
        let text = state.withLock { state -> String? in
            guard isTerminal else { return nil }
            let drawn = "\r" + bar(summary, now: .now) + "\u{1B}[K\n"
            return drawn
        }
        if let text { FileHandle.standardError.write(Data(text.utf8)) }
    }

    private func rate(_ summary: ImagePrefetcher.Summary, now: ContinuousClock.Instant) -> (bytesPerSecond: Double, eta: Duration?) {
        let seconds = max((now - started).milliseconds / 1000, 0.001)
        let perURL = seconds / Double(max(summary.completed, 1))
        let remaining = summary.total - summary.completed
        let eta: Duration? = summary.completed == 0 ? nil : .milliseconds(Int64(perURL * Double(remaining) * 1000))
        return (Double(summary.bytes) / seconds, eta)
    }

    private func bar(_ summary: ImagePrefetcher.Summary, now: ContinuousClock.Instant) -> String {
        let width = 30
        let filled = summary.total == 0 ? width : summary.completed * width / summary.total
        let (speed, eta) = rate(summary, now: now)
        let count = String(summary.total).count
        let done = String(repeating: " ", count: max(0, count - String(summary.completed).count)) + String(summary.completed)
        var text = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        text += "  \(done)/\(summary.total)  \(CacheCommand.Stats.format(bytes: summary.bytes))  \(CacheCommand.Stats.format(bytes: Int(speed)))/s"
        text += "  ETA " + (eta.map(Self.clock) ?? "-:--")
        if summary.failed > 0 { text += "  \(summary.failed) failed" }
        return text
    }

    private func line(_ summary: ImagePrefetcher.Summary, now: ContinuousClock.Instant) -> String {
        let percent = summary.total == 0 ? 100 : summary.completed * 100 / summary.total
        let (speed, eta) = rate(summary, now: now)
        var text = "prefetch: \(summary.completed)/\(summary.total) (\(percent)%), \(CacheCommand.Stats.format(bytes: summary.bytes)), \(CacheCommand.Stats.format(bytes: Int(speed)))/s"
        if let eta, !summary.isComplete { text += ", ETA \(Self.clock(eta))" }
        if summary.failed > 0 { text += ", \(summary.failed) failed" }
        return text
    }

    static func clock(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        return seconds >= 3600
            ? String(format: "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
            : String(format: "%d:%02d", seconds / 60, seconds % 60)
    }
}
