import Foundation
import WebImageCodecs
import WebImageCore
import WebImageHTTP

extension ImageManager {
    /// The manager most programs want: a memory cache, a disk cache in the user's cache
    /// directory (`$XDG_CACHE_HOME/swift-web-image`, or `~/.cache/swift-web-image`), the HTTP,
    /// file and data URL loaders, and the system coders (JPEG, PNG/APNG, GIF, WebP).
    ///
    /// When the cache directory cannot be opened, the manager runs with the memory cache alone.
    ///
    /// ```swift
    /// let response = try await ImageManager.shared.image(for: ImageRequest(url: url))
    /// ```
    public static let shared: ImageManager = {
        let disk = try? DiskCache(name: "swift-web-image")
        return ImageManager(configuration: .standard(cache: ImageCache(disk: disk)))
    }()
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
        let httpConfiguration = http ?? HTTPImageLoader.Configuration(acceptedFormats: registry.decodableFormats)
        return ImageManager.Configuration(
            cache: cache,
            loaders: [HTTPImageLoader(configuration: httpConfiguration), FileImageLoader(), DataURLImageLoader()],
            registry: registry
        )
    }
}
