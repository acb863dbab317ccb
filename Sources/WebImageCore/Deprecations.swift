// The 1.0 spellings that 1.1 replaced, kept until 2.0 so that 1.0 code still compiles (with a
// warning that names the replacement). Each forwards to the API that replaced it.

extension ImageOptions {
    /// SDWebImage's `SDWebImageQueryDiskDataSync`: reads the disk cache on the calling thread.
    @available(*, deprecated, message: "Blocks the caller's thread, which may be the cooperative pool's; the disk cache is read on its own I/O threads without it")
    public static let queryDiskSync = readsDiskOnCallingThread
}

extension ImageManager {
    /// Whether `request`'s image is cached, in memory or on disk.
    @available(*, deprecated, message: "Use cachedType(for:) != .none")
    public func containsCachedImage(for request: ImageRequest) -> Bool {
        cachedType(for: request) != .none
    }
}
