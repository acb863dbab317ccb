import Tracing

/// The pipeline's stages, each a span through swift-distributed-tracing when a tracer is
/// bootstrapped (`InstrumentationSystem.bootstrap`): a trace of one load shows where its time
/// went. Without one, the spans are the no-op tracer's, which record nothing.
///
/// A load's stages are children of its ``image`` span, which is a child of whatever span was
/// current where the load started (a request's, in a server); requests that join a load under
/// way add no spans of their own. The names are stable: dashboards and alerts may use them.
package enum PipelineStage: String, Sendable {
    /// One load through the pipeline, from its first stage below the memory cache to its answer.
    case image = "webimage.image"
    /// A lookup in the memory cache. Attribute `webimage.cache.hit`.
    case memoryLookup = "webimage.memory_lookup"
    /// A read of the disk cache (the original's bytes, or a variant's). Attribute `webimage.cache.hit`.
    case diskRead = "webimage.disk_read"
    /// The loader's work for the original's bytes, its retries included. Attributes `url.full`,
    /// `webimage.bytes`.
    case load = "webimage.load"
    /// The decode of the bytes into an image. Attributes `webimage.width`, `webimage.height`.
    case decode = "webimage.decode"
    /// The request's processors, the resize among them.
    case process = "webimage.process"
    /// An encode of an image into bytes. Attributes `webimage.format`, `webimage.bytes`.
    case encode = "webimage.encode"
    /// A write to a cache that outlives the process: the disk, a server's result store.
    case store = "webimage.store"

    /// Runs `body` in a span of this stage: a child of the current span, ended when `body`
    /// returns, with an error `body` throws recorded on it.
    package func run<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (any Span) async throws -> T
    ) async rethrows -> T {
        try await withSpan(rawValue, isolation: isolation, body)
    }

    /// ``run(isolation:_:)`` for synchronous work.
    package func run<T>(_ body: (any Span) throws -> T) rethrows -> T {
        try withSpan(rawValue, body)
    }

    /// A cache lookup (``memoryLookup``, ``diskRead``) in a span of this stage, with
    /// `webimage.cache.hit`, when a span is current; otherwise `lookUp` alone, since a lookup
    /// with nothing around it would be a trace of its own, and an untraced hit pays nothing.
    package func lookUp<T>(_ lookUp: () -> T?) -> T? {
        guard ServiceContext.current != nil else { return lookUp() }
        return run { span in
            let found = lookUp()
            span.attributes["webimage.cache.hit"] = found != nil
            return found
        }
    }

    /// ``lookUp(_:)`` for a lookup that suspends (a read of the disk).
    package func lookUp<T>(isolation: isolated (any Actor)? = #isolation, _ lookUp: () async -> T?) async -> T? {
        guard ServiceContext.current != nil else { return await lookUp() }
        return await run(isolation: isolation) { span in
            let found = await lookUp()
            span.attributes["webimage.cache.hit"] = found != nil
            return found
        }
    }
}
