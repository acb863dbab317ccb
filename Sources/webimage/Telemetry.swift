import ArgumentParser
import Foundation
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// OpenTelemetry traces for the commands, through swift-otel's OTLP exporter, when the
/// standard `OTEL_*` environment asks for them: `OTEL_TRACES_EXPORTER=otlp` (or `console`), or
/// an `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`. swift-otel then reads
/// the rest (`OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, headers, timeouts).
/// Without any of them nothing is bootstrapped: the library's spans are the no-op tracer's and
/// no request carries a `traceparent`. `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`
/// turn it off whatever else is set.
///
/// OTLP goes over HTTP with protobuf (`http/protobuf`, the default) or JSON (`http/json`), or
/// over gRPC (`grpc`); another `OTEL_EXPORTER_OTLP_PROTOCOL` is refused with an error.
struct Telemetry {
    /// The exporter's background work (batching, export, the flush on shutdown).
    let service: any Service

    /// The command's service name unless `OTEL_SERVICE_NAME` gives one.
    static let defaultServiceName = "webimage"

    /// Whether `environment` asks for traces.
    /// - Throws: a `ValidationError` for a protocol this build cannot export with.
    static func wantsTraces(_ environment: [String: String]) throws -> Bool {
        func value(_ name: String) -> String? {
            environment[name].map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.flatMap { $0.isEmpty ? nil : $0 }
        }
        if value("OTEL_SDK_DISABLED") == "true" { return false }
        let exporter = value("OTEL_TRACES_EXPORTER")
        if exporter == "none" { return false }
        let asked = exporter != nil || value("OTEL_EXPORTER_OTLP_ENDPOINT") != nil || value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != nil
        guard asked else { return false }
        let transport = value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? value("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf"
        guard ["http/protobuf", "http/json", "grpc"].contains(transport) || exporter == "console" else {
            throw ValidationError("OTEL_EXPORTER_OTLP_PROTOCOL=\(transport): traces go over OTLP with http/protobuf or http/json (port 4318), or grpc (port 4317)")
        }
        return true
    }

    /// Bootstraps the process's tracer from `environment` (once per process), or returns `nil`
    /// when it asks for no traces.
    static func bootstrap(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Telemetry? {
        guard try wantsTraces(environment) else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = defaultServiceName
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.diagnosticLogLevel = .error
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        return Telemetry(service: backend.service)
    }

    /// Metadata for every log line made inside a span: its `trace_id` and `span_id`.
    static var loggingMetadataProvider: Logger.MetadataProvider { OTel.makeLoggingMetadataProvider() }

    /// Runs `body` with the tracer bootstrapped and its exporter running when the environment
    /// asks for traces, then stops the exporter, which sends the spans still queued: what a
    /// command that ends by itself (`fetch`, `prefetch`) does.
    static func tracing<T>(_ body: () async throws -> T) async throws -> T {
        guard let telemetry = try bootstrap() else { return try await body() }
        let group = ServiceGroup(configuration: .init(services: [.init(service: telemetry.service)], logger: Logger(label: "webimage.telemetry")))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            return try result.get()
        }
    }
}
