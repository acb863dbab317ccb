import CAvif
import CYUV
import Foundation
import WebImageCore

/// Encodes AVIF with libavif and libaom, the fastest AV1 encoder Debian's libavif links (at
/// speed 10 about four times faster than rav1e and SVT-AV1 on one thread for a 2560×1600
/// photo, and the smallest file of the three).
///
/// - ``ImageEncodingOptions/quality`` (0–100) maps linearly onto AV1's quantizer (63–0), for
///   colour and alpha alike; lossy files are 8-bit YUV 4:2:0.
/// - ``ImageEncodingOptions/lossless`` stores the RGB samples exactly: quantizer 0, 4:4:4, the
///   identity matrix (RGB coded as is), full range.
/// - An animation becomes an AVIF image sequence at a 1000 Hz timescale (each frame's
///   duration to the millisecond), unless ``ImageEncodingOptions/firstFrameOnly``, with the
///   animation's loop count in an edit list, as libavif 1.x and Chromium read it.
/// - The ICC profile is kept unless ``ImageEncodingOptions/stripsMetadata``.
///
/// ```swift
/// var options = ImageEncodingOptions()
/// options.quality = 60
/// let avif = try AVIFEncoder(speed: 8).encode(container, options: options)
/// ```
public struct AVIFEncoder: ImageEncoder {
    /// libaom's speed, 0 (slowest, smallest file) to 10 (fastest), clamped to that range.
    package var speed: Int

    public init(speed: Int = 10) {
        self.speed = speed
    }

    public var format: ImageFormat { .avif }

