import CCodecShims
import CWebP
import Foundation
import WebImageCore

/// Encodes WebP with libwebp: lossy at ``ImageEncodingOptions/quality``, or lossless with
/// ``ImageEncodingOptions/lossless``; alpha is kept (libwebp leaves out the alpha plane when
/// every pixel is opaque). An animated container is written as an animated WebP through
/// `WebPAnimEncoder`, with each frame's duration in milliseconds and the loop count (both
/// conventions are WebP's own: plays, 0 = forever). The ICC profile is kept (muxed into an
/// `ICCP` chunk) unless ``ImageEncodingOptions/stripsMetadata``; no EXIF is written, because
/// pixels are always upright.
///
/// The settings are `cwebp`'s and Pillow's defaults: preset `default`, method 4, alpha at
/// quality 100, one thread. For lossless, `quality` is libwebp's compression effort, as in
/// `cwebp -lossless -q`, and the colour under fully transparent pixels is kept exactly.
///
/// Consecutive identical frames are merged by `WebPAnimEncoder` into one frame whose duration
/// is their sum, so an animation can come back with fewer frames but the same timing.
///
/// ```swift
/// var options = ImageEncodingOptions()
/// options.quality = 75
/// let webp = try WebPEncoder().encode(container, options: options)
/// ```
public struct WebPEncoder: ImageEncoder {
    /// libwebp's speed/size trade-off, 0 (fastest) to 6 (smallest). Default 4, libwebp's own.
    package var method: Int

    /// - Parameter method: libwebp's effort, 0–6 (clamped); 4 is what `cwebp` and Pillow use.
    public init(method: Int = 4) {
        self.method = method
    }

    public var format: ImageFormat { .webp }

    public func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data {
        var config = try makeConfig(options)
        let icc = options.stripsMetadata ? nil : image.iccProfile
        if let animation = image.animation, !options.firstFrameOnly {
            return try encodeAnimation(animation, config: &config, icc: icc)
        }
        try Self.checkSize(image.image)
        let encoded = try Self.withPicture(image.image, argb: config.lossless != 0) { picture in
            try Self.encodeStill(&picture, config: &config)
        }
        return try Self.addingICC(icc, to: encoded)
    }

