import CCodecShims
import Foundation
import WebImageCore

/// Encodes PNG with libpng.
///
/// Writes the smallest colour type that holds the pixels exactly: an alpha channel that is
/// opaque everywhere is dropped, and an image whose pixels are all grey is written as grey
/// (one pass over the pixels decides both). Premultiplied input is unpremultiplied first, so
/// the file holds straight alpha as PNG requires. The container's ICC profile is embedded as
/// `iCCP` unless ``ImageEncodingOptions/stripsMetadata`` is set (a profile libpng rejects as
/// malformed is left out rather than failing the encode).
///
/// An animated container is written as an APNG (unless
/// ``ImageEncodingOptions/firstFrameOnly``): every composed frame whole, with blend op
/// "source" and dispose op "none", so any APNG reader shows exactly the frames given; all
/// frames share the smallest colour type that holds every one of them. Durations are written
/// in milliseconds (whole seconds past 65.5 s); the loop count is `num_plays`.
///
/// The zlib level defaults to 6, zlib's own default and the usual balance: level 9 makes
/// files ~1–3 % smaller at several times the encode time, level 1 makes them ~15–25 % larger
/// at about half of it.
///
/// ```swift
/// var encoder = PNGEncoder()
/// encoder.compressionLevel = 9
/// let png = try encoder.encode(container, options: .init())
/// ```
public struct PNGEncoder: ImageEncoder {
    /// zlib compression level, 0 (store) to 9 (smallest). Default: 6.
    public var compressionLevel = 6
    /// Write Adam7-interlaced PNG: larger files (typically 10–20 %) that display coarse-to-fine
    /// while loading. Default: off.
    public var interlaced = false

    public init() {}

    public var format: ImageFormat { .png }

    public func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data {
        let profile = options.stripsMetadata ? nil : image.iccProfile
        if let animation = image.animation, animation.frames.count > 1, !options.firstFrameOnly {
            return try APNGWriter(encoder: self).write(animation, profile: profile)
        }
        return try encode(try Self.straight(image.image), profile: profile)
    }

    /// One PNG of `bitmap` (straight alpha), with `channels` forced when non-zero. A profile
    /// libpng refuses is dropped and the encode retried without it.
    func encode(_ bitmap: Bitmap, profile: Data?, channels: Int = 0) throws -> Data {
        if let profile, let data = try? encode(bitmap, icc: profile, channels: channels) { return data }
        return try encode(bitmap, icc: nil, channels: channels)
    }

    /// The channel count the smallest exact colour type for `bitmap` has.
    static func reducedChannels(_ bitmap: Bitmap) -> Int {
        bitmap.pixels.withUnsafeBufferPointer { pixels in
            var job = Self.job(bitmap, pixels: pixels)
            return Int(wi_png_reduced_channels(&job))
        }
    }

    /// The C encoder's description of `bitmap`, whose bytes are `pixels`.
    private static func job(_ bitmap: Bitmap, pixels: UnsafeBufferPointer<UInt8>) -> wi_png_encode_job {
        var job = wi_png_encode_job()
        job.pixels = pixels.baseAddress
        job.stride = bitmap.bytesPerRow
        job.width = UInt32(bitmap.width)
        job.height = UInt32(bitmap.height)
        job.channels = Int32(bitmap.pixelFormat.bytesPerPixel)
        return job
    }

    /// `bitmap` with straight alpha.
    static func straight(_ bitmap: Bitmap) throws -> Bitmap {
        bitmap.pixelFormat.alpha == .premultiplied ? try unpremultiplied(bitmap) : bitmap
    }

    private func encode(_ bitmap: Bitmap, icc profile: Data?, channels: Int) throws -> Data {
        try bitmap.pixels.withUnsafeBufferPointer { pixels in
            try Self.withOptionalBytes(profile) { icc in
                var job = Self.job(bitmap, pixels: pixels)
                job.reduce = 1
                job.output_channels = Int32(channels)
                job.level = Int32(max(0, min(9, compressionLevel)))
                job.interlace = interlaced ? 1 : 0
                job.icc = icc?.baseAddress?.assumingMemoryBound(to: UInt8.self)
                job.icc_size = icc?.count ?? 0
                guard bitmap.width <= 0x7FFF_FFFF, bitmap.height <= 0x7FFF_FFFF else {
                    throw ImageError.unsupportedFormat("PNG: \(bitmap.width)×\(bitmap.height) is larger than PNG allows")
                }
                let status = wi_png_encode(&job)
                guard status == WI_PNG_OK, let output = job.output else {
                    let message = withUnsafeBytes(of: &job.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    throw ImageError.corruptData("PNG encoding failed: \(message)")
                }
                // Hand the malloc'd buffer to Data without copying; Data frees it.
                return Data(bytesNoCopy: output, count: job.output_size, deallocator: .custom { pointer, _ in wi_png_free(pointer) })
            }
        }
    }

    private static func withOptionalBytes<Result>(_ data: Data?, _ body: (UnsafeRawBufferPointer?) throws -> Result) throws -> Result {
        guard let data else { return try body(nil) }
        return try data.withUnsafeBytes { try body($0) }
    }

    /// Straight alpha from premultiplied RGBA, rounded to nearest.
    static func unpremultiplied(_ bitmap: Bitmap) throws -> Bitmap {
        let width = bitmap.width, height = bitmap.height, stride = bitmap.bytesPerRow
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8) { target in
            bitmap.pixels.withUnsafeBufferPointer { source in
                for y in 0..<height {
                    for x in 0..<width {
                        let from = y * stride + x * 4, to = (y * width + x) * 4
                        let alpha = UInt32(source[from + 3])
                        for channel in 0..<3 {
                            let value = UInt32(source[from + channel])
                            target[to + channel] = alpha == 0 ? 0 : UInt8(min(255, (value * 255 + alpha / 2) / alpha))
                        }
                        target[to + 3] = UInt8(alpha)
                    }
                }
            }
        }
    }
}
