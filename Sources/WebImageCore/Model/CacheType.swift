/// Where a loaded image came from.
public enum CacheType: String, Sendable, Hashable, CustomStringConvertible {
    /// Loaded from its source (the network, a file, a data URL): no cache had it.
    case none
    /// Served from the memory cache, already decoded.
    case memory
    /// Read from the disk cache and decoded.
    case disk

    public var description: String { rawValue }
}
