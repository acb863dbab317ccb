import Foundation

/// What to load: a URL and how to load, decode, process and cache it.
///
/// ```swift
/// var request = ImageRequest(url: URL(string: "https://example.com/a@2x.jpg")!)
/// request.thumbnail = .maxPixelSize(256)
/// request.processors = [ImageProcessors.Circle()]
/// request.cacheKeyFilter = { url in url.absoluteString.replacingOccurrences(of: #"\?.*"#, with: "", options: .regularExpression) }
/// let response = try await manager.image(for: request)
/// ```
public struct ImageRequest: Sendable {
    /// Where the image is; `nil` fails the load with ``ImageError/invalidURL(_:)``.
    public var url: URL?
    public var options: ImageOptions
    /// The priority the load starts at; ``ImageOptions/lowPriority`` and
    /// ``ImageOptions/highPriority`` override it.
    public var priority: ImagePriority
    /// Steps applied in order after decoding. Their identifiers enter the cache key.
    public var processors: [any ImageProcessor]
    /// Decode to at most this size (JPEG and WebP never materialise the full bitmap). Enters
    /// the cache key.
    public var thumbnail: ImageDecodingOptions.Thumbnail?
    /// For a video source, the time of the poster frame in seconds (``ImageDecodingOptions/videoTime``);
    /// `nil` (the default) keeps the manager's, the first frame. Enters the cache key.
    ///
    /// ```swift
    /// var request = ImageRequest(url: URL(string: "https://example.com/talk.mp4")!, thumbnail: .maxPixelSize(300))
    /// request.videoTime = 42
    /// let poster = try await manager.image(for: request)
    /// ```
    public var videoTime: TimeInterval?
    /// For a video source, an animated preview from ``videoTime`` instead of the poster
    /// (``ImageDecodingOptions/videoClip``); `nil` (the default) keeps the manager's, the poster.
    /// Enters the cache key.
    ///
    /// ```swift
    /// var request = ImageRequest(url: URL(string: "https://example.com/talk.mp4")!, thumbnail: .maxPixelSize(300))
    /// request.videoClip = VideoClip(duration: 2, framesPerSecond: 8)
    /// let clip = try await manager.image(for: request)
    /// print(clip.container.animation?.frames.count ?? 1)   // 16
    /// ```
    public var videoClip: VideoClip?
    /// For a PDF source, the page to draw, counting from 1 (``ImageDecodingOptions/page``); `nil`
    /// (the default) keeps the manager's, the first page. Enters the cache key.
    public var page: Int?
    /// The scale the image is meant for (2 for `@2x` artwork). `nil` reads `@2x` / `@3x` from the
    /// file name, as SDWebImage does, and is 1 otherwise. Carried to ``ImageResponse/scale``.
    public var scale: Double?
    /// Header fields sent with this request (HTTP loaders).
    public var headers: [String: String]
    /// Changes the loader's request just before it is sent: sign it, add a token.
    public var requestModifier: (@Sendable (ImageLoadRequest) async throws -> ImageLoadRequest)?
    /// How a failed download of this request is retried, in place of the loader's policy
    /// (``RetryPolicy``; ``RetryPolicy/never`` for one attempt); `nil` (the default) keeps the
    /// loader's. A download shared by several requests follows the policy of the one that
    /// started it.
    ///
    /// ```swift
    /// var request = ImageRequest(url: url)
    /// request.retryPolicy = RetryPolicy(maximumAttempts: 5)
    /// let response = try await manager.image(for: request)
    /// ```
    public var retryPolicy: RetryPolicy?
    /// Turns the URL into the cache key, for instance to drop signing parameters that change
    /// on every request. The default key is the absolute URL.
    public var cacheKeyFilter: (@Sendable (URL) -> String)?
    /// A cache to use instead of the manager's.
    public var cache: ImageCache?
    /// A loader to use instead of the manager's. Requests with their own loader do not share
    /// downloads with other requests.
    public var loader: (any ImageLoader)?
    /// Also keep the processed image's bytes on disk, encoded as this format, so another process
    /// (or the next run) gets the variant without decoding the original again. Default `nil`:
    /// only the original bytes go to disk.
    public var processedDataFormat: ImageFormat?
    /// A placeholder the caller already has for this image (a hash its own API sent beside the
    /// URL), shown while the image loads by a binding given no placeholder of its own.
    ///
    /// ```swift
    /// let request = ImageRequest(url: post.imageURL, placeholder: .thumbHash(post.imageThumbHash))
    /// view.setImage(with: request, using: binder)   // the hash's picture at once, then the image
    /// ```
    public var placeholder: ImagePlaceholder?

