import Foundation
import WebImage
import WebImageCore

/// What `/info` answers about a source, as JSON: its facts from the headers and metadata
/// readers (no pixel decoded), and its placeholders from one small decode.
///
/// `{"blurHash", "bytes", "colorSpace", "dominantColor", "duration", "format", "frames",
/// "hasAlpha", "height", "mimeType", "orientation", "thumbHash", "width"}`, keys sorted, a value
/// the file does not give left out (as `webimage info --json` does):
///
/// - `width`, `height`: pixels as displayed, after the EXIF (or `irot`/`imir`) orientation.
/// - `format`, `mimeType`: sniffed from the bytes (`apng` for an animated PNG), never from a
///   name or a `Content-Type`.
/// - `frames`: frames in the file (1 for a still image; for a video, as its container claims);
///   `duration`: an animation's frame delays added up as stored, or a video's duration, in
///   seconds (animations and videos only). `pages`: a PDF's page count; its `width` and `height`
///   are its first page's in points.
/// - `orientation`: the stored EXIF orientation, 1 to 8.
/// - `hasAlpha`: whether the file declares transparency, else whether the decoded pixels have any.
/// - `colorSpace`: the description of the profile the pixels are converted from (an embedded
///   ICC profile's, or one naming an `nclx` box's or a `cICP` chunk's code points); `sRGB`
///   when there is none the decoders use.
/// - `bytes`: the source's length.
/// - `dominantColor` (`#rrggbb`), `thumbHash` (base64), `blurHash` (base-83): from the first
///   frame decoded at most 100 px a side (a JPEG at 1/8 scale through its DCT), upright, in sRGB.
///
/// ```swift
/// let (info, isComplete) = try SourceInfo.reading(data, registry: registry, options: ImageDecodingOptions())
/// print(String(decoding: info.json, as: UTF8.self))   // {"blurHash":"LKO2?U%2Tw=w]~RBVZRi};RPxuwH","bytes":…}
/// ```
struct SourceInfo: Codable, Sendable, Equatable {
    var width: Int?
    var height: Int?
    var format: String
    var mimeType: String
    var frames: Int?
    var duration: Double?
    var pages: Int?
    var orientation: Int?
    var hasAlpha: Bool?
    var colorSpace: String
    var bytes: Int
    var dominantColor: String
    var thumbHash: String
    var blurHash: String

    /// The facts of `data`, the whole source, with `options`' limits, and whether they are
    /// whole (`false` for a source cut short, whose answer is not kept). Runs the decode on the
    /// calling thread: call it on a decode executor.
    ///
    /// - Throws: ``ImageError/unsupportedFormat(_:)`` for bytes in no format the registry
    ///   decodes; ``ImageError/tooLarge(_:)`` for a source past the limits (pixels, or an
    ///   animation's frames and work, as a decode of every frame would be refused); what the
    ///   decode throws.
    static func reading(
        _ data: Data, registry: CoderRegistry, options: ImageDecodingOptions,
        blurHashComponents: BlurHash.Components = .init(x: 4, y: 3)
    ) throws -> (SourceInfo, isComplete: Bool) {
        var metadata = try ImageMetadata(reading: data, maximumFrameCount: options.maximumFrameCount)
        let media = try MediaReport(data, format: metadata.format, options: options)
        if let media {
            (metadata.pixelWidth, metadata.pixelHeight, metadata.frameCount) = (media.width, media.height, media.frameCount)
            // A video without a claimed frame count has an unknown number of frames, not one.
            if metadata.format.isVideo { metadata.isAnimated = true }
        }
        try checkLimits(metadata, options: options)
        let container = try PlaceholderReport.decode(data, registry: registry, options: options)
        let report = try PlaceholderReport(decoded: container, blurHashComponents: blurHashComponents)
        let frames = metadata.frameCount ?? (metadata.isAnimated == true ? nil : 1)
        let info = SourceInfo(
            width: metadata.orientedWidth, height: metadata.orientedHeight,
            format: metadata.format.rawValue, mimeType: metadata.format.mimeType,
            frames: frames, duration: media?.duration ?? ((frames ?? 0) > 1 ? seconds(metadata.frameDurations) : nil),
            pages: media?.pageCount,
            orientation: metadata.orientation?.rawValue,
            hasAlpha: metadata.hasAlpha ?? report.thumbHash.hasAlpha,
            colorSpace: report.color.profileDescription ?? "sRGB",
            bytes: data.count,
            dominantColor: report.dominantColor.hex, thumbHash: report.thumbHash.base64, blurHash: report.blurHash.string)
        return (info, container.isComplete && !metadata.isTruncated)
    }

    /// The checks a decode of the whole source would make before its pixels, made here from the
    /// metadata because the small decode reads one frame: the stored size against
    /// ``ImageDecodingOptions/maximumPixelCount``, an animation's frames and composing work
    /// against its limits. A source `/image` refuses is refused here too, with the same status.
    static func checkLimits(_ metadata: ImageMetadata, options: ImageDecodingOptions) throws {
        guard let width = metadata.pixelWidth, let height = metadata.pixelHeight else { return }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= options.maximumPixelCount else {
            throw ImageError.tooLarge("\(width)×\(height) is more than \(options.maximumPixelCount) pixels")
        }
        if let frames = metadata.frameCount, frames > 1, !metadata.format.isVideo {
            try options.checkAnimationWork(frameCount: frames, canvasWidth: width, canvasHeight: height, format: metadata.format.rawValue)
        }
    }

    /// `durations` added up, in seconds, to the millisecond.
    static func seconds(_ durations: [Duration]) -> Double? {
        guard !durations.isEmpty else { return nil }
        let total = durations.reduce(Duration.zero, +)
        let milliseconds = total.components.seconds * 1000 + total.components.attoseconds / 1_000_000_000_000_000
        return Double(milliseconds) / 1000
    }

    /// The JSON answer: keys sorted and no escaped slashes, so that the same facts are always
    /// the same bytes (and so the same ETag).
    var json: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings, numbers and booleans cannot fail.
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }
}

extension SourceInfo {
    /// The facts of a cached answer (``json``), as another dialect reshapes them.
    init(json: Data) throws {
        self = try JSONDecoder().decode(SourceInfo.self, from: json)
    }
}
