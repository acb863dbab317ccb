import Foundation
import Synchronization
import Testing
@testable import WebImageHTTP
import WebImageCore
import WebImageTestSupport

/// Runs `body` with a started origin and a loader built from `configuration`, and shuts both
/// down afterwards, also when `body` throws.
func withLoader(
    _ configure: (inout HTTPImageLoader.Configuration) -> Void = { _ in },
    _ body: (TestOrigin, HTTPImageLoader) async throws -> Void
) async throws {
    let origin = try await TestOrigin.start()
    var configuration = HTTPImageLoader.Configuration()
    // The default 15-second deadline is wall-clock time; the parallel suite on two busy cores has
    // starved a three-hop redirect and a 16 MiB stream past it (CI, 2026-11-25). Tests of the
    // deadline set their own. Stretched like the tests' other deadlines (`Deadlines`).
    configuration.timeout = .seconds(60 * Deadlines.stretch)
    configure(&configuration)
    let loader = HTTPImageLoader(configuration: configuration)
    do {
        try await body(origin, loader)
    } catch {
        try? await loader.shutdown()
        try? await origin.shutdown()
        throw error
    }
    try await loader.shutdown()
    try await origin.shutdown()
}

extension HTTPImageLoader {
    /// Loads `url` with a fresh context.
    func load(_ url: URL, priority: ImagePriority = .normal, options: ImageOptions = []) async throws -> ImageLoadResponse {
        try await load(ImageLoadRequest(url: url, options: options), context: ImageLoadContext(priority: priority))
    }

    /// Waits (yielding, never sleeping) until `count` downloads wait in the queue.
    func waitUntilQueued(_ count: Int) async {
        while queue.waitingCount < count { await Task.yield() }
    }
}

/// The ``ImageError`` `operation` fails with, or `nil` when it succeeds or throws another type.
func imageError(_ operation: () async throws -> Any) async -> ImageError? {
    do {
        _ = try await operation()
        return nil
    } catch {
        return error as? ImageError
    }
}

extension ImageError {
    var networkKind: NetworkFailure.Kind? {
        if case .network(let failure) = self { failure.kind } else { nil }
    }

    var isTimeout: Bool {
        if case .timeout = self { true } else { false }
    }

    var isTooLarge: Bool {
        if case .tooLarge = self { true } else { false }
    }

    var isUnsupportedFormat: Bool {
        if case .unsupportedFormat = self { true } else { false }
    }
}

/// A value tests append to from `@Sendable` callbacks.
final class Collected<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var values: [Element] { items.withLock { $0 } }
}
