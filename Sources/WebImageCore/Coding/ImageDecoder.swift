import Foundation

/// Turns encoded bytes of one or more formats into an ``ImageContainer``.
///
/// A decoder returns pixels as ``PixelFormat/rgba8`` (8-bit RGBA, straight alpha, rows top to
/// bottom), every frame of an animation composed onto the full canvas. It checks
/// ``ImageDecodingOptions/maximumPixelCount`` and ``ImageDecodingOptions/maximumAnimationBytes``
/// from the header before allocating, and reports the stored EXIF orientation in
/// ``ImageContainer/orientation`` without applying it: the ``CoderRegistry`` applies it, and
/// resamples to the exact thumbnail size, for every decoder alike. A decoder that can scale
/// while decoding uses ``ImageDecodingOptions/thumbnail`` as a hint and returns an image at
/// least as large as asked; one that averages blocks of pixels while decoding says so in
/// its block reduction, so the registry's resize keeps the source's geometry.
///
/// ```swift
/// struct PPMDecoder: ImageDecoder {
///     var formats: Set<ImageFormat> { [] }   // a format the sniffer does not know
///     func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
///         let (width, height, pixels) = try parsePPM(data)   // RGB, 8 bits
///         return ImageContainer(image: try Bitmap(width: width, height: height, pixelFormat: .rgb8, pixels: pixels))
///     }
/// }
/// registry.register(PPMDecoder())
/// ```
public protocol ImageDecoder: Sendable {
    /// The sniffed formats this decoder reads.
    var formats: Set<ImageFormat> { get }

    /// Decodes `data`.
    ///
    /// - Throws: ``ImageError/tooLarge(_:)`` past a limit, ``ImageError/corruptData(_:)`` for
    ///   bytes that do not decode, ``ImageError/unsupportedFormat(_:)`` for a variant the decoder
    ///   does not handle.
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer

    /// A decoder that takes the file in pieces as it arrives and produces previews, or `nil`
    /// when this format has no useful partial image.
    func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)?

    /// A source that decodes `data`'s animation a frame at a time, for
    /// ``AnimatedImagePlayer``, or `nil` when `data` is not an animation this decoder can play
    /// that way (a still image; a format without frame-at-a-time decoding, which the default
    /// implementation stands for).
    ///
    /// The frames are those ``decode(_:options:)`` composes, in the same colour space, at canvas
    /// size and with the orientation not applied (``AnimationFrameSource/orientation``): the
    /// registry's ``CoderRegistry/makeAnimationFrameSource(for:options:)`` finishes them as its
    /// decode does. ``ImageDecodingOptions/maximumPixelCount`` and
    /// ``ImageDecodingOptions/maximumFrameCount`` apply; the limits on a whole decode
    /// (``ImageDecodingOptions/maximumAnimationBytes``,
    /// ``ImageDecodingOptions/maximumAnimationPixels``) do not, as no more than one frame is
    /// composed at a time and a player bounds the frames it keeps.
    ///
    /// - Throws: ``ImageError/tooLarge(_:)`` or ``ImageError/corruptData(_:)`` when the
    ///   header already shows it.
    func makeAnimationFrameSource(_ data: Data, options: ImageDecodingOptions) throws -> (any AnimationFrameSource)?
}

extension ImageDecoder {
    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? { nil }

    public func makeAnimationFrameSource(_ data: Data, options: ImageDecodingOptions) throws -> (any AnimationFrameSource)? { nil }
}

/// Decodes a file as it arrives, for progressive display.
///
/// Owned by one task at a time (it is not `Sendable`): append each chunk as it arrives, ask for
/// a preview when you want to show something, and call ``finish()`` when the whole file has
/// been appended. The work done for earlier chunks is kept, not repeated.
///
/// ```swift
/// let incremental = decoder.makeIncrementalDecoder(options: options)!
/// for try await chunk in body {
///     try incremental.append(chunk)
///     if let preview = try incremental.preview() { show(preview) }
/// }
/// show(try incremental.finish())
/// ```
public protocol IncrementalImageDecoder: AnyObject {
    /// Adds the next bytes of the file.
    func append(_ chunk: Data) throws

    /// A preview of what has arrived, when it shows more than the last preview did; `nil`
    /// otherwise. Previews have ``ImageContainer/isPreview`` set, are oriented like the final
    /// image, and have the final image's size.
    func preview() throws -> ImageContainer?

    /// The complete image, once every byte has been appended.
    func finish() throws -> ImageContainer
}
