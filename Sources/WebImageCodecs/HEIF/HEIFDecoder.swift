import CCodecShims
import CHeif
import Foundation
import WebImageCore

/// Decodes HEIC and HEIF with libheif (HEVC through libde265): the primary image, including
/// grid (tiled) images, which libheif assembles; alpha; 8-bit and 10/12-bit samples.
///
/// - Limits come from the container before any pixel is decoded: a grid's tiles are counted
///   and sized from the item boxes before libheif reads them (``ImageDecodingOptions/maximumTileCount``,
///   and twice ``ImageDecodingOptions/maximumPixelCount`` for the tiles together); the primary image's size
///   (`heif_image_handle_get_width`/`height`) is checked against
///   ``ImageDecodingOptions/maximumPixelCount``; libheif's own security limit (the longest
///   side of any coded image or tile it will allocate) is set from the same option, so its
///   parser refuses an item no allowed image could have with ``ImageError/tooLarge(_:)`` too.
/// - Orientation: libheif applies the transformative properties itself (`clap`, `irot`,
///   `imir`; `ignore_transformations` off), which are HEIF's way to store a rotated photo.
///   Phones write them and keep an EXIF `Orientation` tag beside them, which HEIF requires
///   readers to ignore (the boxes already say it). So an EXIF orientation inside a HEIF is
///   never applied, with boxes or without, even when the two disagree: the returned
///   ``ImageContainer/orientation`` is always ``ImageOrientation/up``, the bitmap already
///   upright. Browsers and libheif's own tools behave the same way; applying the tag as well
///   would rotate such photos twice.
/// - Thumbnails: when the file carries a thumbnail item at least as large as the requested
///   thumbnail, that item is decoded instead of the primary image (a camera's HEIC carries a
///   small one, decoding in a fraction of the time); otherwise the primary image is decoded
///   and resampled (Lanczos-3). Either way the result is exactly the requested size.
/// - Samples of more than 8 bits are reduced with rounding (`(v × 255 + max / 2) / max`).
///   Colour is libheif's YUV to RGB conversion (the file's `nclx` matrix); the colour space, the
///   file's ICC profile or else its `nclx` code points (as a profile built from them), is converted to
///   sRGB by default like any profile (kept in ``ImageContainer/iccProfile`` with `.preserve`). Image sequences (`msf1`) and
///   auxiliary images (depth maps) other than alpha are not decoded: the primary image is.
///
/// ```swift
/// var options = ImageDecodingOptions()
/// options.thumbnail = .maxPixelSize(320)   // the embedded thumbnail when it is large enough
/// let container = try HEIFDecoder().decode(bytes, options: options)
/// ```
public struct HEIFDecoder: ImageDecoder {
    public init() {}

    public var formats: Set<ImageFormat> { [.heic, .heif] }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        ColorConversion.apply(try data.withUnsafeBytes { try Self.decode($0, options: options) }, options: options)
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws -> ImageContainer {
        try withPrimaryImage(bytes, options: options) { primary in
            let width = Int(heif_image_handle_get_width(primary)), height = Int(heif_image_handle_get_height(primary))
            let wanted = options.thumbnail?.outputSize(width: width, height: height)
            let thumbnail = wanted.flatMap { embeddedThumbnail(of: primary, atLeast: $0) }
            defer { if let thumbnail { heif_image_handle_release(thumbnail) } }

            let decoded = try decodeHandle(thumbnail ?? primary, maximumPixelCount: options.maximumPixelCount, reducingFor: wanted)
            var bitmap = decoded.bitmap
            // Sized from the primary image, so an embedded thumbnail of another aspect ratio
            // (rounded differently by the camera) still gives the exact size.
            if let reduction = decoded.reduction, let wanted {
                bitmap = try bitmap.resized(width: wanted.width, height: wanted.height, from: reduction)
            } else if let wanted, wanted.width != bitmap.width || wanted.height != bitmap.height {
                bitmap = try bitmap.resized(width: wanted.width, height: wanted.height)
            }
            // `heic` or `heif`, as the `ftyp` brands say.
            let format = ImageFormat(sniffing: bytes) ?? .heif
            return ImageContainer(image: bitmap, format: format == .heic ? .heic : .heif, iccProfile: iccProfile(of: primary))
        }
    }

