import Foundation
import Synchronization

/// The decoders and encoders a load can use, picked by the format sniffed from the bytes.
///
/// Users add or replace coders; the last one registered for a format wins.
///
/// ```swift
/// let registry = CoderRegistry.system()        // every coder of WebImageCodecs
/// registry.register(PPMDecoder())             // yours, for a format of your own
/// let image = try registry.decode(bytes, options: .init())
/// let webp = try registry.encode(image, as: .webp)
/// ```
public final class CoderRegistry: Sendable {
    private struct Coders {
        var decoders: [ImageFormat: any ImageDecoder] = [:]
        var encoders: [ImageFormat: any ImageEncoder] = [:]
    }

    private let coders = Mutex(Coders())

    public init(decoders: [any ImageDecoder] = [], encoders: [any ImageEncoder] = []) {
        decoders.forEach(register)
        encoders.forEach(register)
    }

    /// Makes `decoder` the one used for each of its formats.
    public func register(_ decoder: any ImageDecoder) {
        coders.withLock { coders in
            for format in decoder.formats { coders.decoders[format] = decoder }
        }
    }

    /// Makes `encoder` the one used for its format.
    public func register(_ encoder: any ImageEncoder) {
        coders.withLock { $0.encoders[encoder.format] = encoder }
    }

    public func decoder(for format: ImageFormat) -> (any ImageDecoder)? {
        coders.withLock { $0.decoders[format] }
    }

    public func encoder(for format: ImageFormat) -> (any ImageEncoder)? {
        coders.withLock { $0.encoders[format] }
    }

    /// The formats some registered decoder reads.
    public var decodableFormats: Set<ImageFormat> {
        coders.withLock { Set($0.decoders.keys) }
    }

    /// Sniffs the format, decodes with its decoder, then applies what every decode shares: the
    /// stored orientation (unless ``ImageDecodingOptions/appliesOrientation`` is off) and the
    /// exact ``ImageDecodingOptions/thumbnail`` size.
    ///
    /// - Throws: ``ImageError/unsupportedFormat(_:)`` when no decoder reads the bytes' format;
    ///   otherwise what the decoder throws.
    public func decode(_ data: Data, options: ImageDecodingOptions = .init()) throws -> ImageContainer {
        guard let header = ImageHeader(sniffing: data) else {
            throw ImageError.unsupportedFormat("the bytes are not an image format the library knows")
        }
        let format = header.format
        guard let decoder = decoder(for: format) else {
            throw ImageError.unsupportedFormat("no decoder for \(format.rawValue)")
        }
        var container = try decoder.decode(data, options: options)
        container.format = container.format ?? format
        let sourceSize = header.pixelWidth.flatMap { width in header.pixelHeight.map { (width: width, height: $0) } }
        return try Self.finish(container, options: options, sourceSize: sourceSize)
    }

    /// An incremental decoder for `format`, or `nil` when the format has none.
    package func makeIncrementalDecoder(for format: ImageFormat, options: ImageDecodingOptions = .init()) -> (any IncrementalImageDecoder)? {
        decoder(for: format)?.makeIncrementalDecoder(options: options)
    }

    /// A source that decodes the animation in `data` a frame at a time, for
    /// ``AnimatedImagePlayer``: its frames equal the frames of ``decode(_:options:)``, with the
    /// orientation and thumbnail size applied alike. `nil` when `data` is a still image or its
    /// decoder has no frame-at-a-time decoding (decode it, and play
    /// `AnimatedImage`'s frame source).
    ///
    /// - Throws: ``ImageError/unsupportedFormat(_:)`` when no decoder reads the bytes' format;
    ///   otherwise what the decoder's ``ImageDecoder/makeAnimationFrameSource(_:options:)``
    ///   throws.
    ///
    /// ```swift
    /// if let source = try registry.makeAnimationFrameSource(for: bytes) {
    ///     let player = AnimatedImagePlayer(source: source)
    ///     player.play(at: .now)
    /// }
    /// ```
    public func makeAnimationFrameSource(for data: Data, options: ImageDecodingOptions = .init()) throws -> (any AnimationFrameSource)? {
        guard let header = ImageHeader(sniffing: data) else {
            throw ImageError.unsupportedFormat("the bytes are not an image format the library knows")
        }
        guard let decoder = decoder(for: header.format) else {
            throw ImageError.unsupportedFormat("no decoder for \(header.format.rawValue)")
        }
        guard let source = try decoder.makeAnimationFrameSource(data, options: options) else { return nil }
        let orientation = options.appliesOrientation ? source.orientation : .up
        guard orientation != .up || options.thumbnail != nil else { return source }
        return FinishingFrameSource(source, options: options)
    }

