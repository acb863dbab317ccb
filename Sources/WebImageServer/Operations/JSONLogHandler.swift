import Foundation
import Logging
import Synchronization

/// A swift-log handler that writes one JSON object per line to standard error: what log
/// collectors (journald, Loki, CloudWatch, `jq`) read without a parser of their own.
///
/// ```swift
/// import Logging
///
/// LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
/// // {"ts":"2026-11-23T17:40:02.113Z","level":"info","logger":"webimage.serve.access","msg":"request","status":200,…}
/// ```
///
/// Metadata given as `.stringConvertible` numbers (status, bytes, durations) is written as JSON
/// numbers; everything else as strings.
package struct JSONLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    /// Metadata added to every line from where it is logged (swift-otel's gives the current
    /// span's `trace_id` and `span_id`).
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String

    /// Lines from different threads never interleave.
    private static let output = Mutex(())

    package init(label: String) {
        self.label = label
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var fields: [(String, String)] = [
            ("ts", Self.quoted(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date()))),
            ("level", Self.quoted(event.level.rawValue)),
            ("logger", Self.quoted(label)),
            ("msg", Self.quoted(event.message.description)),
        ]
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        merged.merge(event.metadata ?? [:]) { $1 }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            fields.append((key, Self.json(value)))
        }
        let line = "{" + fields.map { "\(Self.quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}\n"
        Self.output.withLock { _ in
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string):
            return quoted(string)
        case .stringConvertible(let convertible):
            let text = convertible.description
            if let number = Double(text), number.isFinite, !text.contains(where: \.isLetter) { return text }
            return quoted(text)
        case .array(let values):
            return "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let dictionary):
            return "{" + dictionary.sorted { $0.key < $1.key }.map { "\(quoted($0.key)):\(json($0.value))" }.joined(separator: ",") + "}"
        }
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result += String(format: "\\u%04x", scalar.value)
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
