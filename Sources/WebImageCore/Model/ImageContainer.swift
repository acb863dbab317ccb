import Foundation

/// What a load hands back: the decoded image, the format it was decoded from, and, when asked
/// for, the original bytes.
///
/// For an animated source decoded in full, ``image`` is the first composed frame and
/// ``animation`` holds every frame; otherwise ``animation`` is `nil`.
///
/// ```swift
/// let container = ImageContainer(image: bitmap, format: .png, data: bytes)
/// memoryCache.set(container, forKey: url, cost: container.cost)
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
    /// The orientation the source stored (EXIF). When the decoder applied it (the default),
    /// the pixels are already upright; see ``ImageDecodingOptions/appliesOrientation``.
    public var orientation: ImageOrientation
    /// The embedded ICC colour profile, when the source had one.
    public var iccProfile: Data?

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
