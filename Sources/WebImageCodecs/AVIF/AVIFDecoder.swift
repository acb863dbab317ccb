import CAvif
import Foundation
import WebImageCore

/// Decodes AVIF with libavif (AV1 through whichever decoder Debian's libavif links: dav1d,
/// else libaom): still images, image sequences (animated AVIF), alpha, and 8, 10 and 12-bit
/// samples.
///
/// - Limits come from the container before any pixel is decoded. A grid's tiles are counted
///   and sized from the item boxes before libavif reads them (``ImageDecodingOptions/maximumTileCount``,
///   and twice ``ImageDecodingOptions/maximumPixelCount`` for the tiles together); then
///   `avifDecoderParse` reads the boxes only, so the size is checked against ``ImageDecodingOptions/maximumPixelCount`` and
///   a sequence's frame count and composed pixels against ``ImageDecodingOptions/maximumFrameCount``,
///   ``ImageDecodingOptions/maximumAnimationPixels`` and ``ImageDecodingOptions/maximumAnimationBytes``
///   first. libavif's own `imageSizeLimit` and `imageCountLimit` are set from the same options,
///   so its parser and the AV1 decoder refuse what the options refuse.
/// - Colour is libavif's default YUV to RGB conversion (the matrix the file's `nclx` names).
///   Samples of more than 8 bits are reduced with rounding (`(v × 255 + max / 2) / max`). The
///   colour space is the file's ICC profile, else its `nclx` code points (Display P3, BT.2020…,
///   as a profile built from them), converted to sRGB by default like any profile;
///   HDR transfers (PQ, HLG) are left as stored.
/// - The transformative properties are applied to the bitmap, in the order MIAF prescribes: the
///   clean aperture (`clap`, a crop; ignored when invalid, as libavif's own tools do), then the
///   rotation (`irot`, counter-clockwise quarter turns), then the mirror (`imir`). The returned
///   ``ImageContainer/orientation`` is therefore always ``ImageOrientation/up``; EXIF metadata in
///   an AVIF is not read (the boxes are the format's orientation).
/// - Sequences: every frame's duration comes from the track's timescale; the loop count from
///   the colour track's edit list (`elst`, by libavif 1.x's rules), which libavif 0.11 does not read. With
///   ``ImageDecodingOptions/firstFrameOnly`` only the first frame is decoded.
/// - Thumbnails: AV1 has no reduced-size decode, so the frame is decoded at full size and
///   resampled (Lanczos-3) to the thumbnail size at once; a sequence keeps only thumbnail frames.
///
/// ```swift
/// var options = ImageDecodingOptions()
/// options.thumbnail = .maxPixelSize(256)
/// let container = try AVIFDecoder().decode(bytes, options: options)
/// ```
public struct AVIFDecoder: ImageDecoder {
    public init() {}