    public func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data {
        try LazyLibrary.avif.load()
        guard let encoder = avifEncoderCreate() else { throw ImageError.tooLarge("AVIF: libavif could not allocate an encoder") }
        defer { avifEncoderDestroy(encoder) }
        encoder.pointee.codecChoice = AVIF_CODEC_CHOICE_AOM
        encoder.pointee.maxThreads = 1
        encoder.pointee.speed = Int32(min(max(speed, 0), 10))
        encoder.pointee.timescale = 1000
        let quality: Int = min(max(options.quality, 0), 100)
        let quantizer: Int32 = options.lossless ? 0 : Int32(((100 - quality) * 63 + 50) / 100)
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = quantizer
        encoder.pointee.maxQuantizerAlpha = quantizer

        let icc = options.stripsMetadata ? nil : image.iccProfile
        let frames: [(bitmap: Bitmap, milliseconds: UInt64)]
        var plays: Int?
        if let animation = image.animation, animation.frames.count > 1, !options.firstFrameOnly {
            plays = animation.loopCount
            frames = animation.frames.map { frame in
                let (seconds, attoseconds) = frame.duration.components
                return (frame.bitmap, UInt64(max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)))
            }
        } else {
            frames = [(image.image, 1)]
        }
        // Every frame of a lossless sequence is a key frame: libavif 0.11 over libaom 3.6 wrote
        // lossless inter frames (quantizer 0, the identity matrix) that decode as the frame
        // before, in avifdec too (a gradient whose blue channel changed from frame to frame).
        let flags = frames.count == 1 ? AVIF_ADD_IMAGE_FLAG_SINGLE : options.lossless ? AVIF_ADD_IMAGE_FLAG_FORCE_KEYFRAME : AVIF_ADD_IMAGE_FLAG_NONE
        for (index, frame) in frames.enumerated() {
            if frames.count > 1 { try WorkDeadline.check("encoding AVIF frame \(index + 1) of \(frames.count)") }
            let yuv = try Self.makeImage(frame.bitmap, lossless: options.lossless, icc: icc)
            defer { avifImageDestroy(yuv) }
            try AVIFDecoder.check(avifEncoderAddImage(encoder, yuv, frame.milliseconds, avifAddImageFlags(flags.rawValue)), nil, "encoding a frame")
        }
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        try AVIFDecoder.check(avifEncoderFinish(encoder, &output), nil, "finishing the file")
        let file = UnsafeBufferPointer(start: output.data, count: output.size)
        // libavif 0.11 writes no loop count; a layout the edit list cannot be added to plays forever.
        if let plays, let looped = AVIFSequenceEditList.inserting(plays: plays, into: Array(file)) {
            return Data(looped)
        }
        return Data(file)
    }

    /// The bitmap as an 8-bit YUV image (4:4:4 with the identity matrix when lossless), alpha
    /// kept when the bitmap has it. Grey bitmaps are widened to RGB first.
    static func makeImage(_ bitmap: Bitmap, lossless: Bool, icc: Data?) throws -> UnsafeMutablePointer<avifImage> {
        guard let image = avifImageCreate(UInt32(bitmap.width), UInt32(bitmap.height), 8, lossless ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420) else {
            throw ImageError.tooLarge("AVIF: libavif could not allocate a \(bitmap.width)×\(bitmap.height) image")
        }
        if lossless {
            image.pointee.matrixCoefficients = UInt16(AVIF_MATRIX_COEFFICIENTS_IDENTITY)
            image.pointee.yuvRange = AVIF_RANGE_FULL
        }
        if let icc, !icc.isEmpty {
            icc.withUnsafeBytes { avifImageSetProfileICC(image, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), icc.count) }
        }
        let source = bitmap.pixelFormat.channels == .gray || bitmap.pixelFormat.channels == .grayAlpha ? widened(bitmap) : bitmap
        if !lossless, source.pixelFormat == .rgb8 || source.pixelFormat == .rgba8 {
            do {
                try convertWithLibYUV(source, into: image)
                return image
            } catch {
                avifImageDestroy(image)
                throw error
            }
        }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.depth = 8
        rgb.format = source.pixelFormat.hasAlpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        rgb.alphaPremultiplied = source.pixelFormat.alpha == .premultiplied ? 1 : 0
        rgb.rowBytes = UInt32(source.bytesPerRow)
        let result = source.pixels.withUnsafeBytes { pixels in
            // libavif only reads the RGB pixels; its struct has no const pointer.
            rgb.pixels = UnsafeMutablePointer(mutating: pixels.baseAddress!.assumingMemoryBound(to: UInt8.self))
            return avifImageRGBToYUV(image, &rgb)
        }
        guard result == AVIF_RESULT_OK else {
            avifImageDestroy(image)
            throw ImageError.unsupportedFormat("AVIF: \(String(cString: avifResultToString(result))) (converting RGB to YUV)")
        }
        return image
    }

    /// Fills `image`'s 4:2:0 planes (and alpha plane, for RGBA) from 8-bit RGB or straight RGBA
    /// with libyuv's full-range BT.601 conversion. That is what libavif's own conversion computes
    /// (within one level) for the full range and unspecified matrix `avifImageCreate` sets,
    /// and what decoders assume for them, so the file reads as before. libavif 0.11 converts RGB
    /// with portable per-pixel code: 1.3 ms of a 6.4 ms encode of a 512 × 320 photo, where
    /// libyuv's SIMD takes 0.02 ms.
    static func convertWithLibYUV(_ source: Bitmap, into image: UnsafeMutablePointer<avifImage>) throws {
        let hasAlpha = source.pixelFormat.hasAlpha
        let planes = hasAlpha ? AVIF_PLANES_ALL : AVIF_PLANES_YUV
        guard avifImageAllocatePlanes(image, avifPlanesFlags(planes.rawValue)) == AVIF_RESULT_OK else {
            throw ImageError.tooLarge("AVIF: libavif could not allocate a \(source.width)×\(source.height) image")
        }
        let (width, height) = (Int32(source.width), Int32(source.height))
        let y = image.pointee.yuvPlanes.0, u = image.pointee.yuvPlanes.1, v = image.pointee.yuvPlanes.2
        let yStride = Int32(image.pointee.yuvRowBytes.0), uStride = Int32(image.pointee.yuvRowBytes.1), vStride = Int32(image.pointee.yuvRowBytes.2)
        let result = source.pixels.withUnsafeBytes { buffer -> Int32 in
            let pixels = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let stride = Int32(source.bytesPerRow)
            // libyuv names formats by their order in a little-endian word: its RAW is R, G, B in
            // memory and its ABGR is R, G, B, A; the alpha byte is fourth in both ABGR and ARGB.
            guard hasAlpha else { return RAWToJ420(pixels, stride, y, yStride, u, uStride, v, vStride, width, height) }
            let converted = ABGRToJ420(pixels, stride, y, yStride, u, uStride, v, vStride, width, height)
            guard converted == 0 else { return converted }
            return ARGBExtractAlpha(pixels, stride, image.pointee.alphaPlane, Int32(image.pointee.alphaRowBytes), width, height)
        }
        guard result == 0 else {
            throw ImageError.unsupportedFormat("AVIF: libyuv could not convert a \(source.width)×\(source.height) \(source.pixelFormat) bitmap to YUV")
        }
    }

    /// A grey or grey-and-alpha bitmap as RGB or RGBA (straight alpha).
    static func widened(_ bitmap: Bitmap) -> Bitmap {
        let hasAlpha = bitmap.pixelFormat.hasAlpha
        let format: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        // Force-try: the dimensions are the bitmap's own.
        return try! Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: format) { output in
            var out = 0
            for y in 0..<bitmap.height {
                for x in 0..<bitmap.width {
                    let at = y * bitmap.bytesPerRow + x * bitmap.pixelFormat.bytesPerPixel
                    let grey = bitmap.pixels[at]
                    output[out] = grey; output[out + 1] = grey; output[out + 2] = grey
                    if hasAlpha { output[out + 3] = bitmap.pixels[at + 1] }
                    out += format.bytesPerPixel
                }
            }
        }
    }
}
