import CJxl
import Foundation
import WebImageCore

/// Encodes JPEG XL with libjxl, the format's reference encoder.
///
/// - ``ImageEncodingOptions/quality`` (1–100) maps onto libjxl's Butteraugli distance as `cjxl`
///   maps its `--quality` (90 is distance 1.0, visually lossless); ``ImageEncodingOptions/lossless``
///   stores the samples exactly (modular mode).
/// - The effort (``init(effort:)``) trades speed for size: 1 is fastest, 9 slowest; the default, 3, encodes a
///   512 px thumbnail in milliseconds.
/// - An animation is written as one, its frames' durations to the millisecond and its loop count
///   kept, unless ``ImageEncodingOptions/firstFrameOnly``.
/// - The ICC profile is embedded unless ``ImageEncodingOptions/stripsMetadata``; without one the
///   file says sRGB.
///
/// ```swift
/// var options = ImageEncodingOptions()
/// options.quality = 80
/// let jxl = try JXLEncoder(effort: 3).encode(container, options: options)
/// ```
public struct JXLEncoder: ImageEncoder {
    /// libjxl's effort, 1 (fastest) to 9 (smallest file), clamped to that range.
    package var effort: Int

    public init(effort: Int = 3) {
        self.effort = effort
    }

    public var format: ImageFormat { .jxl }

