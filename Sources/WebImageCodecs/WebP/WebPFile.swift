import CWebP
import Foundation
import WebImageCore

/// What a WebP file says about itself before any pixel is decoded: the canvas, the animation,
/// and the metadata chunks. Read with libwebp's own parsers (`WebPGetFeatures`, `WebPDemux`),
/// which look only at headers, so every limit can be checked before a pixel buffer exists.
struct WebPFile {
    /// The canvas: the image for a still file, the area every frame is composed onto for an
    /// animated one.
    var width: Int
    var height: Int
    var hasAlpha: Bool
    var isAnimated: Bool
    /// 1 for a still file.
    var frameCount: Int
    /// The `ANIM` chunk's loop count, the number of plays (0 = forever); 0 for a still file.
    var loopCount: Int
    var orientation: ImageOrientation
    var iccProfile: Data?

    /// Parses the headers of the complete file `bytes`, checking the canvas against
    /// ``ImageDecodingOptions/maximumPixelCount`` as soon as it is known.
    ///
    /// - Throws: ``ImageError/tooLarge(_:)`` for a canvas past the limit,
    ///   ``ImageError/corruptData(_:)`` when the headers do not parse (including a file cut
    ///   short), ``ImageError/unsupportedFormat(_:)`` for a bitstream libwebp rejects as a
    ///   feature it lacks.
    init(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else {
            throw ImageError.corruptData("WebP: no bytes")
        }
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(base, bytes.count, &features)
        guard status == VP8_STATUS_OK else { throw WebPStatus.error(status, "reading the header") }
        width = Int(features.width)
        height = Int(features.height)
        hasAlpha = features.has_alpha != 0
        isAnimated = features.has_animation != 0
        frameCount = 1
        loopCount = 0
        orientation = .up
        iccProfile = nil
        try Self.checkPixelCount(width: width, height: height, options)

        // Only the extended layout (first chunk `VP8X`) can carry metadata or animation; the
        // simple layouts are one bitstream and need no demuxing.
        guard Self.isExtended(bytes) else { return }
        var data = WebPData(bytes: base, size: bytes.count)
        guard let demuxer = WebPDemux(&data) else {
            throw ImageError.corruptData("WebP: the RIFF container is truncated or malformed")
        }
        defer { WebPDemuxDelete(demuxer) }
        if isAnimated {
            frameCount = Int(WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT))
            loopCount = Int(WebPDemuxGetI(demuxer, WEBP_FF_LOOP_COUNT))
            guard frameCount > 0 else { throw ImageError.corruptData("WebP: an animation without frames") }
        }
        iccProfile = Self.chunk("ICCP", in: demuxer).map { Data($0) }
        orientation = Self.chunk("EXIF", in: demuxer).flatMap(Exif.orientation(inExifChunk:)) ?? .up
    }

    /// Whether the first chunk is `VP8X`: the extended layout with optional metadata chunks.
    static func isExtended(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 16 && bytes[12] == 0x56 && bytes[13] == 0x50 && bytes[14] == 0x38 && bytes[15] == 0x58
    }

    /// The payload of the first chunk named `fourCC`, pointing into the demuxed bytes.
    static func chunk(_ fourCC: String, in demuxer: OpaquePointer) -> UnsafeRawBufferPointer? {
        var iterator = WebPChunkIterator()
        guard WebPDemuxGetChunk(demuxer, fourCC, 1, &iterator) != 0 else { return nil }
        defer { WebPDemuxReleaseChunkIterator(&iterator) }
        guard let bytes = iterator.chunk.bytes, iterator.chunk.size > 0 else { return nil }
        return UnsafeRawBufferPointer(start: bytes, count: iterator.chunk.size)
    }

    /// The size to decode to for `thumbnail`, in the stored orientation, or `nil` when the
    /// full size is wanted. The thumbnail size is computed, as ``CoderRegistry/finish(_:options:)``
    /// computes it, on the dimensions after orientation (when it is applied), then turned back to
    /// the stored orientation, so the registry finds the exact size and resamples nothing.
    static func decodeSize(
        width: Int, height: Int, orientation: ImageOrientation, options: ImageDecodingOptions
    ) -> (width: Int, height: Int)? {
        guard let thumbnail = options.thumbnail else { return nil }
        let swaps = options.appliesOrientation && orientation.swapsDimensions
        let upright = thumbnail.outputSize(width: swaps ? height : width, height: swaps ? width : height)
        let stored = swaps ? (width: upright.height, height: upright.width) : upright
        return stored.width == width && stored.height == height ? nil : stored
    }

    /// Checks a canvas against ``ImageDecodingOptions/maximumPixelCount``.
    static func checkPixelCount(width: Int, height: Int, _ options: ImageDecodingOptions) throws {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= options.maximumPixelCount else {
            throw ImageError.tooLarge("WebP canvas \(width)×\(height) exceeds the limit of \(options.maximumPixelCount) pixels")
        }
    }
}

/// libwebp's status codes as ``ImageError``s.
enum WebPStatus {
    static func error(_ status: VP8StatusCode, _ doing: String) -> ImageError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA, VP8_STATUS_SUSPENDED:
            .corruptData("WebP: the file ends early (\(doing))")
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            .unsupportedFormat("WebP: a feature libwebp does not support (\(doing))")
        case VP8_STATUS_OUT_OF_MEMORY:
            .tooLarge("WebP: libwebp could not allocate memory (\(doing))")
        case VP8_STATUS_INVALID_PARAM:
            .corruptData("WebP: invalid parameters (\(doing))")
        default:
            .corruptData("WebP: bitstream error (\(doing))")
        }
    }
}
