import AsyncHTTPClient
import Foundation
import Glibc
import Synchronization

/// A receiver of the real OpenTelemetry protocol (OTLP/HTTP with protobuf bodies):
/// `Tests/Fixtures/otlp-receiver.py`, which decodes what an exporter sends with the protocol's
/// own message definitions (`opentelemetry-proto` from PyPI) and prints each span as a JSON line.
/// The tests of the OpenTelemetry export point `OTEL_EXPORTER_OTLP_ENDPOINT` at ``endpoint``.
public final class OTLPReceiver: Sendable {
    /// One span as the receiver decoded it.
    public struct Span: Sendable, CustomStringConvertible {
        public var traceID: String
        public var spanID: String
        /// Empty for a root span.
        public var parentSpanID: String
        public var name: String
        /// The protocol's enum name: `SPAN_KIND_SERVER`, `SPAN_KIND_CLIENT`, `SPAN_KIND_INTERNAL`.
        public var kind: String
        /// The resource's `service.name`.
        public var service: String
        /// The attributes, each as its JSON text (`"GET"`, `200`, `true`).
        public var attributes: [String: String]

        public var description: String { "\(name) \(spanID) ← \(parentSpanID.isEmpty ? "root" : parentSpanID)" }
    }

    /// Whether `python3` can import `opentelemetry.proto` (installed by `scripts/deps.sh --test`).
    public static let isAvailable = imports("opentelemetry.proto.collector.trace.v1.trace_service_pb2")
    /// Whether it can serve OTLP/gRPC too: `grpcio` (also installed by `scripts/deps.sh --test`).
    public static let servesGRPC = isAvailable && imports("grpc")

    private static func imports(_ module: String) -> Bool {
        let run = try? CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import \(module)"])
        return run?.status == 0
    }

    private let child: ChildProcess
    /// Where it listens for OTLP/HTTP: `http://127.0.0.1:PORT`.
    public let endpoint: String
    /// Where it listens for OTLP/gRPC, when started with `grpc`: `http://127.0.0.1:PORT`.
    public let grpcEndpoint: String?
    private let marks = Mutex(0)

    private init(child: ChildProcess, endpoint: String, grpcEndpoint: String?) {
        self.child = child
        self.endpoint = endpoint
        self.grpcEndpoint = grpcEndpoint
    }

    /// Starts a receiver on `port` (by default one the system picks), with a gRPC listener too
    /// when `grpc`, and waits until it listens.
    public static func start(port: Int = 0, grpc: Bool = false) async throws -> OTLPReceiver {
        let script = ServeProcess.repository.appendingPathComponent("Tests/Fixtures/otlp-receiver.py")
        let arguments = ["python3", script.path, "--port", String(port)] + (grpc ? ["--grpc-port", "0"] : [])
        let child = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), arguments)
        guard let line = await child.waitForLine(where: { $0.hasPrefix("listening on ") }) else {
            child.kill()
            throw NotListening(stderr: child.stderr.joined(separator: "\n"))
        }
        var grpcEndpoint: String?
        if grpc {
            guard let grpcLine = await child.waitForLine(where: { $0.hasPrefix("grpc on ") }) else {
                child.kill()
                throw NotListening(stderr: child.stderr.joined(separator: "\n"))
            }
            grpcEndpoint = "http://" + grpcLine.dropFirst("grpc on ".count)
        }
        return OTLPReceiver(child: child, endpoint: String(line.dropFirst("listening on ".count)), grpcEndpoint: grpcEndpoint)
    }

    /// Every span received so far, once every export that finished before this call is read:
    /// the receiver prints a mark after them, which this waits for.
    public func spans() async throws -> [Span] {
        let mark = marks.withLock { count in
            count += 1
            return "m\(count)"
        }
        let response = try await HTTPClient.tests.get(url: endpoint + "/mark?" + mark).get()
        guard response.status == .ok,
              await child.waitForLine(where: { $0 == #"{"mark": "\#(mark)"}"# }) != nil else {
            throw NotListening(stderr: child.stderr.joined(separator: "\n"))
        }
        return child.stdout.compactMap(Self.span(fromLine:))
    }

    /// The lines the receiver printed that are not spans nor marks: other signals, errors.
    public var otherLines: [String] {
        child.stdout.dropFirst().filter { !$0.hasPrefix(#"{"span""#) && !$0.hasPrefix(#"{"mark""#) && !$0.hasPrefix("grpc on ") }
    }

    public func stop() { child.kill(SIGTERM) }

    private static func span(fromLine line: String) -> Span? {
        guard line.hasPrefix(#"{"span""#),
              let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let span = object["span"] as? [String: Any] else { return nil }
        func text(_ key: String) -> String { span[key] as? String ?? "" }
        var attributes: [String: String] = [:]
        for (key, value) in span["attributes"] as? [String: Any] ?? [:] {
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
            attributes[key] = data.map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
        }
        return Span(
            traceID: text("trace_id"), spanID: text("span_id"), parentSpanID: text("parent_span_id"), name: text("name"),
            kind: text("kind"), service: text("service"), attributes: attributes)
    }

    /// The receiver ended, or said something else, before it listened.
    public struct NotListening: Error, CustomStringConvertible {
        public var stderr: String
        public var description: String { "otlp-receiver.py did not answer; stderr: \(stderr)" }
    }
}
