import CJxl
import Foundation
import WebImageCore

/// Decodes JPEG XL as it arrives: one libjxl decoder is given each chunk (the bytes it has not
/// consumed yet are kept for the next), and a preview is libjxl's flush of the first frame as
/// far as it has decoded it (`JxlDecoderFlushImage`).
///
/// - **Previews** start once libjxl announces the frame's DC (`JXL_DEC_FRAME_PROGRESSION`: an 8×
///   smaller image, shown upsampled; libjxl 0.7 announces no later step, whatever the
///   progressive detail asked). After it, each preview shows the groups decoded since, in full
///   detail over the DC: one is offered when the file has grown by half since the last, so a
///   download costs a geometric series of flushes (each renders the whole frame), under three
///   renders in all. Files without a separate DC (one 256-pixel group, most lossless ones)
///   show nothing until they finish. Previews have the final image's size (thumbnails are
///   resized as the final image is), are in sRGB unless the options preserve the colour space,
///   and are upright: libjxl applies the orientation.
/// - **Limits** are checked from the basic info, before the frame buffer is allocated, as
///   ``JXLDecoder`` checks them.
/// - ``finish()`` of a still image returns the frame the stream completed: the work done for
///   earlier chunks is not repeated, and the result equals ``JXLDecoder``'s through the
///   registry. An animation is decoded whole by ``JXLDecoder`` from the gathered bytes, as a
///   player needs every frame. A file that ends early fails with ``ImageError/corruptData(_:)``.
final class JXLIncrementalDecoder: IncrementalImageDecoder {
    private let options: ImageDecodingOptions
    private let decoder: OpaquePointer?
    /// Every byte so far, for an animation's ``finish()``.
    private var bytes: [UInt8] = []
    /// How many of ``bytes`` libjxl has consumed.
    private var consumed = 0
    private var failure: ImageError?

    private var info: JxlBasicInfo?
    private var profile: Data?
    private var format = JxlPixelFormat()
    /// The first frame's samples, 8- or 16-bit, allocated when libjxl asks for it.
    private var output = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var isConfigured = false
    private var frameStarted = false
    private var frameComplete = false
    private var steps = 0, stepsShown = 0
    /// ``bytes``' count at the last preview.
    private var bytesShown = 0

    init(options: ImageDecodingOptions) {
        self.options = options
        // Not loaded, libjxl is reported by the first append (the protocol's initializer
        // does not throw).
        decoder = LazyLibrary.jxl.isAvailable ? JxlDecoderCreate(nil) : nil
    }

    deinit {
        if let decoder { JxlDecoderDestroy(decoder) }
        output.deallocate()
    }

    func append(_ chunk: Data) throws {
        if let failure { throw failure }
        bytes.append(contentsOf: chunk)
        // The first frame is all a preview or a still image needs; an animation's others are
        // decoded by finish().
        guard !frameComplete else { return }
        do {
            try advance()
        } catch let error as ImageError {
            failure = error
            throw error
        }
    }

    func preview() throws -> ImageContainer? {
        if let failure { throw failure }
        guard let decoder, frameStarted, !frameComplete, steps > 0, output.baseAddress != nil,
              steps > stepsShown || bytes.count >= bytesShown + bytesShown / 2,
              JxlDecoderFlushImage(decoder) == JXL_DEC_SUCCESS else { return nil }
        stepsShown = steps
        bytesShown = bytes.count
        return try finished(isPreview: true)
    }

    func finish() throws -> ImageContainer {
        if let failure { throw failure }
        guard let info, frameComplete else {
            throw ImageError.corruptData("JPEG XL: the file ends early (\(info == nil ? "in its header" : "in its first frame"))")
        }
        guard info.have_animation == 0 else {
            let container = try bytes.withUnsafeBytes { try JXLDecoder.decode($0, options: options) }
            return try CoderRegistry.finishInColorSpace(container, options: options)
        }
        return try finished(isPreview: false)
    }

