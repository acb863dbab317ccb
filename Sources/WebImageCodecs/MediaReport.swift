import Foundation
import WebImageCore

/// What the probes of ``VideoDecoder`` and ``PDFDecoder`` say of a source, for `webimage info`
/// and the proxy's `/info`: a video's size as shown, duration, frame rate, codec, claimed frames
/// and bit depth (its headers and first frame); a PDF's page count and the first page's size in
/// points, one pixel a point. The same limits and isolation as a decode: nothing outside the
/// bytes is read.
package struct MediaReport: Sendable, Hashable {
    package var width: Int
    package var height: Int
    /// Seconds.
    package var duration: TimeInterval?
    package var frameRate: Double?
    package var codec: String?
    package var frameCount: Int?
    package var bitDepth: Int?
    package var pageCount: Int?

    /// The report of `data`, sniffed as `format`; `nil` for an image format.
    ///
    /// - Throws: what the probe throws (``ImageError``), as a decode of the source would.
    package init?(_ data: Data, format: ImageFormat, options: ImageDecodingOptions) throws {
        if format.isVideo {
            let video = try VideoDecoder.probe(data, options: options)
            (width, height, duration, frameRate) = (video.width, video.height, video.duration, video.frameRate)
            (codec, frameCount, bitDepth) = (video.codec, video.frameCount, video.bitDepth)
        } else if format == .pdf {
            let pdf = try PDFDecoder.probe(data, options: options)
            (width, height) = (Int(pdf.width.rounded(.up)), Int(pdf.height.rounded(.up)))
            pageCount = pdf.pageCount
        } else {
            return nil
        }
    }
}
