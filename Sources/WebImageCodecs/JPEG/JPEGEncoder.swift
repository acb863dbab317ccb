import CCodecShims
import Foundation
import WebImageCore

/// Encodes JPEG with libjpeg-turbo: quality 0–100 (libjpeg's scale; 0 is treated as 1), 4:2:0
/// chroma subsampling (what Pillow and libjpeg use by default; grey images are written as
/// one-component JPEG), baseline or, with ``ImageEncodingOptions/progressive``, progressive,
/// with the accurate integer DCT (libjpeg's default, which Pillow uses too).
///
/// - Transparency: JPEG has no alpha channel, so pixels that are not opaque are composited
///   over white, as a browser shows a transparent image on a white page. (Dropping alpha
///   instead would expose the colours stored under fully transparent pixels, often black or
///   garbage.) This happens 16 rows at a time while encoding: opaque RGBA, such as every
///   decoded JPEG, is read in place, with no extra pass over the image.
/// - Metadata: the container's ICC profile is written (as APP2 `ICC_PROFILE` chunks) unless
///   ``ImageEncodingOptions/stripsMetadata`` is set, or it exceeds the 255 chunks of
///   65,519 bytes a JPEG can carry. No EXIF orientation is ever written: pixels are upright.
/// - Animated containers: the first frame (``ImageContainer/image``) is written.
///
/// ```swift
/// var options = ImageEncodingOptions()
/// options.quality = 85
/// options.progressive = true
/// let jpeg = try JPEGEncoder().encode(container, options: options)
/// ```
public struct JPEGEncoder: ImageEncoder {
    public var format: ImageFormat { .jpeg }

    public init() {}

    /// The ICC profile's bytes per APP2 chunk: a segment's 65,533 bytes of payload less the
    /// 14-byte `ICC_PROFILE\0`, sequence number and count header; at most 255 chunks.
    static let maximumICCProfileSize = 255 * 65_519

    public func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data {
        let bitmap = image.image
        let input: wi_jpeg_input = switch (bitmap.pixelFormat.channels, bitmap.pixelFormat.alpha) {
        case (.rgba, .none): WI_JPEG_INPUT_RGBX
        case (.rgba, .premultiplied): WI_JPEG_INPUT_RGBA_PREMULTIPLIED
        case (.rgba, _): WI_JPEG_INPUT_RGBA
        case (.rgb, _): WI_JPEG_INPUT_RGB
        case (.gray, _): WI_JPEG_INPUT_GRAY
        case (.grayAlpha, _): WI_JPEG_INPUT_GRAY_ALPHA
        }
        guard bitmap.width <= 65_500, bitmap.height <= 65_500 else {
            throw ImageError.unsupportedFormat("JPEG cannot hold \(bitmap.width)×\(bitmap.height) pixels (at most 65,500 per side)")
        }
        var profile = options.stripsMetadata ? nil : image.iccProfile
        if let bytes = profile, bytes.isEmpty || bytes.count > Self.maximumICCProfileSize { profile = nil }
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        var message = [CChar](repeating: 0, count: 200)
        let status = bitmap.pixels.withUnsafeBufferPointer { pixels in
            withOptionalBytes(profile) { icc in
                wi_jpeg_encode(
                    pixels.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), bitmap.bytesPerRow,
                    input, Int32(min(100, max(1, options.quality))), options.progressive ? 1 : 0,
                    icc?.baseAddress?.assumingMemoryBound(to: UInt8.self), icc?.count ?? 0,
                    &output, &count, &message
                )
            }
        }
        guard status == WI_JPEG_OK, let output else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ImageError.corruptData("JPEG encoding failed: \(reason)")
        }
        // Data takes the malloc'd buffer as it is, freeing it when done.
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in wi_jpeg_free(pointer) })
    }

    private func withOptionalBytes<T>(_ data: Data?, _ body: (UnsafeRawBufferPointer?) -> T) -> T {
        guard let data else { return body(nil) }
        return data.withUnsafeBytes { body($0) }
    }
}
