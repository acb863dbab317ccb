import Foundation
import Synchronization
import WebImageCodecs
import WebImageCore
import WebImageHTTP

extension ImageManager {
    /// The manager ``shared`` answers until the application sets its own.
    private static let sharedManager = Mutex<ImageManager?>(nil)

    /// The manager most programs want, and the one views bind through by default.
    ///
    /// Until the application replaces it, it is ``init(diskCacheName:memoryLimit:diskLimit:)``
    /// with the defaults: a memory cache, a disk cache in the user's cache directory
    /// (`$XDG_CACHE_HOME/swift-web-image`, or `~/.cache/swift-web-image`; memory alone when that
    /// folder cannot be opened), the HTTP, file and data URL loaders, and the system coders. An
    /// application sets its own once, at start-up, before anything loads:
    ///
    /// ```swift
    /// ImageManager.shared = try ImageManager(diskCacheName: "my-app", memoryLimit: 128 << 20)
    /// let response = try await ImageManager.shared.image(for: URL(string: "https://example.com/a.jpg")!)
    /// ```
    public static var shared: ImageManager {
        get {
            sharedManager.withLock { manager in
                if let manager { return manager }
                let made = ImageManager(configuration: .standard(cache: ImageCache(disk: try? DiskCache(name: "swift-web-image"))))
                manager = made
                return made
            }
        }
        set {
            sharedManager.withLock { $0 = newValue }
        }
    }

    /// A manager for the common case in one line: the system coders, the HTTP, file and data
    /// URL loaders, a memory cache of `memoryLimit` bytes of decoded images, and a disk cache of
    /// `diskLimit` bytes named `diskCacheName` in the user's cache directory (`nil`: memory only).
    ///
    /// ```swift
    /// let manager = try ImageManager(diskCacheName: "my-app", memoryLimit: 256 << 20)
    /// let thumbnail = try await manager.image(for: ImageRequest(url: url, thumbnail: .maxPixelSize(256)))
    /// ```
    ///
    /// - Throws: ``ImageError/storage(_:)`` when the disk cache's folder cannot be created.
    public convenience init(diskCacheName: String? = "swift-web-image", memoryLimit: Int? = nil, diskLimit: Int? = nil) throws {
        let disk = try diskCacheName.map { try DiskCache(name: $0, configuration: .limited(to: diskLimit)) }
        self.init(configuration: .standard(cache: ImageCache(memory: .limited(to: memoryLimit), disk: disk)))
    }

    /// The same, with the disk cache in `diskCacheDirectory`.
    ///
    /// ```swift
    /// let manager = try ImageManager(diskCacheDirectory: URL(fileURLWithPath: "/var/cache/thumbs"), diskLimit: 2 << 30)
    /// ```
    public convenience init(diskCacheDirectory: URL, memoryLimit: Int? = nil, diskLimit: Int? = nil) throws {
        let disk = try DiskCache(directory: diskCacheDirectory, configuration: .limited(to: diskLimit))
        self.init(configuration: .standard(cache: ImageCache(memory: .limited(to: memoryLimit), disk: disk)))
    }
}

extension DiskCache.Configuration {
    /// The defaults, with `sizeLimit` when given.
    fileprivate static func limited(to sizeLimit: Int?) -> DiskCache.Configuration {
        var configuration = DiskCache.Configuration()
        if let sizeLimit { configuration.sizeLimit = sizeLimit }
        return configuration
    }
}

extension MemoryCache where Key == ImageCacheKey, Value == ImageContainer {
    /// A memory cache with the default configuration, or `costLimit` bytes when given.
    fileprivate static func limited(to costLimit: Int?) -> MemoryCache {
        var configuration = MemoryCache.Configuration()
        if let costLimit { configuration.costLimit = costLimit }
        return MemoryCache(configuration: configuration)
    }
}

extension ImageManager.Configuration {
    /// A configuration with the system coders and the HTTP, file and data URL loaders, over
    /// `cache`.
    ///
    /// ```swift
    /// var http = HTTPImageLoader.Configuration()
    /// http.maximumConcurrentDownloads = 12
    /// let disk = try DiskCache(directory: URL(fileURLWithPath: "/var/cache/thumbs"))
    /// let manager = ImageManager(configuration: .standard(cache: ImageCache(disk: disk), http: http))
    /// ```
    public static func standard(
        cache: ImageCache,
        http: HTTPImageLoader.Configuration? = nil,
        registry: CoderRegistry = .system()
    ) -> ImageManager.Configuration {
        let httpConfiguration = (http ?? HTTPImageLoader.Configuration()).accepting(registry.decodableFormats)
        return ImageManager.Configuration(
            cache: cache,
            loaders: [HTTPImageLoader(configuration: httpConfiguration), FileImageLoader(), DataURLImageLoader()],
            registry: registry
        )
    }
}
