import Foundation
import WebImageCodecs

/// How `webimage info` shows a video's or a PDF's ``MediaReport``.
extension MediaReport {
    /// Seconds with up to three decimals (`12.5`, `0.04`), as `--json` and the table show them.
    static func seconds(_ value: Double) -> String {
        String(format: "%.3f", value).replacingOccurrences(of: #"\.?0+$"#, with: "", options: .regularExpression)
    }

    /// `--json`'s fields, in the order of the table's columns.
    var jsonFields: [(key: String, value: String)] {
        var fields: [(key: String, value: String)] = []
        if let duration { fields.append(("duration", Self.seconds(duration))) }
        if let frameRate { fields.append(("frameRate", Self.seconds(frameRate))) }
        if let codec { fields.append(("codec", "\"\(codec)\"")) }
        if let pageCount { fields.append(("pages", String(pageCount))) }
        return fields
    }
}