    public var formats: Set<ImageFormat> { [.avif] }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        ColorConversion.apply(try data.withUnsafeBytes { try Self.decode($0, options: options) }, options: options)
    }

    /// Previews of a grid image's rows of tiles as they arrive; the still image the appends
    /// decoded is kept for ``IncrementalImageDecoder/finish()``, a sequence decoded whole then.
    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        AVIFIncrementalDecoder(options: options)
    }

    /// Image sequences frame by frame (`avifDecoderNextImage`); `nil` for a still image.
    public func makeAnimationFrameSource(_ data: Data, options: ImageDecodingOptions) throws -> (any AnimationFrameSource)? {
        try AVIFFrameSource(data, options: options)
    }

    /// A libavif decoder over `count` bytes at `base` whose container is parsed (the boxes only:
    /// the size and the frame count, before any pixel) and whose size passed the pixel limit;
    /// the caller destroys it. `imageCountLimit` defaults to the options' frame limit.
    static func parsedDecoder(
        _ base: UnsafePointer<UInt8>, count: Int, options: ImageDecodingOptions, imageCountLimit: UInt32? = nil
    ) throws -> UnsafeMutablePointer<avifDecoder> {
        // Grids are bounded before libavif parses them: it decodes every tile (with an AV1
        // decoder each) before it looks at the grid.
        try ISOBMFFItems.checkTiles(UnsafeRawBufferPointer(start: base, count: count), options: options, format: "AVIF")
        let decoder = try configuredDecoder(options: options, imageCountLimit: imageCountLimit)
        do {
            try check(avifDecoderSetIOMemory(decoder, base, count), decoder, "reading the file")
            try check(avifDecoderParse(decoder), decoder, "parsing the container")
            try checkParsed(decoder, options: options)
            return decoder
        } catch {
            avifDecoderDestroy(decoder)
            throw error
        }
    }

    /// A libavif decoder with the options' limits set, before it is given any bytes.
    static func configuredDecoder(options: ImageDecodingOptions, imageCountLimit: UInt32? = nil) throws -> UnsafeMutablePointer<avifDecoder> {
        try LazyLibrary.avif.load()
        guard let decoder = avifDecoderCreate() else { throw ImageError.tooLarge("AVIF: libavif could not allocate a decoder") }
        // One thread: the caller's decode executor decides the parallelism.
        decoder.pointee.maxThreads = 1
        decoder.pointee.ignoreXMP = 1
        decoder.pointee.ignoreExif = 1
        decoder.pointee.imageSizeLimit = UInt32(clamping: min(max(options.maximumPixelCount, 1), Int(AVIF_DEFAULT_IMAGE_SIZE_LIMIT)))
        decoder.pointee.imageCountLimit = imageCountLimit ?? UInt32(clamping: max(options.maximumFrameCount, 1))
        return decoder
    }

    /// Refuses a parsed container whose size passes the pixel limit, or that has no pixels.
    static func checkParsed(_ decoder: UnsafeMutablePointer<avifDecoder>, options: ImageDecodingOptions) throws {
        let width = Int(decoder.pointee.image.pointee.width), height = Int(decoder.pointee.image.pointee.height)
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= options.maximumPixelCount else {
            throw ImageError.tooLarge("AVIF image \(width)×\(height) exceeds the limit of \(options.maximumPixelCount) pixels")
        }
        guard width > 0, height > 0, decoder.pointee.imageCount > 0 else {
            throw ImageError.corruptData("AVIF: an image without pixels")
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws -> ImageContainer {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else {
            throw ImageError.corruptData("AVIF: no bytes")
        }
        // With the first frame only, a long sequence is not refused: only one frame is decoded.
        let decoder = try parsedDecoder(base, count: bytes.count, options: options, imageCountLimit: options.firstFrameOnly ? 0 : nil)
        defer { avifDecoderDestroy(decoder) }
        let width = Int(decoder.pointee.image.pointee.width), height = Int(decoder.pointee.image.pointee.height)
        let imageCount = Int(decoder.pointee.imageCount)
        let frameCount = options.firstFrameOnly ? 1 : imageCount
        if frameCount > 1 {
            try options.checkAnimationWork(frameCount: frameCount, canvasWidth: width, canvasHeight: height, format: "AVIF")
            let kept = options.thumbnail?.outputSize(width: width, height: height) ?? (width: width, height: height)
            let (frameBytes, overflow1) = (kept.width * 4).multipliedReportingOverflow(by: kept.height)
            let (totalBytes, overflow2) = frameBytes.multipliedReportingOverflow(by: frameCount)
            guard !overflow1, !overflow2, totalBytes <= options.maximumAnimationBytes else {
                throw ImageError.tooLarge(
                    "AVIF sequence: \(frameCount) frames of \(kept.width)×\(kept.height) exceed the limit of \(options.maximumAnimationBytes) bytes")
            }
        }

        var frames: [AnimatedImage.Frame] = []
        frames.reserveCapacity(frameCount)
        while frames.count < frameCount {
            if frameCount > 1 { try WorkDeadline.check("decoding AVIF frame \(frames.count + 1) of \(frameCount)") }
            try check(avifDecoderNextImage(decoder), decoder, "decoding frame \(frames.count + 1) of \(imageCount)")
            frames.append(.init(bitmap: try frameBitmap(decoder.pointee.image, options: options), duration: duration(decoder.pointee.imageTiming)))
        }
        let iccProfile = Self.colorProfile(of: decoder.pointee.image)
        let animation = frameCount > 1 ? AnimatedImage(frames: frames, loopCount: loopCount(bytes)) : nil
        return ImageContainer(image: frames[0].bitmap, animation: animation, format: .avif, iccProfile: iccProfile)
    }

    /// The decoded image in RGB(A), transformed (`clap`, `irot`, `imir`) and resized to the
    /// thumbnail size; `decodedRows`, when given, keeps only the rows libavif has decoded so
    /// far (the others are zero: black, or transparent with alpha).
    static func frameBitmap(_ image: UnsafeMutablePointer<avifImage>, options: ImageDecodingOptions, decodedRows: Int? = nil) throws -> Bitmap {
        var bitmap = try rgbBitmap(image)
        if let decodedRows, decodedRows < bitmap.height {
            let decoded = bitmap
            bitmap = try Bitmap(width: decoded.width, height: decoded.height, pixelFormat: decoded.pixelFormat) { output in
                let kept = max(decodedRows, 0) * decoded.bytesPerRow
                decoded.pixels.withUnsafeBytes { output.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: kept) }
                (output.baseAddress! + kept).initializeMemory(as: UInt8.self, repeating: 0, count: output.count - kept)
            }
        }
        bitmap = try AVIFTransforms.apply(to: bitmap, of: image)
        if let thumbnail = options.thumbnail {
            let size = thumbnail.outputSize(width: bitmap.width, height: bitmap.height)
            if size.width != bitmap.width || size.height != bitmap.height {
                bitmap = try bitmap.resized(width: size.width, height: size.height)
            }
        }
        return bitmap
    }

    /// The decoded YUV image converted to 8-bit RGB, or RGBA when it has an alpha plane
    /// (straight alpha: libavif un-premultiplies a premultiplied file).
    static func rgbBitmap(_ image: UnsafeMutablePointer<avifImage>) throws -> Bitmap {
        let width = Int(image.pointee.width), height = Int(image.pointee.height)
        let hasAlpha = image.pointee.alphaPlane != nil
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        let channels = pixelFormat.bytesPerPixel
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = hasAlpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        rgb.alphaPremultiplied = 0
        let depth = Int(image.pointee.depth)
        return try Bitmap(width: width, height: height, pixelFormat: pixelFormat) { output in
            if depth == 8 {
                // Straight into the bitmap's storage.
                rgb.depth = 8
                rgb.pixels = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                rgb.rowBytes = UInt32(width * channels)
                try check(avifImageYUVToRGB(image, &rgb), nil, "converting YUV to RGB")
                return
            }
            // Deeper samples convert at their own depth (16-bit words), then reduce with rounding.
            rgb.depth = UInt32(depth)
            let count = width * height * channels
            let wide = UnsafeMutablePointer<UInt16>.allocate(capacity: count)
            defer { wide.deallocate() }
            rgb.pixels = UnsafeMutableRawPointer(wide).assumingMemoryBound(to: UInt8.self)
            rgb.rowBytes = UInt32(width * channels * 2)
            try check(avifImageYUVToRGB(image, &rgb), nil, "converting YUV to RGB")
            HighBitDepth.reduce(wide, to: output.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count, bits: depth)
        }
    }

    /// The plays of a sequence (0 = forever) from its colour track's edit list, as libavif 1.x
    /// derives its `repetitionCount` (see ``ISOBMFFSequence/plays(_:)``): 1 for an edit that
    /// does not repeat, the repetitions that fill the track's duration, or forever for an
    /// indefinite one. A sequence without an edit list (avifenc before 1.0 writes none; libavif
    /// 1.x calls its count unknown), or with one libavif 1.x would refuse, plays forever: the
    /// answer this decoder gave before it read edit lists, and how browsers loop such files.
    static func loopCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        ISOBMFFSequence.plays(bytes) ?? 0
    }

    /// The colour profile of `image`: its ICC profile, else one for its `nclx` code points
    /// (`nil` when those are sRGB's).
    static func colorProfile(of image: UnsafeMutablePointer<avifImage>) -> Data? {
        let icc = image.pointee.icc
        if icc.size > 0, let bytes = icc.data { return Data(bytes: bytes, count: icc.size) }
        return CodedColorSpace.iccProfile(primaries: Int(image.pointee.colorPrimaries), transfer: Int(image.pointee.transferCharacteristics))
    }

    /// A frame's duration from the track's timescale, exact to the nanosecond.
    static func duration(_ timing: avifImageTiming) -> Duration {
        guard timing.timescale > 0 else { return .zero }
        let (scaled, overflow) = timing.durationInTimescales.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .seconds(timing.duration) }
        return .nanoseconds(Int64(clamping: scaled / timing.timescale))
    }

    /// Throws the ``ImageError`` for a libavif result other than success: ``ImageError/tooLarge(_:)``
    /// when one of the limits set on the decoder refused the file, ``ImageError/unsupportedFormat(_:)``
    /// for a feature libavif lacks, ``ImageError/corruptData(_:)`` otherwise.
    static func check(_ result: avifResult, _ decoder: UnsafeMutablePointer<avifDecoder>?, _ doing: String) throws {
        guard result != AVIF_RESULT_OK else { return }
        let reason = String(cString: avifResultToString(result))
        var detail = ""
        if let decoder {
            detail = LibraryMessage.oneLine(withUnsafeBytes(of: decoder.pointee.diag.error) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            })
        }
        let message = "AVIF: \(reason) (\(doing))" + (detail.isEmpty ? "" : ": \(detail)")
        let lowered = detail.lowercased()
        if lowered.contains("too large") || lowered.contains("limit") || result == AVIF_RESULT_OUT_OF_MEMORY {
            throw ImageError.tooLarge(message)
        }
        switch result {
        case AVIF_RESULT_NOT_IMPLEMENTED, AVIF_RESULT_NO_CODEC_AVAILABLE, AVIF_RESULT_UNSUPPORTED_DEPTH:
            throw ImageError.unsupportedFormat(message)
        default:
            throw ImageError.corruptData(message)
        }
    }
}
