import Foundation

/// The two cache levels a load consults, in order: decoded images in memory, encoded bytes on
/// disk.
///
/// ```swift
/// let cache = ImageCache(disk: try DiskCache(name: "my-app-images"))
/// let key = ImageCacheKey(url.absoluteString)
/// try await cache.store(container, data: bytes, forKey: key)
/// let registry = CoderRegistry.system()
/// if let (image, source) = await cache.image(forKey: key, decode: { try registry.decode($0) }) {
///     print("\(image.image.width) px from \(source)")   // memory, or disk (then decoded and kept in memory)
/// }
/// ```
///
/// The memory level holds ``ImageContainer``s charged at their ``ImageContainer/cost``; the
/// disk level holds the original bytes, so every variant (thumbnail, processed image) can be
/// derived again without the network.
public final class ImageCache: Sendable {
    /// Decoded images, by key.
    public let memory: MemoryCache<ImageCacheKey, ImageContainer>
    /// Encoded bytes, by key; `nil` for a memory-only cache.
    public let disk: DiskCache?
    /// Each source's remembered placeholder, in memory; the disk level's index keeps them too.
    let placeholders = PlaceholderTable()

    public init(memory: MemoryCache<ImageCacheKey, ImageContainer> = .init(), disk: DiskCache?) {
        self.memory = memory
        self.disk = disk
    }

    /// What a lookup found.
    package enum Lookup: Sendable {
        /// A decoded image from the memory cache.
        case memory(ImageContainer)
        /// Encoded bytes and their metadata from the disk cache, not yet decoded.
        case disk(DiskCache.Entry)
        /// Neither level has the key.
        case none
    }

    /// The decoded image in memory for `key`, answered synchronously: the path that lets a
    /// reused view show a cached image without a placeholder flashing.
    package func memoryImage(forKey key: ImageCacheKey) -> ImageContainer? {
        memory.value(forKey: key)
    }

    /// Looks in memory, then on disk. A disk hit is returned as bytes; see
    /// ``image(forKey:decode:)`` to decode it and keep the result in memory.
    package func lookup(forKey key: ImageCacheKey) async -> Lookup {
        if let image = memory.value(forKey: key) { return .memory(image) }
        if let entry = await disk?.entry(forKey: key) { return .disk(entry) }
        return .none
    }

    /// The image for `key` from memory, or from disk decoded by `decode` and then kept in
    /// memory; `nil` when neither level has it or the bytes on disk do not decode (the entry is
    /// then removed, so a fresh copy is fetched next time).
    public func image(forKey key: ImageCacheKey, decode: @Sendable (Data) throws -> ImageContainer) async -> (ImageContainer, CacheType)? {
        switch await lookup(forKey: key) {
        case .memory(let image):
            return (image, .memory)
        case .disk(let entry):
            guard let image = try? decode(entry.data) else {
                await disk?.removeEntry(forKey: key)
                return nil
            }
            memory.set(image, forKey: key, cost: image.cost)
            return (image, .disk)
        case .none:
            return nil
        }
    }

    /// Stores a decoded image in memory and, when `toDisk` is true and bytes are given, the
    /// bytes on disk.
    ///
    /// - Throws: ``ImageError/storage(_:)`` when the disk write fails; the memory level is
    ///   updated regardless.
    public func store(
        _ image: ImageContainer?,
        data: Data? = nil,
        forKey key: ImageCacheKey,
        toDisk: Bool = true,
        metadata: DiskCache.Metadata = .init()
    ) async throws {
        if let image { memory.set(image, forKey: key, cost: image.cost) }
        if toDisk, let data, let disk {
            try await disk.store(data, forKey: key, metadata: metadata)
        }
    }

    /// Removes `key` from memory and, unless told otherwise, from disk.
    public func removeImage(forKey key: ImageCacheKey, fromDisk: Bool = true) async {
        memory.removeValue(forKey: key)
        if fromDisk { await disk?.removeEntry(forKey: key) }
    }

    /// Whether the disk level has `key`, answered from its in-memory index.
    package func existsOnDisk(forKey key: ImageCacheKey) -> Bool {
        disk?.contains(key) ?? false
    }

    // MARK: - Placeholders

    /// The placeholder remembered for the source of `key` (any variant of it): from memory, else
    /// from the disk level's index (no file read), then kept in memory.
    package func placeholder(forKey key: ImageCacheKey) -> ImagePlaceholder? {
        if let known = placeholders.placeholder(forSource: key.source) { return known }
        guard let bytes = disk?.placeholderBytes(forKey: key), let hash = try? ThumbHash(bytes: bytes) else { return nil }
        let placeholder = ImagePlaceholder.thumbHash(hash.base64)
        placeholders.set(placeholder, forSource: key.source)
        return placeholder
    }

    /// Remembers `hash` for the source of `key`, in memory and in the disk level's index.
    package func rememberPlaceholder(_ hash: ThumbHash, forKey key: ImageCacheKey) {
        placeholders.set(.thumbHash(hash.base64), forSource: key.source)
        disk?.rememberPlaceholderBytes(hash.bytes, forKey: key)
    }

    /// Empties the memory level.
    public func clearMemory() {
        memory.removeAll()
    }

    /// Empties the disk level, and forgets the placeholders it remembered.
    public func clearDisk() async throws {
        placeholders.removeAll()
        try await disk?.removeAll()
    }

    /// Sheds memory down to `cost` and, when given, disk down to `diskSize` bytes.
    public func trim(memoryToCost cost: Int, diskToSize diskSize: Int? = nil) async {
        memory.trim(toCost: cost)
        if let diskSize { await disk?.trim(toSize: diskSize) }
    }

    /// Bytes of the disk level's files.
    package var diskSize: Int { disk?.totalSize ?? 0 }
    /// Entries on disk.
    package var diskCount: Int { disk?.count ?? 0 }
    /// Cost of the images in memory.
    package var memoryCost: Int { memory.totalCost }
    /// Images in memory.
    package var memoryCount: Int { memory.count }
}
