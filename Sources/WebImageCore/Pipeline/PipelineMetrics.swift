import Metrics

/// The manager's swift-metrics instruments, made once so a memory hit pays only for the
/// increments.
///
/// Names (Prometheus style): `webimage_requests_total`, `webimage_hits_total{cache=memory|disk|none}`,
/// `webimage_downloaded_bytes_total`, `webimage_coalesced_requests_total`,
/// `webimage_failures_total{kind=…}`, `webimage_retries_total{reason=…}` (a loader's retries:
/// `connection_refused`, `connection_lost`, `timeout`, `http_503`, `slow_down`, …),
/// `webimage_load_duration_seconds`.
struct PipelineMetrics: Sendable {
    let factory: any MetricsFactory
    let requests: Counter
    let memoryHits: Counter
    let diskHits: Counter
    let sourceLoads: Counter
    let downloadedBytes: Counter
    let coalesced: Counter
    let duration: Timer

    init(factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        self.factory = factory
        requests = Counter(label: "webimage_requests_total", factory: factory)
        memoryHits = Counter(label: "webimage_hits_total", dimensions: [("cache", "memory")], factory: factory)
        diskHits = Counter(label: "webimage_hits_total", dimensions: [("cache", "disk")], factory: factory)
        sourceLoads = Counter(label: "webimage_hits_total", dimensions: [("cache", "none")], factory: factory)
        downloadedBytes = Counter(label: "webimage_downloaded_bytes_total", factory: factory)
        coalesced = Counter(label: "webimage_coalesced_requests_total", factory: factory)
        duration = Timer(label: "webimage_load_duration_seconds", factory: factory)
    }

    func recordHit(_ cacheType: CacheType) {
        switch cacheType {
        case .memory: memoryHits.increment()
        case .disk: diskHits.increment()
        case .none: sourceLoads.increment()
        }
    }

    func recordFailure(_ error: ImageError) {
        Counter(label: "webimage_failures_total", dimensions: [("kind", error.kindName)], factory: factory).increment()
    }

    /// One retry of a download. Made on demand, as failures are: retries are rare, and their
    /// reasons are a short fixed list.
    func recordRetry(_ reason: RetryPolicy.Reason) {
        Counter(label: "webimage_retries_total", dimensions: [("reason", reason.description)], factory: factory).increment()
    }
}

extension ImageError {
    /// A short name of the case, for metrics and logs.
    package var kindName: String {
        switch self {
        case .invalidBitmap: "invalid_bitmap"
        case .unsupportedFormat: "unsupported_format"
        case .corruptData: "corrupt_data"
        case .tooLarge: "too_large"
        case .storage: "storage"
        case .cancelled: "cancelled"
        case .invalidURL: "invalid_url"
        case .httpStatus: "http_status"
        case .network(let failure): "network_\(failure.kind.rawValue)"
        case .timeout: "timeout"
        case .recentlyFailed: "recently_failed"
        case .cacheMiss: "cache_miss"
        case .custom: "custom"
        }
    }
}
