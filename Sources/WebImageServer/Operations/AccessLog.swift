import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import Synchronization
import WebImage

/// One log line per request, and the request metrics: written by the router's middleware and
/// by `CachedVariantHandler` alike.
struct AccessLog: Sendable {
    let logger: Logger
    let metrics: ProxyMetrics
    /// thumbor's paths are counted as the route `thumbor`.
    var thumbor: ThumborRoute? = nil
    /// imgproxy's paths are counted as the route `imgproxy`.
    var imgproxy: ImgproxyRoute? = nil

    /// - Parameters:
    ///   - bytes: the body's length as sent (0 for `HEAD` and `304`), `nil` when unknown.
    ///   - notes: what the handler noted (source, cache, error), built only when it will be logged.
    func record(
        method: HTTPRequest.Method, path: String, status: Int, bytes: Int?, duration: Duration,
        error: String?, notes: () -> Logger.Metadata
    ) {
        metrics.recordRequest(route: route(for: path), status: status, duration: duration)
        log(method: method, path: path, status: status, bytes: bytes, duration: duration, error: error, notes: notes)
    }

    /// The log line alone, for a caller that records the metrics itself.
    func log(
        method: HTTPRequest.Method, path: String, status: Int, bytes: Int?, duration: Duration,
        error: String?, notes: () -> Logger.Metadata
    ) {
        // Load tests run at warning: then nothing below is built for nothing.
        guard logger.logLevel <= .info else { return }
        var metadata = notes()
        metadata["method"] = .string(method.rawValue)
        metadata["path"] = .string(path)
        metadata["status"] = .stringConvertible(status)
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        metadata["duration_ms"] = .stringConvertible((milliseconds * 100).rounded() / 100)
        if let bytes { metadata["bytes"] = .stringConvertible(bytes) }
        if let error { metadata["error"] = .string(error) }
        logger.info("request", metadata: metadata)
    }

    /// The route name of `path`: thumbor's, imgproxy's or one of ``route(_:)``. A dialect at the
    /// root is asked last, as its middleware is.
    func route(for path: String) -> String {
        let thumborFirst = thumbor?.prefix.isEmpty != true
        if thumborFirst, let thumbor, thumbor.relativePath(path[...]) != nil { return "thumbor" }
        if let imgproxy, imgproxy.relativePath(path[...]) != nil || path == imgproxy.prefix + "/health" { return "imgproxy" }
        if !thumborFirst, let thumbor, thumbor.relativePath(path[...]) != nil { return "thumbor" }
        return Self.route(path)
    }

    /// A fixed set of route names, so a scan of random paths cannot grow the metrics.
    static func route(_ path: String) -> String {
        switch path {
        case "/image", "/info", "/healthz", "/metrics", "/", "/favicon.ico": path
        default: "other"
        }
    }
}
