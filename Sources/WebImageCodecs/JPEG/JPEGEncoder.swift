import CTurboJPEG
import Foundation
import WebImageCore

/// Encodes JPEG with TurboJPEG: quality 0–100 (libjpeg's scale; 0 is treated as 1), 4:2:0
/// chroma subsampling (what Pillow and libjpeg use by default; grey images are written as
/// one-component JPEG), baseline or, with ``ImageEncodingOptions/progressive``, progressive.
///
/// - Transparency: JPEG has no alpha channel, so pixels that are not opaque are composited
///   over white, as a browser shows a transparent image on a white page. (Dropping alpha
///   instead would expose the colours stored under fully transparent pixels, often black or
///   garbage.) Opaque RGBA bitmaps, such as every decoded JPEG, are encoded straight from the
///   RGBA buffer without a copy.
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

    public func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data {
        let bitmap = image.image
        var data = try Self.compress(bitmap, quality: min(100, max(1, options.quality)), progressive: options.progressive)
        if !options.stripsMetadata, let profile = image.iccProfile, !profile.isEmpty {
            data = Self.insertingICCProfile(profile, into: data)
        }
        return data
    }

    private static func compress(_ bitmap: Bitmap, quality: Int, progressive: Bool) throws -> Data {
        let format = bitmap.pixelFormat
        switch format.channels {
        case .rgba where !format.hasAlpha || isOpaque(bitmap):
            return try bitmap.pixels.withUnsafeBytes { pixels in
                try turboCompress(pixels, bitmap: bitmap, pitch: bitmap.bytesPerRow, pixelFormat: TJPF_RGBA, quality: quality, progressive: progressive)
            }
        case .rgb:
            return try bitmap.pixels.withUnsafeBytes { pixels in
                try turboCompress(pixels, bitmap: bitmap, pitch: bitmap.bytesPerRow, pixelFormat: TJPF_RGB, quality: quality, progressive: progressive)
            }
        case .gray:
            return try bitmap.pixels.withUnsafeBytes { pixels in
                try turboCompress(pixels, bitmap: bitmap, pitch: bitmap.bytesPerRow, pixelFormat: TJPF_GRAY, quality: quality, progressive: progressive)
            }
        case .rgba, .grayAlpha:
            let flattened = flattenedOverWhite(bitmap)
            let isGray = format.channels == .grayAlpha
            return try flattened.withUnsafeBytes { pixels in
                try turboCompress(
                    pixels, bitmap: bitmap, pitch: bitmap.width * (isGray ? 1 : 3),
                    pixelFormat: isGray ? TJPF_GRAY : TJPF_RGB, quality: quality, progressive: progressive
                )
            }
        }
    }

    private static func turboCompress(
        _ pixels: UnsafeRawBufferPointer, bitmap: Bitmap, pitch: Int, pixelFormat: TJPF,
        quality: Int, progressive: Bool
    ) throws -> Data {
        guard let handle = tjInitCompress() else {
            throw ImageError.tooLarge("JPEG: out of memory creating a TurboJPEG compressor")
        }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        defer { if let output { tjFree(output) } }
        let subsampling = pixelFormat == TJPF_GRAY ? TJSAMP_GRAY : TJSAMP_420
        let result = tjCompress2(
            handle, pixels.baseAddress?.assumingMemoryBound(to: UInt8.self),
            Int32(bitmap.width), Int32(pitch), Int32(bitmap.height), Int32(pixelFormat.rawValue),
            &output, &size, Int32(subsampling.rawValue), Int32(quality),
            progressive ? TJFLAG_PROGRESSIVE : 0
        )
        guard result == 0, let output else {
            throw ImageError.corruptData("JPEG encoding failed: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return Data(bytes: output, count: Int(size))
    }

    /// Whether every alpha byte of an RGBA bitmap is 255.
    static func isOpaque(_ bitmap: Bitmap) -> Bool {
        bitmap.pixels.withUnsafeBytes { pixels in
            for row in 0..<bitmap.height {
                let base = pixels.baseAddress! + row * bitmap.bytesPerRow
                var all: UInt8 = 255
                for x in 0..<bitmap.width { all &= base.load(fromByteOffset: x * 4 + 3, as: UInt8.self) }
                if all != 255 { return false }
            }
            return true
        }
    }

    /// RGB (or grey) bytes of `bitmap` composited over white: for straight alpha
    /// `c·a/255 + 255 − a`, for premultiplied `c + 255 − a`, rounded.
    static func flattenedOverWhite(_ bitmap: Bitmap) -> [UInt8] {
        let channels = bitmap.pixelFormat.channels == .grayAlpha ? 1 : 3
        let premultiplied = bitmap.pixelFormat.alpha == .premultiplied
        let source = channels + 1
        let count = bitmap.width * bitmap.height * channels
        return [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            bitmap.pixels.withUnsafeBytes { input in
                var target = 0
                for row in 0..<bitmap.height {
                    var from = row * bitmap.bytesPerRow
                    for _ in 0..<bitmap.width {
                        let alpha = Int(input[from + channels])
                        for channel in 0..<channels {
                            let value = Int(input[from + channel])
                            output[target + channel] = premultiplied
                                ? UInt8(min(255, value + 255 - alpha))
                                : UInt8((value * alpha + 255 * (255 - alpha) + 127) / 255)
                        }
                        target += channels
                        from += source
                    }
                }
            }
            initialized = count
        }
    }

    /// The ICC profile's bytes per APP2 chunk: a segment's 65,533 bytes of payload less the
    /// 14-byte `ICC_PROFILE\0`, sequence number and count header.
    static let iccChunkSize = 65_519

    /// `jpeg` with `profile` inserted as APP2 `ICC_PROFILE` chunks after the SOI marker and the
    /// JFIF APP0 segment TurboJPEG writes first (readers expect JFIF first). Unchanged when the
    /// profile needs more than 255 chunks.
    static func insertingICCProfile(_ profile: Data, into jpeg: Data) -> Data {
        let chunks = (profile.count + iccChunkSize - 1) / iccChunkSize
        guard chunks <= 255, jpeg.count >= 4 else { return jpeg }
        let bytes = [UInt8](jpeg)
        var insertAt = 2
        if bytes[2] == 0xFF, bytes[3] == 0xE0, bytes.count >= 6 {
            insertAt = min(bytes.count, 4 + (Int(bytes[4]) << 8 | Int(bytes[5])))
        }
        var segments = Data(capacity: profile.count + chunks * 18)
        for index in 0..<chunks {
            let start = profile.startIndex + index * iccChunkSize
            let chunk = profile[start..<min(start + iccChunkSize, profile.endIndex)]
            let length = 2 + 14 + chunk.count
            segments.append(contentsOf: [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)])
            segments.append(contentsOf: Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(chunks)])
            segments.append(chunk)
        }
        var result = Data(capacity: jpeg.count + segments.count)
        result.append(contentsOf: bytes[0..<insertAt])
        result.append(segments)
        result.append(contentsOf: bytes[insertAt...])
        return result
    }
}