    /// Gives libjxl the bytes it has not consumed and handles its events until it needs more.
    private func advance() throws {
        guard let decoder else {
            try LazyLibrary.jxl.load()
            throw ImageError.tooLarge("JPEG XL: libjxl could not allocate a decoder")
        }
        if !isConfigured {
            try configure(decoder)
            isConfigured = true
        }
        try bytes.withUnsafeBufferPointer { buffer in
            let unread = UnsafeBufferPointer(rebasing: buffer[consumed...])
            try JXLStream.check(JxlDecoderSetInput(decoder, unread.baseAddress, unread.count), "reading the file")
            defer { consumed = buffer.count - JxlDecoderReleaseInput(decoder) }
            while !frameComplete {
                let status = JxlDecoderProcessInput(decoder)
                switch status {
                case JXL_DEC_NEED_MORE_INPUT:
                    return
                case JXL_DEC_BASIC_INFO:
                    info = try JXLStream.basicInfo(of: decoder, options: options)
                case JXL_DEC_COLOR_ENCODING:
                    profile = try JXLStream.profileOfOutput(decoder)
                case JXL_DEC_FRAME:
                    frameStarted = true
                case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                    try allocateOutput(decoder)
                case JXL_DEC_FRAME_PROGRESSION:
                    steps += 1
                case JXL_DEC_FULL_IMAGE:
                    frameComplete = true
                default:
                    throw JXLStream.error(status, "decoding the first frame")
                }
            }
        }
    }

    private func configure(_ decoder: OpaquePointer) throws {
        let events = JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FRAME.rawValue
            | JXL_DEC_FRAME_PROGRESSION.rawValue | JXL_DEC_FULL_IMAGE.rawValue
        try JXLStream.check(JxlDecoderSubscribeEvents(decoder, Int32(events)), "subscribing to events")
        try JXLStream.check(JxlDecoderSetKeepOrientation(decoder, JXL_FALSE), "applying the orientation")
        try JXLStream.check(JxlDecoderSetCoalescing(decoder, JXL_TRUE), "composing frames")
        try JXLStream.check(JxlDecoderSetUnpremultiplyAlpha(decoder, JXL_TRUE), "unpremultiplying alpha")
    }

    private func allocateOutput(_ decoder: OpaquePointer) throws {
        guard let info, output.baseAddress == nil else {
            throw ImageError.corruptData("JPEG XL: a frame buffer asked for before the header, or twice")
        }
        format = JXLStream.pixelFormat(for: info)
        var size = 0
        try JXLStream.check(JxlDecoderImageOutBufferSize(decoder, &format, &size), "sizing the first frame")
        let samples = Int(info.xsize) * Int(info.ysize) * Int(format.num_channels)
        guard size == samples * (format.data_type == JXL_TYPE_UINT16 ? 2 : 1) else {
            throw ImageError.corruptData("JPEG XL: the first frame needs \(size) bytes, not the \(samples) samples of its size")
        }
        output = .allocate(byteCount: size, alignment: 16)
        // Rows libjxl has not reached yet show as transparent black in a preview.
        output.initializeMemory(as: UInt8.self, repeating: 0)
        try JXLStream.check(JxlDecoderSetImageOutBuffer(decoder, &format, output.baseAddress, size), "decoding the first frame")
    }

    /// The first frame as it stands in the buffer, resized and converted as the final image is.
    private func finished(isPreview: Bool) throws -> ImageContainer {
        guard let info else { throw ImageError.corruptData("JPEG XL: no header") }
        let width = Int(info.xsize), height = Int(info.ysize)
        let count = width * height * Int(format.num_channels)
        var image = try Bitmap(width: width, height: height, pixelFormat: info.alpha_bits > 0 ? .rgba8 : .rgb8) { pixels in
            if format.data_type == JXL_TYPE_UINT16 {
                HighBitDepth.reduce(output.baseAddress!.assumingMemoryBound(to: UInt16.self),
                                    to: pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count, bits: 16)
            } else {
                pixels.copyMemory(from: UnsafeRawBufferPointer(output))
            }
        }
        if let size = options.thumbnail?.outputSize(width: width, height: height), size.width != width || size.height != height {
            image = try image.resized(width: size.width, height: size.height)
        }
        let container = ImageContainer(image: image, format: .jxl, isPreview: isPreview, iccProfile: profile)
        return try CoderRegistry.finishInColorSpace(container, options: options)
    }
}