    private func makeConfig(_ options: ImageEncodingOptions) throws -> WebPConfig {
        var config = WebPConfig()
        let quality = Float(min(max(options.quality, 0), 100))
        guard WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, quality) != 0 else {
            throw ImageError.unsupportedFormat("WebP: libwebp's encoder ABI does not match its headers")
        }
        config.method = Int32(min(max(method, 0), 6))
        if options.lossless {
            config.lossless = 1
            // Lossless means every byte: keep the colour of fully transparent pixels too.
            config.exact = 1
        }
        guard WebPValidateConfig(&config) != 0 else {
            throw ImageError.unsupportedFormat("WebP: invalid encoder settings")
        }
        return config
    }

    private static func checkSize(_ bitmap: Bitmap) throws {
        guard bitmap.width <= Int(WEBP_MAX_DIMENSION), bitmap.height <= Int(WEBP_MAX_DIMENSION) else {
            throw ImageError.unsupportedFormat(
                "WebP holds at most \(WEBP_MAX_DIMENSION)×\(WEBP_MAX_DIMENSION) pixels, not \(bitmap.width)×\(bitmap.height)")
        }
    }

    /// Encodes one picture with `WebPEncode` into memory.
    private static func encodeStill(_ picture: inout WebPPicture, config: inout WebPConfig) throws -> Data {
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let ok = withUnsafeMutablePointer(to: &writer) { writerPointer in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
            return WebPEncode(&config, &picture)
        }
        guard ok != 0, let memory = writer.mem else {
            throw WebPEncodingFailure.error(picture.error_code, "encoding the picture")
        }
        return Data(bytes: memory, count: writer.size)
    }

    private func encodeAnimation(_ animation: AnimatedImage, config: inout WebPConfig, icc: Data?) throws -> Data {
        let width = animation.width, height = animation.height
        try Self.checkSize(animation.frames[0].bitmap)
        var encoderOptions = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&encoderOptions) != 0 else {
            throw ImageError.unsupportedFormat("WebP: libwebp's mux ABI does not match its headers")
        }
        encoderOptions.anim_params.loop_count = Int32(clamping: max(0, min(animation.loopCount, 65535)))
        // Frames are composed on a transparent canvas; say so to players that honour it.
        encoderOptions.anim_params.bgcolor = 0
        guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &encoderOptions) else {
            throw ImageError.tooLarge("WebP: libwebp could not create an animation encoder")
        }
        defer { WebPAnimEncoderDelete(encoder) }

        // Timestamps are when each frame starts, in milliseconds from the first.
        var timestamp = 0
        for (index, frame) in animation.frames.enumerated() {
            try WorkDeadline.check("encoding WebP frame \(index + 1) of \(animation.frames.count)")
            guard frame.bitmap.width == width, frame.bitmap.height == height else {
                throw ImageError.invalidBitmap("frame \(index) is \(frame.bitmap.width)×\(frame.bitmap.height), not the canvas \(width)×\(height)")
            }
            let added = try Self.withPicture(frame.bitmap, argb: true) { picture in
                WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config)
            }
            guard added != 0 else { throw Self.animationError(encoder, "adding frame \(index)") }
            timestamp += Self.milliseconds(frame.duration)
            guard timestamp <= Int(Int32.max) else { throw ImageError.unsupportedFormat("WebP: the animation is longer than 24 days") }
        }
        // The end of the last frame, which fixes its duration.
        guard WebPAnimEncoderAdd(encoder, nil, Int32(timestamp), nil) != 0 else {
            throw Self.animationError(encoder, "closing the animation")
        }
        var assembled = WebPData()
        WebPDataInit(&assembled)
        defer { WebPDataClear(&assembled) }
        guard WebPAnimEncoderAssemble(encoder, &assembled) != 0, let bytes = assembled.bytes else {
            throw Self.animationError(encoder, "assembling the animation")
        }
        return try Self.addingICC(icc, to: Data(bytes: bytes, count: assembled.size))
    }

    /// A frame duration in whole milliseconds, WebP's unit (a 24-bit field per frame; libwebp
    /// splits longer durations), rounded to nearest; negative durations count as 0.
    private static func milliseconds(_ duration: Duration) -> Int {
        let milliseconds = (duration / .milliseconds(1)).rounded()
        return milliseconds > 0 ? Int(min(milliseconds, Double(Int32.max))) : 0
    }

    /// Runs `body` with a `WebPPicture` holding `bitmap`: imported as ARGB for lossless and the
    /// animation encoder (which work on ARGB), otherwise converted straight to YUV 4:2:0: by our
    /// SSE2 conversion when every pixel is opaque (`wi_webp_import_opaque_rgba`, a quarter of
    /// libwebp's time for RGBA), by libwebp when there is alpha to keep.
    private static func withPicture<Result>(
        _ bitmap: Bitmap, argb: Bool, _ body: (inout WebPPicture) throws -> Result
    ) throws -> Result {
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else {
            throw ImageError.unsupportedFormat("WebP: libwebp's encoder ABI does not match its headers")
        }
        picture.width = Int32(bitmap.width)
        picture.height = Int32(bitmap.height)
        picture.use_argb = argb ? 1 : 0
        defer { WebPPictureFree(&picture) }
        let imported: Int32 = try withRGBA(bitmap) { pixels, stride, hasAlpha in
            let base = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
            if hasAlpha, !argb, let base {
                switch wi_webp_import_opaque_rgba(&picture, base, stride) {
                case 1: return 1
                case 0: break   // transparent pixels: libwebp's import keeps them
                default: return 0
                }
            }
            return hasAlpha
                ? WebPPictureImportRGBA(&picture, base, Int32(stride))
                : WebPPictureImportRGB(&picture, base, Int32(stride))
        }
        guard imported != 0 else {
            // The import fails only on a bad size (which sets a code) or an allocation, which
            // libwebp 1.2 reports as VP8_ENC_OK.
            let code = picture.error_code == VP8_ENC_OK ? VP8_ENC_ERROR_OUT_OF_MEMORY : picture.error_code
            throw WebPEncodingFailure.error(code, "importing a \(bitmap.width)×\(bitmap.height) picture")
        }
        return try body(&picture)
    }

    /// The pixels as libwebp imports them: straight RGBA or RGB in place when the bitmap has that
    /// layout, otherwise converted into a temporary straight RGBA buffer.
    private static func withRGBA<Result>(
        _ bitmap: Bitmap, _ body: (UnsafeRawBufferPointer, Int, Bool) throws -> Result
    ) throws -> Result {
        let format = bitmap.pixelFormat
        if format == .rgba8 || format == .rgb8 {
            return try bitmap.pixels.withUnsafeBytes { try body($0, bitmap.bytesPerRow, format.hasAlpha) }
        }
        let converted = bitmap.straightRGBA()
        return try converted.withUnsafeBytes { try body($0, bitmap.width * 4, true) }
    }

    /// Adds an `ICCP` chunk to an encoded file through libwebpmux, which also writes the `VP8X`
    /// header the chunk needs.
    private static func addingICC(_ icc: Data?, to encoded: Data) throws -> Data {
        guard let icc, !icc.isEmpty else { return encoded }
        return try encoded.withUnsafeBytes { file in
            try icc.withUnsafeBytes { profile in
                var bitstream = WebPData(bytes: file.baseAddress?.assumingMemoryBound(to: UInt8.self), size: file.count)
                guard let mux = WebPMuxCreate(&bitstream, 0) else {
                    throw ImageError.corruptData("WebP: libwebpmux could not read the encoded file")
                }
                defer { WebPMuxDelete(mux) }
                var chunk = WebPData(bytes: profile.baseAddress?.assumingMemoryBound(to: UInt8.self), size: profile.count)
                var assembled = WebPData()
                WebPDataInit(&assembled)
                defer { WebPDataClear(&assembled) }
                guard WebPMuxSetChunk(mux, "ICCP", &chunk, 0) == WEBP_MUX_OK,
                      WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK, let bytes = assembled.bytes else {
                    throw ImageError.corruptData("WebP: libwebpmux could not add the ICC profile")
                }
                return Data(bytes: bytes, count: assembled.size)
            }
        }
    }

    private static func animationError(_ encoder: OpaquePointer, _ doing: String) -> ImageError {
        let message = WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "unknown error"
        return ImageError.corruptData("WebP: libwebp failed \(doing): \(message)")
    }
}

