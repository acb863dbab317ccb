import Foundation
import Synchronization
import Testing
@testable import WebImageCore
@_spi(Testing) import WebImageCore
import WebImage
import WebImageTestSupport

/// Repository fixtures (no corpus needed).
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }
    static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }
}

/// A clock the tests move by hand, for the failed-URL list's expiry.
final class ManualClock: Sendable {
    private let offset = Mutex(Duration.zero)
    private let origin = ContinuousClock.now

    var now: ContinuousClock.Instant { origin + offset.withLock { $0 } }
    func advance(by duration: Duration) { offset.withLock { $0 += duration } }
}

/// The real system decoders, each wrapped to count its decodes: how the tests see that a decode
/// was shared or never started. Decoding itself is untouched.
final class CountingDecoder: ImageDecoder {
    let base: any ImageDecoder
    private let decodes = Mutex(0)
    private let running = Mutex((now: 0, most: 0))
    /// While set, decodes wait on their (decoding, never cooperative) thread until
    /// ``openGate()``, so a test sees what else runs or waits meanwhile.
    private let gate = Mutex<DispatchSemaphore?>(nil)

    init(_ base: any ImageDecoder) { self.base = base }

    var formats: Set<ImageFormat> { base.formats }
    var count: Int { decodes.withLock { $0 } }
    /// Decodes under way now, and the most that ever were at once.
    var concurrency: (now: Int, most: Int) { running.withLock { $0 } }

    func closeGate() { gate.withLock { $0 = DispatchSemaphore(value: 0) } }

    func openGate() {
        let semaphore = gate.withLock { gate in
            defer { gate = nil }
            return gate
        }
        semaphore?.signal()
    }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        decodes.withLock { $0 += 1 }
        running.withLock { running in
            running.now += 1
            running.most = max(running.most, running.now)
        }
        defer { running.withLock { $0.now -= 1 } }
        if let semaphore = gate.withLock({ $0 }) {
            semaphore.wait()
            semaphore.signal() // and let the next one through
        }
        return try base.decode(data, options: options)
    }

    func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        base.makeIncrementalDecoder(options: options)
    }
}

/// A manager over a fresh disk cache in a temporary folder, with counted decoders.
struct PipelineFixture {
    let directory = TemporaryDirectory("pipeline")
    let clock = ManualClock()
    let registry: CoderRegistry
    let decoders: [CountingDecoder]
    let manager: ImageManager
    let cache: ImageCache

    init(loaders: [any ImageLoader] = [FileImageLoader(), DataURLImageLoader()], diskCache: Bool = true, configure: (inout ImageManager.Configuration) -> Void = { _ in }) throws {
        let system = CoderRegistry.system()
        let registry = CoderRegistry()
        var counted: [CountingDecoder] = []
        for format in ImageFormat.allCases {
            if let encoder = system.encoder(for: format) { registry.register(encoder) }
            guard let decoder = system.decoder(for: format), !counted.contains(where: { $0.formats.contains(format) }) else { continue }
            let wrapper = CountingDecoder(decoder)
            counted.append(wrapper)
            registry.register(wrapper)
        }
        self.registry = registry
        self.decoders = counted
        let disk = diskCache ? try DiskCache(directory: directory.url.appendingPathComponent("cache")) : nil
        cache = ImageCache(disk: disk)
        var configuration = ImageManager.Configuration(cache: cache, loaders: loaders, registry: registry)
        let clock = self.clock
        configuration.now = { clock.now }
        configure(&configuration)
        manager = ImageManager(configuration: configuration)
    }

    /// Decodes run so far, over every format.
    var decodeCount: Int { decoders.reduce(0) { $0 + $1.count } }

    /// A second manager over the same disk folder with an empty memory cache: what the next run
    /// of the program sees.
    func relaunched(loaders: [any ImageLoader] = [FileImageLoader(), DataURLImageLoader()]) throws -> ImageManager {
        let disk = try DiskCache(directory: directory.url.appendingPathComponent("cache"))
        return ImageManager(configuration: .init(cache: ImageCache(disk: disk), loaders: loaders, registry: registry))
    }
}

/// Collects values from concurrent callbacks.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}
