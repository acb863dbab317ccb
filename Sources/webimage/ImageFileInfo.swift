import Foundation
import WebImage
import WebImageCodecs

/// What `webimage info` reports about one file: its ``ImageMetadata``, read from the headers and
/// a walk over the file's chunks or blocks without decoding any pixels, so a 42-frame GIF costs
/// one pass over its bytes, not 42 frame decodes; and what only a decoder knows, from one small
/// decode of the first frame: its colour, its placeholders (ThumbHash, BlurHash) and its
/// dominant colour. For a video or a PDF, what their probes say besides (``MediaReport``).
struct ImageFileInfo {
    /// The path as the user typed it.
    var file: String
    var bytes: Int
    var metadata: ImageMetadata
    /// `nil` when the file does not decode.
    var placeholders: PlaceholderReport?
    /// `nil` when the file does not decode.
    var color: ColorReport? { placeholders?.color }
    /// A video's or a PDF's facts; `nil` for an image.
    var media: MediaReport?

    /// Why a file cannot be reported; the message is what the user sees after the path.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the file at `path` and reports on it.
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
        try self.init(file: path, data: data)
    }

    /// Reports on `data`, named `file` (a path or a URL).
    init(file: String, data: Data) throws {
        do {
            metadata = try ImageMetadata(reading: data)
        } catch ImageError.unsupportedFormat {
            throw Failure(description: data.isEmpty
                ? "empty file"
                : "not an image format webimage knows (\(data.count) bytes)")
        } catch {
            throw Failure(description: "\(error)")
        }
        self.file = file
        self.bytes = data.count
        // A probe that fails leaves the row to what the headers say, as for an image that does not decode.
        media = (try? MediaReport(data, format: metadata.format, options: ImageDecodingOptions())) ?? nil
        if let media {
            metadata.pixelWidth = metadata.pixelWidth ?? media.width
            metadata.pixelHeight = metadata.pixelHeight ?? media.height
            metadata.frameCount = metadata.frameCount ?? media.frameCount
            metadata.bitDepth = metadata.bitDepth ?? media.bitDepth
        }
        placeholders = Self.placeholderReport(data)
    }

    /// The profile a decode converts from is the decoders' judgement (a PNG's colour chunks in
    /// their order of precedence, an `nclx` box, a JPEG XL's colour encoding, a profile lcms2
    /// refuses), so the colour facts come from one: of the first frame, at most 100 px a side
    /// (a JPEG at 1/8 scale, never full size), keeping the colour space and its profile. The
    /// placeholders (4×3 BlurHash) and the dominant colour are read from the same decode.
    private static func placeholderReport(_ data: Data) -> PlaceholderReport? {
        guard let container = try? PlaceholderReport.decode(data, registry: registry, options: ImageDecodingOptions()) else { return nil }
        return try? PlaceholderReport(decoded: container)
    }

    private static let registry = CoderRegistry.command()

    /// Per frame, in whole milliseconds as stored; empty for a still image.
    var durations: [Int] {
        metadata.frameDurations.map { Int($0 / .milliseconds(1)) }
    }

    /// The JSON object for `--json`, on one line, keys in a fixed order (the order of the
    /// table's columns), unknown values left out; `"truncated":true` when the file stops before
    /// its structure does (the frame count is then a lower bound).
    func jsonLine() throws -> String {
        var fields: [(key: String, value: String)] = [
            ("file", try Self.jsonString(file)),
            ("format", try Self.jsonString(metadata.format.rawValue)),
            ("mime", try Self.jsonString(metadata.format.mimeType)),
            ("bytes", String(bytes)),
        ]
        if let width = metadata.orientedWidth, let height = metadata.orientedHeight {
            fields += [("width", String(width)), ("height", String(height))]
        }
        if let orientation = metadata.orientation { fields.append(("orientation", String(orientation.rawValue))) }
        if let frames = metadata.frameCount {
            fields.append(("frames", String(frames)))
            if let loopCount = metadata.loopCount { fields.append(("loopCount", String(loopCount))) }
            fields.append(("durations", "[" + durations.map(String.init).joined(separator: ",") + "]"))
        }
        if let bitDepth = metadata.bitDepth { fields.append(("bitDepth", String(bitDepth))) }
        if let color {
            fields.append(("convertsToSRGB", String(color.convertsToSRGB)))
            if let profile = color.profileDescription { fields.append(("colorProfile", try Self.jsonString(profile))) }
        }
        if let placeholders {
            fields += [
                ("dominantColor", try Self.jsonString(placeholders.dominantColor.hex)),
                ("thumbHash", try Self.jsonString(placeholders.thumbHash.base64)),
                ("blurHash", try Self.jsonString(placeholders.blurHash.string)),
            ]
        }
        if let media { fields += media.jsonFields }
        if metadata.isTruncated { fields.append(("truncated", "true")) }
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
            .init("BITS", alignment: .right), .init("TO SRGB"), .init("COLOUR PROFILE"),
            .init("DOMINANT"), .init("THUMBHASH"), .init("BLURHASH"),
            .init("DURATION (s)", alignment: .right), .init("FPS", alignment: .right), .init("CODEC"), .init("PAGES", alignment: .right),
        ])
        for record in records {
            let metadata = record.metadata
            let dimensions = metadata.orientedWidth.flatMap { width in
                metadata.orientedHeight.map { "\(width)×\($0)" }
            }
            table.append([
                record.file, metadata.format.rawValue, metadata.format.mimeType, String(record.bytes),
                dimensions ?? "-",
                metadata.orientation.map { String($0.rawValue) } ?? "-",
                // "3+": the file stops early, and more frames may follow.
                metadata.frameCount.map { "\($0)\(metadata.isTruncated ? "+" : "")" } ?? "-",
                metadata.loopCount.map { $0 == 0 ? "forever" : "\($0)×" } ?? "-",
                durationSummary(record.durations),
                metadata.bitDepth.map(String.init) ?? "-",
                record.color.map { $0.convertsToSRGB ? "yes" : "no" } ?? "-",
                record.color?.profileDescription ?? "-",
                record.placeholders?.dominantColor.hex ?? "-",
                record.placeholders?.thumbHash.base64 ?? "-",
                record.placeholders?.blurHash.string ?? "-",
                record.media?.duration.map(MediaReport.seconds) ?? "-",
                record.media?.frameRate.map(MediaReport.seconds) ?? "-",
                record.media?.codec ?? "-",
                record.media?.pageCount.map(String.init) ?? "-",
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
