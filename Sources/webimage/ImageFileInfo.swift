import Foundation
import WebImage

/// What `webimage info` reports about one file. Later stages add decoded facts (orientation,
/// frames, durations) as further properties, each with a table column and a JSON key.
struct ImageFileInfo {
    /// The path as the user typed it.
    var file: String
    var bytes: Int
    var header: ImageHeader

    /// Why a file cannot be reported; the message is what the user sees after the path.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw Failure(description: "no such file")
        }
        guard !isDirectory.boolValue else { throw Failure(description: "is a directory, not a file") }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw Failure(description: "cannot read it (\(error.localizedDescription))")
        }
        guard let header = ImageHeader(sniffing: data) else {
            throw Failure(description: data.isEmpty
                ? "empty file"
                : "not an image format webimage knows (\(data.count) bytes)")
        }
        self.file = path
        self.bytes = data.count
        self.header = header
    }

    /// The JSON object for `--json`, on one line, keys in a fixed order (the order of the
    /// table's columns), unknown values left out.
    func jsonLine() throws -> String {
        var fields: [(key: String, value: String)] = [
            ("file", try Self.jsonString(file)),
            ("format", try Self.jsonString(header.format.rawValue)),
            ("mime", try Self.jsonString(header.format.mimeType)),
            ("bytes", String(bytes)),
        ]
        if let width = header.pixelWidth, let height = header.pixelHeight {
            fields += [("width", String(width)), ("height", String(height))]
        }
        return "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    /// A string as a JSON literal; JSONEncoder does the escaping (quotes, backslashes,
    /// control characters in odd file names).
    private static func jsonString(_ string: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return String(decoding: try encoder.encode(string), as: UTF8.self)
    }

    /// The rows as an aligned text table with a header line, numbers right-aligned.
    static func table(_ records: [ImageFileInfo]) -> String {
        var table = TextTable(columns: [
            .init("FILE"), .init("FORMAT"), .init("MIME TYPE"),
            .init("BYTES", alignment: .right), .init("DIMENSIONS"),
        ])
        for record in records {
            let dimensions = record.header.pixelWidth.flatMap { width in
                record.header.pixelHeight.map { "\(width)×\($0)" }
            }
            table.append([
                record.file, record.header.format.rawValue, record.header.format.mimeType,
                String(record.bytes), dimensions ?? "-",
            ])
        }
        return table.rendered
    }
}
