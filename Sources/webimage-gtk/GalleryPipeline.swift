import Foundation
import WebImage

/// The gallery's two pipelines, over one disk cache: thumbnails, decoded at about the cell's
/// size into a memory cache of `--memory-limit`, and full images for the detail view, in a
/// memory cache of their own so that opening a large photo never evicts a screenful of
/// thumbnails.
struct GalleryPipeline {
    let thumbnails: MainActorImageBinder
    let full: MainActorImageBinder
    /// The thumbnails' memory cache first.
    let caches: [ImageCache]
    /// What a cell asks for; the detail view asks the thumbnail cache the same, for its placeholder.
    static let thumbnailOptions: ImageOptions = [.scaleDownLargeImages, .decodeFirstFrameOnly]

    init(options: GalleryOptions) {
        let disk = options.usesDiskCache ? try? DiskCache(name: "webimage-gtk") : nil
        let thumbnailCache = ImageCache(memory: MemoryCache(configuration: .init(costLimit: options.memoryLimit)), disk: disk)
        var http = Self.http
        if options.automation {
            // The moment a download holds its slot and sends its request, for the scroll
            // benchmark to tell requests started before a cell left the screen from those after.
            http.requestModifier = { request in
                say("started \(request.url.absoluteString) \(monotonicNanoseconds())")
                return request
            }
        }
        var thumbnails = ImageManager.Configuration.standard(cache: thumbnailCache, http: http)
        // `.scaleDownLargeImages` then decodes anything larger to about (2 × cell)² pixels:
        // sharp on a double-density screen, and JPEG and WebP are scaled while decoding.
        thumbnails.scaleDownLimit = (2 * options.cellSize) * (2 * options.cellSize)
        let fullCache = ImageCache(memory: MemoryCache(configuration: .init(costLimit: 128 << 20, entryCostLimitFraction: 0.5)), disk: disk)
        self.thumbnails = MainActorImageBinder(manager: ImageManager(configuration: thumbnails))
        full = MainActorImageBinder(manager: ImageManager(configuration: .standard(cache: fullCache, http: Self.http)))
        caches = [thumbnailCache, fullCache]
    }

    /// Newest downloads first: after a fast scroll, the cells on screen now are the last bound.
    private static var http: HTTPImageLoader.Configuration {
        var configuration = HTTPImageLoader.Configuration(acceptedFormats: CoderRegistry.system().decodableFormats)
        configuration.order = .lifo
        return configuration
    }

    /// The thumbnail of `item` if the memory cache holds it (a stand-in for the full image).
    func cachedThumbnail(of item: GalleryItem) -> ImageContainer? {
        thumbnails.manager.cachedResponse(for: ImageRequest(url: item.thumbnail, options: Self.thumbnailOptions))?.container
    }
}
