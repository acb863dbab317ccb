import Foundation
import WebImage
import WebImageCodecs

/// What `webimage info` adds for a video or a PDF, from their decoders' probes: a video's size as
/// shown, duration, frame rate and codec (FFmpeg's headers and first frame), a PDF's page count
/// and its first page's size in points (one pixel a point). The same limits and isolation as a
/// decode: nothing outside the file is read.
struct MediaFileInfo {
    var width: Int?
    var height: Int?
    /// Seconds.
    var duration: TimeInterval?
    var frameRate: Double?
    var codec: String?
    var frameCount: Int?
    var bitDepth: Int?
    var pageCount: Int?

    /// The report of `data`, sniffed as `format`; `nil` for an image, or when the probe fails
    /// (the row then shows what the headers say, as for an image that does not decode).
    init?(_ data: Data, format: ImageFormat) {
        let options = ImageDecodingOptions()
        if format.isVideo {
            guard let video = try? VideoDecoder.probe(data, options: options) else { return nil }
            (width, height, duration, frameRate) = (video.width, video.height, video.duration, video.frameRate)
            (codec, frameCount, bitDepth) = (video.codec, video.frameCount, video.bitDepth)
        } else if format == .pdf {
            guard let pdf = try? PDFDecoder.probe(data, options: options) else { return nil }
            (width, height) = (Int(pdf.width.rounded(.up)), Int(pdf.height.rounded(.up)))
            pageCount = pdf.pageCount
        } else {
            return nil
        }
    }

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