    /// The size of the thumbnail item a decode with `options` would use, or `nil` when it would
    /// decode the primary image.
    static func thumbnailItemSize(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws -> [Int]? {
        try withPrimaryImage(bytes, options: options) { primary in
            let width = Int(heif_image_handle_get_width(primary)), height = Int(heif_image_handle_get_height(primary))
            guard let wanted = options.thumbnail?.outputSize(width: width, height: height),
                  let thumbnail = embeddedThumbnail(of: primary, atLeast: wanted) else { return nil }
            defer { heif_image_handle_release(thumbnail) }
            return [Int(heif_image_handle_get_width(thumbnail)), Int(heif_image_handle_get_height(thumbnail))]
        }
    }

    /// Parses the container (boxes only, no pixel decoded) and calls `body` with the primary
    /// image's handle once its size has passed ``ImageDecodingOptions/maximumPixelCount``.
    static func withPrimaryImage<T>(
        _ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions, _ body: (OpaquePointer) throws -> T
    ) throws -> T {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw ImageError.corruptData("HEIF: no bytes") }
        // Grids are bounded before libheif parses them: it decodes every tile, however small
        // the canvas they compose.
        try ISOBMFFItems.checkTiles(bytes, options: options, format: "HEIF")
        try LazyLibrary.heif.load()
        guard let context = heif_context_alloc() else { throw ImageError.tooLarge("HEIF: libheif could not allocate a context") }
        defer { heif_context_free(context) }
        // libheif's limit is one side, checked against every coded image's width and height
        // (HEVC codes whole blocks: a 48×32 image is a 64×64 bitstream, cropped). No side can
        // exceed the pixel limit itself (the other side is at least 1); 64 more for the block
        // padding; never above libheif's own default of 32768. The pixel count is ours to check.
        let side = min(max(options.maximumPixelCount, 1), 32768 - 64) + 64
        heif_context_set_maximum_image_size_limit(context, Int32(side))
        try check(heif_context_read_from_memory_without_copy(context, base, bytes.count, nil), "reading the container")

        var primary: OpaquePointer?
        try check(heif_context_get_primary_image_handle(context, &primary), "finding the primary image")
        guard let primary else { throw ImageError.corruptData("HEIF: no primary image") }
        defer { heif_image_handle_release(primary) }
        let width = Int(heif_image_handle_get_width(primary)), height = Int(heif_image_handle_get_height(primary))
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= options.maximumPixelCount else {
            throw ImageError.tooLarge("HEIF image \(width)×\(height) exceeds the limit of \(options.maximumPixelCount) pixels")
        }
        guard width > 0, height > 0 else { throw ImageError.corruptData("HEIF: an image without pixels") }
        // A grid or overlay is composed on a canvas its own descriptor sizes, which its
        // `ispe` need not match (finding #9): checked before libheif allocates it.
        guard let canvas = ISOBMFFItems.largestDerivedCanvas(bytes) else {
            throw ImageError.corruptData("HEIF: the item boxes cannot be read")
        }
        guard canvas <= options.maximumPixelCount else {
            throw ImageError.tooLarge("HEIF: a derived image's canvas of \(canvas) pixels exceeds the limit of \(options.maximumPixelCount) pixels")
        }
        // Item locations the standard does not allow are refused before libheif reads them:
        // an AV1 item located by 12-byte lengths (fuzz finding #13) or with no extent at all
        // (#14) reached libheif 1.15's dav1d plugin with no bytes, and the plugin leaks what it
        // wrapped when dav1d refuses them (40 bytes a decode).
        guard ISOBMFFItems.hasValidLocations(bytes) else {
            throw ImageError.corruptData("HEIF: the item locations are malformed (field sizes other than 0, 4 or 8 bytes, or an item without extents)")
        }
        // AV1 in a HEIF file is AVIF, the AVIF decoder's (the registry gives it every file
        // branded so; without the brands libavif, and so Chromium, refuses the file). Refused
        // here whatever the brands, before libheif 1.15's dav1d plugin sees it: that plugin
        // leaks 40 bytes whenever dav1d refuses an item's data (#13, #14, #16), and it sets no
        // frame-size limit, so a 724-byte file made dav1d allocate 619 MB for a frame its
        // sequence header claimed (#18); libavif bounds dav1d by the pixel limit.
        if ISOBMFFItems.hasAV1Items(bytes) {
            throw ImageError.unsupportedFormat("HEIF: an AV1-coded image (AVIF), which AVIFDecoder decodes")
        }
        return try body(primary)
    }

