import Foundation

/// How to encode: quality, progressive or lossless variants, metadata.
///
/// ```swift
/// var options = ImageEncodingOptions()
/// options.quality = 80
/// options.progressive = true
/// let jpeg = try registry.encode(container, as: .jpeg, options: options)
/// ```
public struct ImageEncodingOptions: Sendable, Hashable {
    /// Quality from 0 to 100 for lossy formats (JPEG, lossy WebP). Default: 80.
    public var quality: Int = 80
    /// Write a progressive JPEG.
    public var progressive = false
    /// Write lossless WebP instead of lossy.
    public var lossless = false
    /// Leave out metadata (the ICC profile); pixels are always written upright, so no
    /// orientation is ever written.
    public var stripsMetadata = false
    /// Write only the first frame even when the format can animate.
    public var firstFrameOnly = false

    public init() {}
}

/// Turns an ``ImageContainer`` into bytes of one format. Animated containers are written
/// animated when the encoder's format can animate.
public protocol ImageEncoder: Sendable {
    /// The format this encoder writes.
    var format: ImageFormat { get }

    /// Encodes `image`.
    ///
    /// - Throws: ``ImageError/unsupportedFormat(_:)`` for an image the format cannot hold, or
    ///   ``ImageError/corruptData(_:)`` when the encoder library fails.
    func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data
}
