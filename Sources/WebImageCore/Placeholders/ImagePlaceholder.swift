/// A placeholder a request carries or the manager remembers: a hash string, decoded on demand.
///
/// The strings are what an application's API sends beside an image URL: ThumbHash in standard
/// base64 (``ThumbHash/base64``), BlurHash as its base-83 string. Nothing is parsed until
/// ``bitmap(maxSide:aspectRatio:)`` is called, so a malformed string costs nothing until then,
/// and then fails with an ``ImageError``.
///
/// ```swift
/// let placeholder = ImagePlaceholder.thumbHash("3OcRJYB4d3h/iIeHeEh3eIhw+j3A")
/// let picture = try placeholder.bitmap()                  // 32 px on its longer side
/// let blurred = try ImagePlaceholder.blurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj")
///     .bitmap(maxSide: 32, aspectRatio: 16.0 / 9.0)       // 32 × 18
/// ```
public enum ImagePlaceholder: Hashable, Sendable {
    /// A ``ThumbHash`` in standard base64.
    case thumbHash(String)
    /// A ``BlurHash`` string.
    case blurHash(String)

    /// The picture: ThumbHash at its own aspect ratio, longer side `maxSide`; BlurHash at
    /// `aspectRatio` (width/height, default 1). Throws .corruptData for a malformed string.
    ///
    /// An rgba8 bitmap in straight alpha (opaque for BlurHash). `maxSide` is clamped to
    /// 1…1024; an `aspectRatio` that is not a positive finite number counts as 1, and the
    /// shorter side is rounded and at least 1.
    ///
    /// - Throws: ``ImageError/corruptData(_:)`` when the string is not a hash of its kind.
    public func bitmap(maxSide: Int = 32, aspectRatio: Double? = nil) throws(ImageError) -> Bitmap {
        switch self {
        case .thumbHash(let base64):
            return try ThumbHash(base64).bitmap(maxSide: maxSide)
        case .blurHash(let string):
            let hash = try BlurHash(string)
            let side = min(max(maxSide, 1), Self.maximumSide)
            var ratio = aspectRatio ?? 1
            if !(ratio.isFinite && ratio > 0) { ratio = 1 }
            if ratio >= 1 {
                return try hash.bitmap(width: side, height: max(1, Int((Double(side) / ratio).rounded())))
            }
            return try hash.bitmap(width: max(1, Int((Double(side) * ratio).rounded())), height: side)
        }
    }

    /// The largest side either hash decodes to: a placeholder is a few dozen pixels that a view
    /// scales up, and the bound keeps the work and the bitmap (4 MiB) small whatever is asked.
    package static let maximumSide = 1024
}
