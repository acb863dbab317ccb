import CJxl
import Foundation
import WebImageCore

/// One libjxl decoder over a whole file in memory, driven event by event: the basic info and
/// the colour profile first (no pixel decoded), then one composed frame per ``nextFrame()``.
///
/// The input is given whole and closed at once, so libjxl never waits for more: where the
/// bytes run out it answers `JXL_DEC_NEED_MORE_INPUT`, which ends the decode as a truncated
/// file. No parallel runner is set: libjxl decodes on the calling thread, and the caller's
/// decode executor decides the parallelism.
final class JXLStream {
    private let decoder: OpaquePointer
    /// The file's basic info, with libjxl's orientation applied (`xsize` and `ysize` are the
    /// upright image's).
    let info: JxlBasicInfo
    /// The ICC profile of the pixels libjxl outputs, or `nil` when they are sRGB.
    private(set) var dataProfile: Data?
    /// Frames announced so far (`JXL_DEC_FRAME`), the one being decoded included.
    private(set) var framesSeen = 0
    private let pixelFormat: JxlPixelFormat

    /// Reads the basic info and checks the size against the options' pixel limit, then the
    /// colour encoding; the bytes must outlive the stream (libjxl reads them in place).
    init(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else {
            throw ImageError.corruptData("JPEG XL: no bytes")
        }
        try LazyLibrary.jxl.load()
        guard let decoder = JxlDecoderCreate(nil) else { throw ImageError.tooLarge("JPEG XL: libjxl could not allocate a decoder") }
        let info: JxlBasicInfo
        do {
            try Self.configure(decoder, base: base, count: bytes.count)
            try Self.expect(JXL_DEC_BASIC_INFO, from: decoder, "reading the header")
            info = try Self.basicInfo(of: decoder, options: options)
            try Self.expect(JXL_DEC_COLOR_ENCODING, from: decoder, "reading the colour encoding")
            dataProfile = try Self.profileOfOutput(decoder)
        } catch {
            JxlDecoderDestroy(decoder)
            throw error
        }
        self.decoder = decoder
        self.info = info
        pixelFormat = Self.pixelFormat(for: info)
    }

    /// What libjxl is asked to write: RGB or RGBA, 8-bit samples, or 16-bit ones for deeper files.
    static func pixelFormat(for info: JxlBasicInfo) -> JxlPixelFormat {
        JxlPixelFormat(
            num_channels: info.alpha_bits > 0 ? 4 : 3,
            data_type: info.bits_per_sample > 8 ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8,
            endianness: JXL_NATIVE_ENDIAN, align: 0)
    }

    private static func configure(_ decoder: OpaquePointer, base: UnsafePointer<UInt8>, count: Int) throws {
        let events = JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FRAME.rawValue | JXL_DEC_FULL_IMAGE.rawValue
        try check(JxlDecoderSubscribeEvents(decoder, Int32(events)), "subscribing to events")
        // Stated although they are libjxl's defaults: the container's orientation is `.up`
        // because libjxl turns the pixels, and animation frames are composed for display.
        try check(JxlDecoderSetKeepOrientation(decoder, JXL_FALSE), "applying the orientation")
        try check(JxlDecoderSetCoalescing(decoder, JXL_TRUE), "composing frames")
        // A premultiplied file gives straight alpha, as every other decoder here does.
        try check(JxlDecoderSetUnpremultiplyAlpha(decoder, JXL_TRUE), "unpremultiplying alpha")
        try check(JxlDecoderSetInput(decoder, base, count), "reading the file")
        JxlDecoderCloseInput(decoder)
    }

    /// The basic info (after `JXL_DEC_BASIC_INFO`), once the size has passed the pixel limit.
    static func basicInfo(of decoder: OpaquePointer, options: ImageDecodingOptions) throws -> JxlBasicInfo {
        var info = JxlBasicInfo()
        try check(JxlDecoderGetBasicInfo(decoder, &info), "reading the basic info")
        let width = Int(info.xsize), height = Int(info.ysize)
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= options.maximumPixelCount else {
            throw ImageError.tooLarge("JPEG XL image \(width)×\(height) exceeds the limit of \(options.maximumPixelCount) pixels")
        }
        guard width > 0, height > 0 else { throw ImageError.corruptData("JPEG XL: an image without pixels") }
        // libjxl 0.7 keeps about 16 bytes a pixel of its own, beyond any allocator we can give
        // it, and stops the process when one of those allocations fails (finding #10): its
        // working memory is bounded here, whatever the pixel limit allows.
        guard pixels <= libjxlPixelLimit else {
            throw ImageError.tooLarge("JPEG XL image \(width)×\(height) needs more than libjxl's working-memory bound of \(libjxlPixelLimit) pixels (512 MiB)")
        }
        return info
    }

    /// The most pixels libjxl is asked to decode: 512 MiB of its working memory at 16 bytes a
    /// pixel (33.5 Mpx; a 6000 × 5000 photo).
    static let libjxlPixelLimit = (512 << 20) / 16

    deinit {
        JxlDecoderDestroy(decoder)
    }

    var width: Int { Int(info.xsize) }
    var height: Int { Int(info.ysize) }
    var isAnimated: Bool { info.have_animation != 0 }
    var hasAlpha: Bool { info.alpha_bits > 0 }
    /// How many times the animation plays, 0 for forever (JPEG XL's `num_loops` counts the same).
    var loopCount: Int { Int(info.animation.num_loops) }

