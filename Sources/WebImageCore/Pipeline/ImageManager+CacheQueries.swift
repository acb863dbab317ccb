extension ImageManager {
    /// Where `request`'s image is cached now, answered without reading a file: ``CacheType/memory``
    /// when its decoded variant (thumbnail, processors and all) is in memory, ``CacheType/disk``
    /// when the disk holds the bytes it would decode (the original, or the variant's processed
    /// bytes with ``ImageRequest/processedDataFormat``), ``CacheType/none`` otherwise. The
    /// request's own cache (``ImageRequest/cache``) is asked when it has one.
    ///
    /// ```swift
    /// if manager.cachedType(for: request) == .none { show(grey) }   // a placeholder until it loads
    /// ```
    public func cachedType(for request: ImageRequest) -> CacheType {
        guard let dataKey = request.dataKey else { return .none }
        let cache = request.cache ?? configuration.cache
        let imageKey = request.imageKey(forDataKey: dataKey)
        if cache.memory.contains(imageKey) { return .memory }
        if cache.existsOnDisk(forKey: dataKey) { return .disk }
        if let processedKey = request.processedDataKey(forDataKey: dataKey), cache.existsOnDisk(forKey: processedKey) { return .disk }
        return .none
    }

    /// Removes what the caches hold for `request`: its variant from memory, and from disk both
    /// the original bytes and the variant's processed bytes. Other variants of the same URL
    /// stay in memory until evicted, but can no longer be made again from disk.
    ///
    /// ```swift
    /// await manager.removeCachedImage(for: ImageRequest(url: avatarURL))   // the user changed it
    /// ```
    public func removeCachedImage(for request: ImageRequest) async {
        guard let dataKey = request.dataKey else { return }
        let cache = request.cache ?? configuration.cache
        cache.memory.removeValue(forKey: request.imageKey(forDataKey: dataKey))
        await cache.disk?.removeEntry(forKey: dataKey)
        if let processedKey = request.processedDataKey(forDataKey: dataKey) { await cache.disk?.removeEntry(forKey: processedKey) }
    }

    /// Empties the manager's memory and disk caches.
    ///
    /// - Throws: ``ImageError/storage(_:)`` when the disk cache's folder cannot be emptied.
    public func removeAllCachedImages() async throws {
        configuration.cache.clearMemory()
        try await configuration.cache.clearDisk()
    }

    /// Waits for the work under way (disk writes included), then shuts every loader down
    /// (the HTTP loader closes its client). Call it once, when the manager is no longer needed:
    /// in tests, and in servers as they stop.
    ///
    /// ```swift
    /// let manager = ImageManager(configuration: configuration)
    /// defer { Task { await manager.shutdown() } }
    /// ```
    public func shutdown() async {
        await waitUntilIdle()
        for loader in configuration.loaders {
            do {
                try await loader.shutdown()
            } catch {
                logger.debug("loader shutdown failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
