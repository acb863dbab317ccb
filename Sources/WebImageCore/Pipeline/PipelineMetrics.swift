import Metrics

/// The manager's swift-metrics instruments, made once so a memory hit pays only for the
/// increments.
///
/// Names (Prometheus style): `webimage_requests_total`, `webimage_hits_total{cache=memory|disk|none}`,
/// `webimage_downloaded_bytes_total`, `webimage_coalesced_requests_total`,
/// `webimage_failures_total{kind=…}`, `webimage_load_duration_seconds`.
struct PipelineMetrics: Sendable {
    let requests = Counter(label: "webimage_requests_total")
    let memoryHits = Counter(label: "webimage_hits_total", dimensions: [("cache", "memory")])
    let diskHits = Counter(label: "webimage_hits_total", dimensions: [("cache", "disk")])
    let sourceLoads = Counter(label: "webimage_hits_total", dimensions: [("cache", "none")])
    let downloadedBytes = Counter(label: "webimage_downloaded_bytes_total")
    let coalesced = Counter(label: "webimage_coalesced_requests_total")
    let duration = Timer(label: "webimage_load_duration_seconds")

    func recordHit(_ cacheType: CacheType) {
        switch cacheType {
        case .memory: memoryHits.increment()
        case .disk: diskHits.increment()
        case .none: sourceLoads.increment()
        }
    }

    func recordFailure(_ error: ImageError) {
        Counter(label: "webimage_failures_total", dimensions: [("kind", error.kindName)]).increment()
    }
}

extension ImageError {
    /// A short name of the case, for metrics and logs.
    public var kindName: String {
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
        }
    }
}
