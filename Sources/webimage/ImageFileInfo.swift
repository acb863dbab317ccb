import Foundation
import WebImage

/// What `webimage info` reports about one file: what the header says, and, for formats with a
/// decoder, what decoding it says (size after orientation, stored orientation, frames, loop
/// count, durations).
struct ImageFileInfo {
    /// The path as the user typed it.
    var file: String
    var bytes: Int
    var header: ImageHeader
    /// The decoded facts; `nil` when no decoder reads the format.
    var decoded: Decoded?

    struct Decoded {
        /// After orientation.
        var width: Int
        var height: Int
        var orientation: ImageOrientation
        var frames: Int
        /// Plays, 0 = forever; `nil` for a still image.
        var loopCount: Int?
        /// Per frame, in milliseconds, as stored; empty for a still image.
        var durations: [Int]
    }

    /// Why a file cannot be reported; the message is what the user sees after the path.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the file at `path` and reports on it.
    init(path: String, registry: CoderRegistry) throws {
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
        try self.init(file: path, data: data, registry: registry)
    }

    /// Reports on `data`, named `file` (a path or a URL).
    init(file: String, data: Data, registry: CoderRegistry) throws {
        guard let header = ImageHeader(sniffing: data) else {
            throw Failure(description: data.isEmpty
                ? "empty file"
                : "not an image format webimage knows (\(data.count) bytes)")
        }
        self.file = file
        self.bytes = data.count
        self.header = header
        guard registry.decoder(for: header.format) != nil else { return }
        let image: ImageContainer
        do {
            image = try registry.decode(data)
        } catch {
            throw Failure(description: "\(header.format.rawValue) that does not decode: \(error)")
        }
        let frames = image.animation?.frames ?? []
        decoded = Decoded(
            width: image.image.width,
            height: image.image.height,
            orientation: image.orientation,
            frames: max(frames.count, 1),
            loopCount: image.animation?.loopCount,
            durations: frames.map { Int($0.duration / .milliseconds(1)) }
        )
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
        if let decoded {
            fields += [
                ("width", String(decoded.width)), ("height", String(decoded.height)),
                ("orientation", String(decoded.orientation.rawValue)), ("frames", String(decoded.frames)),
            ]
            if let loopCount = decoded.loopCount { fields.append(("loopCount", String(loopCount))) }
            fields.append(("durations", "[" + decoded.durations.map(String.init).joined(separator: ",") + "]"))
        } else if let width = header.pixelWidth, let height = header.pixelHeight {
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
            .init("BYTES", alignment: .right), .init("DIMENSIONS"), .init("ORIENTATION"),
            .init("FRAMES", alignment: .right), .init("LOOP"), .init("DURATIONS (ms)"),
        ])
        for record in records {
            let stored = record.header.pixelWidth.flatMap { width in
                record.header.pixelHeight.map { "\(width)×\($0)" }
            }
            let decoded = record.decoded
            table.append([
                record.file, record.header.format.rawValue, record.header.format.mimeType, String(record.bytes),
                decoded.map { "\($0.width)×\($0.height)" } ?? stored ?? "-",
                decoded.map { String($0.orientation.rawValue) } ?? "-",
                decoded.map { String($0.frames) } ?? "-",
                decoded?.loopCount.map { $0 == 0 ? "forever" : "\($0)×" } ?? "-",
                decoded.map { durationSummary($0.durations) } ?? "-",
            ])
        }
        return table.rendered
    }

    /// The first few durations, then an ellipsis: a 40-frame GIF should not make the table
    /// unreadable (`--json` has them all).
    private static func durationSummary(_ durations: [Int]) -> String {
        guard !durations.isEmpty else { return "-" }
        let shown = durations.prefix(5).map(String.init).joined(separator: ",")
        return durations.count > 5 ? shown + ",…" : shown
    }
}
