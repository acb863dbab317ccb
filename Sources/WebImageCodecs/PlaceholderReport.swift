import Foundation
import WebImageCore

/// What an image looks like in a few dozen bytes, and its colour: its ``ThumbHash``, its
/// ``BlurHash``, its dominant colour and its ``ColorReport``, all read from one small decode of
/// its first frame. What `webimage info` prints and the proxy's `/info` answers.
///
/// The decode (``decodingOptions(from:)``) keeps the source's colour space, so that the profile
/// it converts from is known, and is as small as the format allows: a JPEG decodes at 1/8 scale
/// through its DCT, a WebP through its scaler, so a 12-megapixel photo never becomes a
/// full-size bitmap. The hashes and the colour are then read in sRGB, upright (EXIF orientation
/// applied: a ThumbHash's aspect ratio is the image's as displayed).
///
/// ```swift
/// let container = try PlaceholderReport.decode(data, registry: registry, options: ImageDecodingOptions())
/// let report = try PlaceholderReport(decoded: container)
/// print(report.thumbHash, report.blurHash, report.dominantColor.hex)
/// ```
package struct PlaceholderReport: Sendable {
    package var thumbHash: ThumbHash
    package var blurHash: BlurHash
    package var dominantColor: RGBColor
    /// The colour the decode kept: the profile's description, and whether converting changes it.
    package var color: ColorReport

    /// The longest side the small decode asks for: the size both hashes reduce to anyway.
    package static let decodedSide = 100

    /// `base` (its limits) for the small decode: the first frame, at most ``decodedSide`` pixels
    /// a side, upright, the colour space kept.
    package static func decodingOptions(from base: ImageDecodingOptions) -> ImageDecodingOptions {
        var options = base
        options.thumbnail = .maxPixelSize(decodedSide)
        options.firstFrameOnly = true
        options.appliesOrientation = true
        options.colorSpace = .preserve
        return options
    }

    /// The small decode of `data`: its format's decoder at ``decodingOptions(from:)``, upright,
    /// without the registry's finishing resize to the exact size. The hashes start from a box
    /// average of at most ``decodedSide`` pixels a side, so the decoder's own reduction (a JPEG's
    /// 1/8 DCT scale) is all the work they need; the Lanczos resize after it was a sixth of
    /// the time `/info` spent on a 12-megapixel JPEG that was not the DCT's.
    ///
    /// - Throws: the decoder's (or the registry's) ``ImageError``.
    package static func decode(_ data: Data, registry: CoderRegistry, options base: ImageDecodingOptions) throws -> ImageContainer {
        let options = decodingOptions(from: base)
        guard let header = ImageHeader(sniffing: data), let decoder = registry.decoder(for: header.format) else {
            return try registry.decode(data, options: options)
        }
        var container = try decoder.decode(data, options: options)
        container.format = container.format ?? header.format
        // Block averages (the PNG path) need the registry's geometry to keep the aspect ratio.
        guard container.blockReduction == nil else {
            let size = header.pixelWidth.flatMap { width in header.pixelHeight.map { (width: width, height: $0) } }
            return try CoderRegistry.finish(container, options: options, sourceSize: size)
        }
        container.image = container.image.oriented(container.orientation)
        return container
    }

    /// The report of `container`, a decode made with ``decodingOptions(from:)`` (or any decode:
    /// a larger one is reduced first, one already in sRGB carries no profile), its BlurHash with
    /// `blurHashComponents` (1 to 9 each).
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` for components out of range.
    package init(decoded container: ImageContainer, blurHashComponents: BlurHash.Components = .init(x: 4, y: 3)) throws(ImageError) {
        color = ColorReport(profile: container.iccProfile)
        // The hashes describe what a browser shows: the pixels in sRGB, converted once reduced
        // (a few thousand pixels, whatever size the decode was). A profile that is not an RGB or
        // grey one is left out, as a decode to sRGB leaves it: a CMYK JPEG kept as stored is
        // the naive conversion already.
        let reduced = ColorConversion.apply(
            container.image.placeholderReduction(maxSide: Self.decodedSide), profile: container.iccProfile, options: ImageDecodingOptions())
        thumbHash = ThumbHash(encoding: reduced)
        blurHash = try BlurHash(encoding: reduced, components: blurHashComponents)
        dominantColor = reduced.dominantColor
    }
}
