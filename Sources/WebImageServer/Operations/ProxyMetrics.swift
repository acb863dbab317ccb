import Metrics
import Prometheus
import Synchronization
import WebImageCore

/// The proxy's Prometheus registry and its own instruments. The pipeline's instruments
/// (`webimage_requests_total`, `webimage_hits_total`, …) report into the same registry, so
/// `/metrics` shows both.
///
/// Names: `webimage_proxy_requests_total{route,status}`,
/// `webimage_proxy_request_duration_seconds{route}`, `webimage_proxy_variants_total{source}`
/// (`memory`, `disk`, `store`, `miss`), `webimage_proxy_store_operations_total{operation,outcome}`
/// and `webimage_proxy_store_duration_seconds{operation}` (the fleet's result store),
/// `webimage_proxy_in_flight`, and
/// `webimage_proxy_event_loop_answers_total` (cached variants answered before the router, by
/// `CachedVariantHandler`).
///
/// ```swift
/// let proxy = try ImageProxy(configuration: .init())
/// print(proxy.metrics.exposition())   // what GET /metrics answers
/// ```
///
/// The registry is not installed as the process-wide `MetricsSystem`: each proxy has its own,
/// so tests can run several, and no other library can register a clashing metric name in it.
public struct ProxyMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    package let factory: PrometheusMetricsFactory
    private let inFlight: Metrics.Gauge
    private let eventLoopAnswers: Metrics.Counter
    /// Counters and timers made once per label set: making one per request (a registry lookup
    /// under its lock, label checks, allocations) was a tenth of a cached variant's cost.
    private let handlers = Instruments()

    private struct RequestKey: Hashable {
        var route: String
        var status: Int
    }

    private final class Instruments: Sendable {
        struct Made {
            var requests: [RequestKey: (Metrics.Counter, Metrics.Timer)] = [:]
            var variants: [String: Metrics.Counter] = [:]
            var store: [String: Metrics.Counter] = [:]
            var storeRetries: [String: Metrics.Counter] = [:]
            var storeLatency: [String: Metrics.Timer] = [:]
        }
        let made = Mutex(Made())
    }

    /// A fresh registry: each proxy has its own, so several can run in one process (tests).
    package init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10),
        ]
        self.factory = factory
        inFlight = Metrics.Gauge(label: "webimage_proxy_in_flight", factory: factory)
        eventLoopAnswers = Metrics.Counter(label: "webimage_proxy_event_loop_answers_total", factory: factory)
    }

    func recordRequest(route: String, status: Int, duration: Duration) {
        recordRequest(requestInstruments(route: route, status: status), duration: duration)
    }

    /// The counter and timer of requests of `route` answered with `status`, for a caller that
    /// keeps them (`CachedVariantHandler`: the lookup takes a lock every event loop shares).
    func requestInstruments(route: String, status: Int) -> (Metrics.Counter, Metrics.Timer) {
        handlers.made.withLock { handlers in
            let key = RequestKey(route: route, status: status)
            if let known = handlers.requests[key] { return known }
            let made = (
                Metrics.Counter(label: "webimage_proxy_requests_total", dimensions: [("route", route), ("status", String(status))], factory: factory),
                Metrics.Timer(label: "webimage_proxy_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            )
            handlers.requests[key] = made
            return made
        }
    }

    func recordRequest(_ instruments: (Metrics.Counter, Metrics.Timer), duration: Duration) {
        instruments.0.increment()
        instruments.1.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// - Parameter source: `memory`, `disk`, `store` or `miss`.
    func recordVariant(_ source: String) {
        variantCounter(source).increment()
    }

    /// The counter of variants answered from `source`, for a caller that keeps it.
    func variantCounter(_ source: String) -> Metrics.Counter {
        handlers.made.withLock { handlers in
            if let known = handlers.variants[source] { return known }
            let made = Metrics.Counter(label: "webimage_proxy_variants_total", dimensions: [("source", source)], factory: factory)
            handlers.variants[source] = made
            return made
        }
    }

    func recordStore(operation: String, outcome: String) {
        let key = operation + "|" + outcome
        let counter = handlers.made.withLock { handlers in
            if let known = handlers.store[key] { return known }
            let made = Metrics.Counter(
                label: "webimage_proxy_store_operations_total", dimensions: [("operation", operation), ("outcome", outcome)], factory: factory)
            handlers.store[key] = made
            return made
        }
        counter.increment()
    }

    /// A retry of a request to the result store (`get` or `put`), by the reason the shared
    /// ``RetryPolicy`` gives (`slow_down`, `http_503`, `timeout`, …):
    /// `webimage_proxy_store_retries_total{operation,reason}`.
    func recordStoreRetry(operation: String, reason: RetryPolicy.Reason) {
        let key = operation + "|" + reason.description
        let counter = handlers.made.withLock { handlers in
            if let known = handlers.storeRetries[key] { return known }
            let made = Metrics.Counter(
                label: "webimage_proxy_store_retries_total", dimensions: [("operation", operation), ("reason", reason.description)], factory: factory)
            handlers.storeRetries[key] = made
            return made
        }
        counter.increment()
    }

    /// How long one store request took, `get` or `put`, whatever its outcome.
    func recordStoreLatency(operation: String, _ duration: Duration) {
        let timer = handlers.made.withLock { handlers in
            if let known = handlers.storeLatency[operation] { return known }
            let made = Metrics.Timer(label: "webimage_proxy_store_duration_seconds", dimensions: [("operation", operation)], factory: factory)
            handlers.storeLatency[operation] = made
            return made
        }
        timer.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    func recordEventLoopAnswer() {
        eventLoopAnswers.increment()
    }

    func recordInFlight(_ count: Int) {
        inFlight.record(count)
    }

    /// The registry in Prometheus' text format.
    public func exposition() -> String {
        registry.emitToString()
    }
}