    public func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data {
        try LazyLibrary.jxl.load()
        guard let encoder = JxlEncoderCreate(nil) else { throw ImageError.tooLarge("JPEG XL: libjxl could not allocate an encoder") }
        defer { JxlEncoderDestroy(encoder) }
        let frames: [AnimatedImage.Frame]
        if let animation = image.animation, animation.frames.count > 1, !options.firstFrameOnly {
            frames = animation.frames
        } else {
            frames = [AnimatedImage.Frame(bitmap: image.image, duration: .zero)]
        }
        let hasAlpha = frames.contains { $0.bitmap.pixelFormat.hasAlpha }
        try Self.describe(encoder, image: frames[0].bitmap, hasAlpha: hasAlpha, animation: frames.count > 1 ? image.animation : nil,
                          icc: options.stripsMetadata ? nil : image.iccProfile, lossless: options.lossless)
        guard let settings = JxlEncoderFrameSettingsCreate(encoder, nil) else { throw ImageError.tooLarge("JPEG XL: no frame settings") }
        try Self.check(JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(min(max(effort, 1), 9))), "setting the effort")
        if options.lossless {
            try Self.check(JxlEncoderSetFrameLossless(settings, JXL_TRUE), "asking for lossless frames")
        } else {
            try Self.check(JxlEncoderSetFrameDistance(settings, Self.distance(quality: options.quality)), "setting the distance")
        }
        for (index, frame) in frames.enumerated() {
            if frames.count > 1 { try WorkDeadline.check("encoding JPEG XL frame \(index + 1) of \(frames.count)") }
            try Self.add(frame, to: settings, encoder: encoder, hasAlpha: hasAlpha, animated: frames.count > 1)
        }
        JxlEncoderCloseInput(encoder)
        return try Self.output(of: encoder)
    }

    /// cjxl's mapping of a quality to a Butteraugli distance.
    static func distance(quality: Int) -> Float {
        let q = Float(min(max(quality, 1), 100))
        return q >= 30 ? 0.1 + (100 - q) * 0.09 : 6.4 + pow(2.5, (30 - q) / 5) / 6.25
    }

    /// The basic info and colour encoding of the file.
    private static func describe(
        _ encoder: OpaquePointer, image: Bitmap, hasAlpha: Bool, animation: AnimatedImage?, icc: Data?, lossless: Bool
    ) throws {
        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(image.width)
        info.ysize = UInt32(image.height)
        info.bits_per_sample = 8
        info.num_color_channels = 3
        info.alpha_bits = hasAlpha ? 8 : 0
        info.num_extra_channels = hasAlpha ? 1 : 0
        // Lossless keeps the samples in their own colour space; lossy ones go through XYB.
        info.uses_original_profile = lossless ? JXL_TRUE : JXL_FALSE
        if let animation {
            info.have_animation = JXL_TRUE
            info.animation.tps_numerator = 1000
            info.animation.tps_denominator = 1
            info.animation.num_loops = UInt32(clamping: animation.loopCount)
        }
        try check(JxlEncoderSetBasicInfo(encoder, &info), "setting the basic info")
        if let icc, !icc.isEmpty {
            try icc.withUnsafeBytes { bytes in
                try check(JxlEncoderSetICCProfile(encoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count), "embedding the ICC profile")
            }
        } else {
            var colour = JxlColorEncoding()
            JxlColorEncodingSetToSRGB(&colour, JXL_FALSE)
            try check(JxlEncoderSetColorEncoding(encoder, &colour), "stating sRGB")
        }
    }

    /// One frame, as straight RGB(A) bytes.
    private static func add(_ frame: AnimatedImage.Frame, to settings: OpaquePointer, encoder: OpaquePointer, hasAlpha: Bool, animated: Bool) throws {
        if animated {
            var header = JxlFrameHeader()
            JxlEncoderInitFrameHeader(&header)
            let (seconds, attoseconds) = frame.duration.components
            header.duration = UInt32(clamping: max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
            try check(JxlEncoderSetFrameHeader(settings, &header), "setting a frame's duration")
        }
        let channels = hasAlpha ? 4 : 3
        let bytes = interleaved(frame.bitmap, channels: channels)
        var format = JxlPixelFormat(num_channels: UInt32(channels), data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        try bytes.withUnsafeBytes { buffer in
            try check(JxlEncoderAddImageFrame(settings, &format, buffer.baseAddress, buffer.count), "adding a frame")
        }
    }

    /// `bitmap`'s pixels as tightly packed straight R, G, B (and A) bytes.
    static func interleaved(_ bitmap: Bitmap, channels: Int) -> [UInt8] {
        let format = bitmap.pixelFormat, step = format.bytesPerPixel
        let grey = format.channels == .gray || format.channels == .grayAlpha
        var output = [UInt8](repeating: 255, count: bitmap.width * bitmap.height * channels)
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width {
                let source = y * bitmap.bytesPerRow + x * step, target = (y * bitmap.width + x) * channels
                let alpha = format.hasAlpha ? Int(bitmap.pixels[source + step - 1]) : 255
                for channel in 0..<3 {
                    var value = Int(bitmap.pixels[source + (grey ? 0 : channel)])
                    if format.alpha == .premultiplied, alpha > 0, alpha < 255 { value = min(255, (value * 255 + alpha / 2) / alpha) }
                    output[target + channel] = UInt8(value)
                }
                if channels == 4 { output[target + 3] = UInt8(alpha) }
            }
        }
        return output
    }

    /// The encoded bytes, drawn from libjxl as it makes them.
    private static func output(of encoder: OpaquePointer) throws -> Data {
        var result = [UInt8](repeating: 0, count: 64 << 10)
        var written = 0
        while true {
            var available = result.count - written
            let status = result.withUnsafeMutableBufferPointer { buffer -> JxlEncoderStatus in
                var next: UnsafeMutablePointer<UInt8>? = buffer.baseAddress! + written
                let status = JxlEncoderProcessOutput(encoder, &next, &available)
                written = next! - buffer.baseAddress!
                return status
            }
            if status == JXL_ENC_SUCCESS { break }
            guard status == JXL_ENC_NEED_MORE_OUTPUT else { try check(status, "encoding"); break }
            result.append(contentsOf: [UInt8](repeating: 0, count: result.count))
        }
        return Data(result.prefix(written))
    }

    private static func check(_ status: JxlEncoderStatus, _ doing: String) throws {
        guard status != JXL_ENC_SUCCESS else { return }
        throw ImageError.invalidBitmap("JPEG XL: libjxl could not encode (\(doing))")
    }
}