    /// The next frame composed at the image's size, with its duration, or `nil` after the last.
    /// `checkFrame` is called with the frame's index before any of its pixels are allocated.
    func nextFrame(checkFrame: (Int) throws -> Void) throws -> AnimatedImage.Frame? {
        switch JxlDecoderProcessInput(decoder) {
        case JXL_DEC_SUCCESS:
            return nil
        case JXL_DEC_FRAME:
            var header = JxlFrameHeader()
            try Self.check(JxlDecoderGetFrameHeader(decoder, &header), "reading frame \(framesSeen + 1)'s header")
            try checkFrame(framesSeen)
            framesSeen += 1
            let bitmap = try decodeFrame()
            return AnimatedImage.Frame(bitmap: bitmap, duration: duration(ofTicks: header.duration))
        case let status:
            throw Self.error(status, "reading frame \(framesSeen + 1)")
        }
    }

    /// The announced frame's pixels as 8-bit RGB or RGBA: libjxl writes them straight into the
    /// bitmap's storage, or, for samples of more than 8 bits, as 16-bit words reduced with
    /// rounding (``HighBitDepth``).
    private func decodeFrame() throws -> Bitmap {
        try Self.expect(JXL_DEC_NEED_IMAGE_OUT_BUFFER, from: decoder, "decoding frame \(framesSeen)")
        var format = pixelFormat
        let channels = Int(format.num_channels)
        var size = 0
        try Self.check(JxlDecoderImageOutBufferSize(decoder, &format, &size), "sizing frame \(framesSeen)")
        let wide = format.data_type == JXL_TYPE_UINT16
        let count = width * height * channels
        guard size == count * (wide ? 2 : 1) else {
            throw ImageError.corruptData("JPEG XL: frame \(framesSeen) needs \(size) bytes, not the \(count) samples of its size")
        }
        return try Bitmap(width: width, height: height, pixelFormat: hasAlpha ? .rgba8 : .rgb8) { output in
            guard wide else {
                try Self.check(JxlDecoderSetImageOutBuffer(decoder, &format, output.baseAddress, size), "decoding frame \(framesSeen)")
                try Self.expect(JXL_DEC_FULL_IMAGE, from: decoder, "decoding frame \(framesSeen)")
                return
            }
            let samples = UnsafeMutablePointer<UInt16>.allocate(capacity: count)
            defer { samples.deallocate() }
            try Self.check(JxlDecoderSetImageOutBuffer(decoder, &format, samples, size), "decoding frame \(framesSeen)")
            try Self.expect(JXL_DEC_FULL_IMAGE, from: decoder, "decoding frame \(framesSeen)")
            HighBitDepth.reduce(samples, to: output.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count, bits: 16)
        }
    }

    /// `ticks` of the animation's clock (`tps_numerator / tps_denominator` ticks per second),
    /// exact to the nanosecond.
    func duration(ofTicks ticks: UInt32) -> Duration {
        let perSecond = UInt64(info.animation.tps_numerator), denominator = UInt64(info.animation.tps_denominator)
        guard isAnimated, perSecond > 0 else { return .zero }
        // Both factors are 32-bit: the product fits, and the remainder × 10⁹ too.
        let scaled = UInt64(ticks) * denominator
        let seconds = scaled / perSecond, remainder = scaled % perSecond
        return .seconds(Int64(seconds)) + .nanoseconds(Int64(remainder * 1_000_000_000 / perSecond))
    }

    /// The ICC profile libjxl states for the pixels it will output (`JXL_COLOR_PROFILE_TARGET_DATA`),
    /// or `nil` when they are plain sRGB: then no conversion is needed, and none is carried.
    static func profileOfOutput(_ decoder: OpaquePointer) throws -> Data? {
        var encoding = JxlColorEncoding()
        if JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS,
           encoding.color_space == JXL_COLOR_SPACE_RGB, encoding.white_point == JXL_WHITE_POINT_D65,
           encoding.primaries == JXL_PRIMARIES_SRGB, encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB {
            return nil
        }
        var size = 0
        guard JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS, size > 0 else {
            return nil
        }
        var profile = Data(count: size)
        let status = profile.withUnsafeMutableBytes { bytes in
            JxlDecoderGetColorAsICCProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), size)
        }
        try check(status, "reading the ICC profile")
        return profile
    }

    /// Runs the decoder to its next event and throws unless it is `event`.
    private static func expect(_ event: JxlDecoderStatus, from decoder: OpaquePointer, _ doing: String) throws {
        let status = JxlDecoderProcessInput(decoder)
        guard status == event else { throw error(status, doing) }
    }

    static func check(_ status: JxlDecoderStatus, _ doing: String) throws {
        guard status == JXL_DEC_SUCCESS else { throw error(status, doing) }
    }

    /// The ``ImageError`` for a status that stops the decode. libjxl gives no message, only the
    /// status: the input ending early (all of it was given, so the file is truncated), or the
    /// codestream refused (corrupt, or a feature this libjxl lacks; it cannot tell them apart).
    static func error(_ status: JxlDecoderStatus, _ doing: String) -> ImageError {
        switch status {
        case JXL_DEC_NEED_MORE_INPUT:
            .corruptData("JPEG XL: the file ends early (\(doing))")
        case JXL_DEC_ERROR:
            .corruptData("JPEG XL: libjxl refused the file (\(doing))")
        default:
            .corruptData("JPEG XL: unexpected libjxl event \(status.rawValue) (\(doing))")
        }
    }
}