    public init(
        url: URL?,
        options: ImageOptions = [],
        priority: ImagePriority = .normal,
        processors: [any ImageProcessor] = [],
        thumbnail: ImageDecodingOptions.Thumbnail? = nil,
        placeholder: ImagePlaceholder? = nil
    ) {
        self.url = url
        self.options = options
        self.priority = priority
        self.processors = processors
        self.thumbnail = thumbnail
        self.placeholder = placeholder
        self.videoTime = nil
        self.videoClip = nil
        self.page = nil
        self.scale = nil
        self.headers = [:]
        self.retryPolicy = nil
        self.cacheKeyFilter = nil
        self.cache = nil
        self.loader = nil
        self.processedDataFormat = nil
    }

    /// The priority the load starts at, after the options.
    package var effectivePriority: ImagePriority {
        if options.contains(.highPriority) { return .high }
        if options.contains(.lowPriority) { return .low }
        return priority
    }

    /// The key of the original bytes: the URL after ``cacheKeyFilter``.
    package var dataKey: ImageCacheKey? {
        guard let url else { return nil }
        return ImageCacheKey(cacheKeyFilter?(url) ?? url.absoluteString)
    }

    /// The key of the decoded, processed image in memory: the data key's source with what
    /// changes the pixels (thumbnail, first frame only, scale-down, video time, page, processors) as its
    /// variant.
    package var imageKey: ImageCacheKey? {
        dataKey.map(imageKey(forDataKey:))
    }

    func imageKey(forDataKey dataKey: ImageCacheKey) -> ImageCacheKey {
        ImageCacheKey(source: dataKey.source, variant: decodeVariantParts + processors.map(\.identifier))
    }

    /// The key of the processed bytes on disk (with ``processedDataFormat``): the image key and
    /// the format, so that they never replace the original's bytes, even with no processors.
    func processedDataKey(forDataKey dataKey: ImageCacheKey) -> ImageCacheKey? {
        guard let processedDataFormat else { return nil }
        var key = imageKey(forDataKey: dataKey)
        key.encoding = processedDataFormat
        return key
    }

    /// The key of the decode stage's shared work: what changes the decode.
    func decodeKey(forDataKey dataKey: ImageCacheKey) -> ImageCacheKey {
        ImageCacheKey(source: dataKey.source, variant: decodeVariantParts)
    }

    private var decodeVariantParts: [String] {
        var parts: [String] = []
        if let thumbnail { parts.append(thumbnail.cacheIdentifier) }
        if options.contains(.decodeFirstFrameOnly) { parts.append("first-frame") }
        if options.contains(.scaleDownLargeImages) { parts.append("scale-down") }
        if let videoTime { parts.append("t=\(videoTime)") }
        if let videoClip { parts.append(videoClip.cacheIdentifier) }
        if let page { parts.append("page=\(page)") }
        return parts
    }

    /// The scale from ``scale``, else from an `@2x` / `@3x` suffix of the file name, else 1.
    package var resolvedScale: Double {
        if let scale { return scale }
        guard let url else { return 1 }
        return Self.scale(fromURLString: url.absoluteString)
    }

    /// `@2x` / `@3x` at the end of the last path component, before its extension. Read from
    /// the URL's string (no URL parsing): it is on every memory hit's path.
    static func scale(fromURLString string: String) -> Double {
        let bytes = string.utf8
        var end = bytes.endIndex
        if let query = bytes.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) { end = query }
        var start = bytes.startIndex
        if let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) { start = bytes.index(after: slash) }
        var name = bytes[start..<end]
        if let dot = name.lastIndex(of: UInt8(ascii: ".")) { name = name[..<dot] }
        guard name.count >= 3 else { return 1 }
        let suffix = name.suffix(3)
        guard suffix.first == UInt8(ascii: "@"), suffix.last == UInt8(ascii: "x") else { return 1 }
        switch suffix[suffix.index(after: suffix.startIndex)] {
        case UInt8(ascii: "2"): return 2
        case UInt8(ascii: "3"): return 3
        default: return 1
        }
    }
}

extension ImageDecodingOptions.Thumbnail {
    /// A stable string for cache keys.
    var cacheIdentifier: String {
        switch self {
        case .maxPixelSize(let side): "thumb(\(side))"
        case .size(let width, let height, let mode): "thumb(\(width)x\(height),\(mode.rawValue))"
        }
    }
}