    /// The first thumbnail item at least `size` in both dimensions, or `nil`.
    static func embeddedThumbnail(of primary: OpaquePointer, atLeast size: (width: Int, height: Int)) -> OpaquePointer? {
        let count = Int(heif_image_handle_get_number_of_thumbnails(primary))
        guard count > 0 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_thumbnail_IDs(primary, &ids, Int32(count)))
        for id in ids.prefix(listed) {
            var thumbnail: OpaquePointer?
            guard heif_image_handle_get_thumbnail(primary, id, &thumbnail).code == heif_error_Ok, let thumbnail else { continue }
            if Int(heif_image_handle_get_width(thumbnail)) >= size.width, Int(heif_image_handle_get_height(thumbnail)) >= size.height {
                return thumbnail
            }
            heif_image_handle_release(thumbnail)
        }
        return nil
    }

    /// Decodes an image item to interleaved 8-bit RGB(A), transformations applied. The coded
    /// image can be larger than the size the container states and the limit was checked against
    /// (fuzz finding #8: a 128 × 15,680 image behind a small `ispe`), so the decoded size is
    /// checked again before it is copied.
    ///
    /// For a thumbnail of `wanted` size, an 8-bit image is box-averaged straight out of
    /// libheif's buffer by the factors ``Bitmap/resized(width:height:)`` would use on its way
    /// there (the reduction is returned, for the Lanczos step that finishes it): the full-size
    /// copy and the resampler's pass over it are skipped.
    static func decodeHandle(
        _ handle: OpaquePointer, maximumPixelCount: Int, reducingFor wanted: (width: Int, height: Int)? = nil
    ) throws -> (bitmap: Bitmap, reduction: BlockReduction?) {
        let hasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
        let bits = Int(heif_image_handle_get_luma_bits_per_pixel(handle))
        let deep = bits > 8
        let chroma: heif_chroma = switch (hasAlpha, deep) {
        case (false, false): heif_chroma_interleaved_RGB
        case (true, false): heif_chroma_interleaved_RGBA
        case (false, true): heif_chroma_interleaved_RRGGBB_LE
        case (true, true): heif_chroma_interleaved_RRGGBBAA_LE
        }
        guard let decodingOptions = heif_decoding_options_alloc() else {
            throw ImageError.tooLarge("HEIF: libheif could not allocate decoding options")
        }
        defer { heif_decoding_options_free(decodingOptions) }
        decodingOptions.pointee.ignore_transformations = 0
        decodingOptions.pointee.convert_hdr_to_8bit = 0
        var image: OpaquePointer?
        try check(heif_decode_image(handle, &image, heif_colorspace_RGB, chroma, decodingOptions), "decoding the image")
        guard let image else { throw ImageError.corruptData("HEIF: the image did not decode") }
        defer { heif_image_release(image) }

        let width = Int(heif_image_get_width(image, heif_channel_interleaved))
        let height = Int(heif_image_get_height(image, heif_channel_interleaved))
        var stride: Int32 = 0
        guard width > 0, height > 0, let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
            throw ImageError.corruptData("HEIF: the decoded image has no pixels")
        }
        guard width.multipliedReportingOverflow(by: height).partialValue <= maximumPixelCount, width < 1 << 20, height < 1 << 20 else {
            throw ImageError.tooLarge("HEIF: the decoded image is \(width)×\(height), over the limit of \(maximumPixelCount) pixels")
        }
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        let rowSamples = width * pixelFormat.bytesPerPixel
        let sampleBits = deep ? Int(heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved)) : 8
        guard Int(stride) >= rowSamples * (deep ? 2 : 1), !deep || (9...16).contains(sampleBits) else {
            throw ImageError.corruptData("HEIF: the decoded image's layout is not the one asked for")
        }
        if let wanted, !deep, let reduction = reduction(from: (width, height), to: wanted) {
            let size = reduction.reducedSize
            let bitmap = try Bitmap(width: size.width, height: size.height, pixelFormat: .rgba8) { output in
                let status = wi_box_reduce_interleaved(
                    plane, Int(stride), UInt32(width), UInt32(height), UInt32(pixelFormat.bytesPerPixel),
                    UInt32(reduction.x), UInt32(reduction.y), output.baseAddress!.assumingMemoryBound(to: UInt8.self), size.width * 4)
                guard status == 0 else { throw ImageError.tooLarge("HEIF: out of memory reducing the image") }
            }
            return (bitmap, reduction)
        }
        let bitmap = try Bitmap(width: width, height: height, pixelFormat: pixelFormat) { output in
            let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
            for row in 0..<height {
                let source = plane + row * Int(stride)
                if deep {
                    // Little-endian 16-bit words, as asked for; the row start is 2-byte aligned.
                    let words = UnsafeRawPointer(source).assumingMemoryBound(to: UInt16.self)
                    HighBitDepth.reduce(words, to: out + row * rowSamples, count: rowSamples, bits: sampleBits)
                } else {
                    (out + row * rowSamples).update(from: source, count: rowSamples)
                }
            }
        }
        return (bitmap, nil)
    }

    /// The box reduction of a `size` image on its way to `wanted`, or `nil` when there is none
    /// to make (an enlargement, or a reduction under the resampler's Lanczos gap). At most 256
    /// pixels a side: the C sums are 32-bit.
    static func reduction(from size: (width: Int, height: Int), to wanted: (width: Int, height: Int)) -> BlockReduction? {
        guard wanted.width <= size.width, wanted.height <= size.height else { return nil }
        let x = min(256, Bitmap.boxReduction(from: size.width, to: wanted.width))
        let y = min(256, Bitmap.boxReduction(from: size.height, to: wanted.height))
        guard x > 1 || y > 1 else { return nil }
        return BlockReduction(sourceWidth: size.width, sourceHeight: size.height, x: x, y: y)
    }

    /// The primary image's ICC profile (`colr` of type `prof`/`rICC`), else one for its `nclx`
    /// code points (`CodedColorSpace`; `nil` when those are sRGB's or absent).
    static func iccProfile(of handle: OpaquePointer) -> Data? {
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        guard size > 0 else {
            var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
            let error = heif_image_handle_get_nclx_color_profile(handle, &nclx)
            // libheif 1.15 allocates the profile before it checks the code points, and returns
            // an error without freeing it for unknown ones (fuzz finding #11, a leak).
            defer { if let nclx { heif_nclx_color_profile_free(nclx) } }
            guard error.code == heif_error_Ok, let nclx else { return nil }
            return CodedColorSpace.iccProfile(primaries: Int(nclx.pointee.color_primaries.rawValue), transfer: Int(nclx.pointee.transfer_characteristics.rawValue))
        }
        guard size < 1 << 24 else { return nil }
        var profile = Data(count: size)
        let error = profile.withUnsafeMutableBytes { heif_image_handle_get_raw_color_profile(handle, $0.baseAddress) }
        return error.code == heif_error_Ok ? profile : nil
    }

    /// Throws the ``ImageError`` for a libheif error: ``ImageError/tooLarge(_:)`` for its
    /// security limits, ``ImageError/unsupportedFormat(_:)`` for a feature or codec it lacks,
    /// ``ImageError/corruptData(_:)`` otherwise (including a file cut short).
    static func check(_ error: heif_error, _ doing: String) throws {
        guard error.code != heif_error_Ok else { return }
        let reason = error.message.map { LibraryMessage.oneLine(String(cString: $0)) } ?? "error \(error.code.rawValue)"
        let message = "HEIF: \(reason) (\(doing))"
        if error.subcode == heif_suberror_Security_limit_exceeded || error.code == heif_error_Memory_allocation_error {
            throw ImageError.tooLarge(message)
        }
        switch error.code {
        case heif_error_Unsupported_feature, heif_error_Unsupported_filetype:
            throw ImageError.unsupportedFormat(message)
        default:
            throw ImageError.corruptData(message)
        }
    }
}
