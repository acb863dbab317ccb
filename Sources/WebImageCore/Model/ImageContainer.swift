import Foundation

/// What a load hands back: the decoded image, the format it was decoded from, and, when asked
/// for, the original bytes.
///
/// For an animated source decoded in full, ``image`` is the first composed frame and
/// ``animation`` holds every frame; otherwise ``animation`` is `nil`.
///
/// ```swift
/// let container = ImageContainer(image: bitmap, format: .png, data: bytes)
/// cache.set(container, forKey: url.absoluteString, cost: container.cost)
/// ```
public struct ImageContainer: Sendable {
    /// The still image, or the first composed frame of an animation.
    public var image: Bitmap
    /// All composed frames, when the source is animated and was decoded in full.
    public var animation: AnimatedImage?
    /// The format the image was decoded from, sniffed from its bytes; `nil` when the image was
    /// made in memory.
    public var format: ImageFormat?
    /// The encoded bytes the image came from, when the caller asked to keep them.
    public var data: Data?
    /// `true` for a progressive preview delivered before the final image.
    public var isPreview: Bool
    /// `false` when the decoder ran out of data before the image's end (a file cut short) or
    /// decoded past damage: the image shows what the file holds, as browsers show it (a JPEG's
    /// missing rows mid-grey, a GIF's missing frames left out), but it is not the whole image.
    /// Whoever keeps images for others (the proxy) must not keep it as if it were.
    public var isComplete = true
    /// The orientation the source stored (EXIF). When the decoder applied it (the default),
    /// the pixels are already upright; see ``ImageDecodingOptions/appliesOrientation``.
    public var orientation: ImageOrientation
    /// The source's ICC colour profile, when it had one and the decode kept its colours as
    /// stored (``ImageDecodingOptions/ColorSpace/preserve``); `nil` after the default conversion
    /// to sRGB. Encoders embed it unless ``ImageEncodingOptions/stripsMetadata``.
    public var iccProfile: Data?
    /// Set by a decoder that averaged blocks of source pixels while decoding (the PNG
    /// thumbnail path): ``image`` holds the block averages, and the registry's finishing resize
    /// (``CoderRegistry/finish(_:options:sourceSize:)``) uses this to place each block where it
    /// lies in the source. `nil` for every other decode, and once the registry has resized.
    package var blockReduction: BlockReduction?

    public init(
        image: Bitmap,
        animation: AnimatedImage? = nil,
        format: ImageFormat? = nil,
        data: Data? = nil,
        isPreview: Bool = false,
        orientation: ImageOrientation = .up,
        iccProfile: Data? = nil
    ) {
        self.image = image
        self.animation = animation
        self.format = format
        self.data = data
        self.isPreview = isPreview
        self.orientation = orientation
        self.iccProfile = iccProfile
    }

    /// Whether this container carries more than one frame.
    public var isAnimated: Bool { (animation?.frames.count ?? 1) > 1 }

    /// Bytes this container keeps alive: pixel storage over all frames (the first frame is
    /// counted once, as ``image`` shares it) plus the retained encoded ``data``. This is the
    /// cost a ``MemoryCache`` is charged.
    public var cost: Int {
        (animation?.cost ?? image.cost) + (data?.count ?? 0)
    }
}

/// How a decoder shrank an image while decoding by averaging blocks of pixels: the image is the
/// `sourceWidth` × `sourceHeight` source averaged over blocks of `x` × `y` pixels, the last block
/// of a row or column narrower, so it is `ceil(sourceWidth / x)` × `ceil(sourceHeight / y)`.
/// Sizes are as the pixels are stored (before orientation).
///
/// ```swift
/// let reduction = BlockReduction(sourceWidth: 5120, sourceHeight: 2880, x: 6, y: 6)  // 854×480
/// // photo: the 854×480 bitmap the decoder reduced by those blocks
/// let thumbnail = try photo.resized(width: 256, height: 144, from: reduction)
/// ```
package struct BlockReduction: Sendable, Hashable {
    package var sourceWidth: Int
    package var sourceHeight: Int
    package var x: Int
    package var y: Int

    package init(sourceWidth: Int, sourceHeight: Int, x: Int, y: Int) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.x = x
        self.y = y
    }

    /// The reduced image's width and height.
    package var reducedSize: (width: Int, height: Int) {
        ((sourceWidth + x - 1) / max(1, x), (sourceHeight + y - 1) / max(1, y))
    }

    /// The same reduction seen after turning the pixels by `orientation` (axes swapped for the
    /// quarter turns).
    package func oriented(_ orientation: ImageOrientation) -> BlockReduction {
        orientation.swapsDimensions ? BlockReduction(sourceWidth: sourceHeight, sourceHeight: sourceWidth, x: y, y: x) : self
    }
}