extension Bitmap {
    /// The pixels as tightly packed straight-alpha RGBA, for encoders that take only that.
    func straightRGBA() -> [UInt8] {
        let channels = pixelFormat.channels, premultiplied = pixelFormat.alpha == .premultiplied
        let bpp = pixelFormat.bytesPerPixel
        return [UInt8](unsafeUninitializedCapacity: width * height * 4) { out, initialized in
            pixels.withUnsafeBytes { input in
                var target = 0
                for y in 0..<height {
                    var source = y * bytesPerRow
                    for _ in 0..<width {
                        var r, g, b, a: UInt8
                        switch channels {
                        case .gray: (r, g, b, a) = (input[source], input[source], input[source], 255)
                        case .grayAlpha: (r, g, b, a) = (input[source], input[source], input[source], input[source + 1])
                        case .rgb: (r, g, b, a) = (input[source], input[source + 1], input[source + 2], 255)
                        case .rgba: (r, g, b, a) = (input[source], input[source + 1], input[source + 2], input[source + 3])
                        }
                        if premultiplied, a != 0, a != 255 {
                            // Undo the premultiplication, rounding to nearest.
                            let unmultiply = { (c: UInt8) in UInt8(min(255, (Int(c) * 255 + Int(a) / 2) / Int(a))) }
                            (r, g, b) = (unmultiply(r), unmultiply(g), unmultiply(b))
                        }
                        out[target] = r
                        out[target + 1] = g
                        out[target + 2] = b
                        out[target + 3] = a
                        target += 4
                        source += bpp
                    }
                }
            }
            initialized = width * height * 4
        }
    }
}