    /// Encodes `image` as `format`.
    ///
    /// - Throws: ``ImageError/unsupportedFormat(_:)`` when no encoder writes `format`.
    public func encode(_ image: ImageContainer, as format: ImageFormat, options: ImageEncodingOptions = .init()) throws -> Data {
        guard let encoder = encoder(for: format) else {
            throw ImageError.unsupportedFormat("no encoder for \(format.rawValue)")
        }
        return try encoder.encode(image, options: options)
    }

    /// Orientation and exact thumbnail size, for a decoder's raw output. Public so that decoders
    /// used on their own (and incremental decoders' previews) finish the same way.
    ///
    /// - Parameter sourceSize: the source's full size as stored (before orientation), when
    ///   known. The thumbnail size is computed from it, not from the decoded bitmap, which a
    ///   decoder that scales while decoding (JPEG at 1/4: 400×250 → 100×63) returns rounded.
    package static func finish(
        _ container: ImageContainer,
        options: ImageDecodingOptions,
        sourceSize: (width: Int, height: Int)? = nil
    ) throws -> ImageContainer {
        var container = container
        let orientation = options.appliesOrientation ? container.orientation : .up
        let orientedSource = sourceSize.map { orientation.swapsDimensions ? ($0.height, $0.width) : ($0.width, $0.height) }
        // A decoder that averaged blocks hands over their geometry; it is oriented with the pixels.
        let reduction = container.blockReduction.map { $0.oriented(orientation) }
        container.blockReduction = nil
        func finish(_ bitmap: Bitmap) throws -> Bitmap {
            var bitmap = bitmap.oriented(orientation)
            if let thumbnail = options.thumbnail {
                let (width, height) = orientedSource ?? reduction.map { ($0.sourceWidth, $0.sourceHeight) } ?? (bitmap.width, bitmap.height)
                let size = thumbnail.outputSize(width: width, height: height)
                if let reduction {
                    bitmap = try bitmap.resized(width: size.width, height: size.height, from: reduction)
                } else if size.width != bitmap.width || size.height != bitmap.height {
                    bitmap = try bitmap.resized(width: size.width, height: size.height)
                }
                // A fill covers the box; what overflows it is cropped, centred, so the thumbnail
                // is exactly the box (or the image, when smaller: never upscaled).
                if case .size(let boxWidth, let boxHeight, .fill) = thumbnail,
                   bitmap.width > max(boxWidth, 1) || bitmap.height > max(boxHeight, 1) {
                    let width = min(bitmap.width, max(boxWidth, 1)), height = min(bitmap.height, max(boxHeight, 1))
                    bitmap = try bitmap.cropped(x: (bitmap.width - width) / 2, y: (bitmap.height - height) / 2, width: width, height: height)
                }
            }
            return bitmap
        }
        guard orientation != .up || options.thumbnail != nil else { return container }
        if var animation = container.animation {
            for index in animation.frames.indices {
                animation.frames[index].bitmap = try finish(animation.frames[index].bitmap)
            }
            container.animation = animation
            container.image = animation.frames[0].bitmap
        } else {
            container.image = try finish(container.image)
        }
        return container
    }
}
