import Foundation

extension DiskCache {
    /// Limits and behaviour of a ``DiskCache``.
    ///
    /// ```swift
    /// var configuration = DiskCache.Configuration()
    /// configuration.sizeLimit = 2 << 30          // 2 GiB
    /// configuration.ageLimit = .seconds(86_400)  // a day
    /// let cache = try DiskCache(directory: url, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Total bytes of entry files the cache keeps. A write that takes the total over this
        /// evicts least recently used entries until the total is under
        /// `sizeLimit * lowWaterFraction`. Default: 512 MiB.
        public var sizeLimit: Int = 512 << 20
        /// Where eviction stops, as a share of ``sizeLimit``; evicting a little more than
        /// needed keeps every write from paying for an eviction. Default: 0.8.
        public var lowWaterFraction: Double = 0.8
        /// Entries older than this (since they were stored) are never returned, and are removed
        /// as writes happen. `nil` keeps entries until evicted for size. Default: 7 days.
        public var ageLimit: Duration? = .seconds(7 * 24 * 3600)
        /// How often a hit on the same entry is written to the journal, so that other processes
        /// and the next start know it was used. Recency within a process is always exact.
        /// Default: 60 seconds.
        package var accessRecordingInterval: Duration = .seconds(60)
        /// The threads that perform the file I/O of the `async` API. Default: ``BlockingExecutor/io``.
        public var executor: BlockingExecutor = .io
        /// Whether opening the cache starts a background sweep: removing files a
        /// crashed writer left behind and adopting entries the journal missed. Default: `true`.
        public var sweepsOnOpen = true

        /// The current time in milliseconds since 1970. Tests replace it to move time forward
        /// without waiting.
        package var now: @Sendable () -> Int64 = { milliseconds(Date()) }
        /// Called after half of an entry's bytes are written, before the rest and the rename:
        /// lets a test kill a writer at exactly that point.
        package var afterPartialWrite: (@Sendable () -> Void)?

        public init() {}
    }

    /// What the loader knew about an entry's bytes when it stored them: enough to revalidate
    /// with the origin later.
    ///
    /// ```swift
    /// let metadata = DiskCache.Metadata(
    ///     contentType: "image/webp", url: "https://example.com/a.webp",
    ///     etag: "\"abc\"", expiresAt: DiskCache.Metadata.expiration(cacheControl: "max-age=3600"))
    /// ```
    public struct Metadata: Sendable, Hashable {
        /// The MIME type the bytes were served with, or sniffed from them.
        public var contentType: String?
        /// The URL the bytes came from (before any cache-key filtering).
        public var url: String?
        /// The `ETag` the origin sent, for `If-None-Match`.
        public var etag: String?
        /// The `Last-Modified` the origin sent, for `If-Modified-Since`.
        public var lastModified: String?
        /// When the origin said the bytes go stale (from `Cache-Control: max-age`). An entry is
        /// never returned after this moment.
        public var expiresAt: Date?

        public init(contentType: String? = nil, url: String? = nil, etag: String? = nil, lastModified: String? = nil, expiresAt: Date? = nil) {
            self.contentType = contentType
            self.url = url
            self.etag = etag
            self.lastModified = lastModified
            self.expiresAt = expiresAt
        }

        /// The expiry a `Cache-Control` header value implies, counted from `now`: `max-age`
        /// (or `s-maxage`, which wins for shared caches) seconds later; `now` itself for
        /// `no-store`; `nil` when the header sets no lifetime. A lifetime over 2^31 seconds
        /// counts as 2^31 (RFC 9111 §1.2.2): an origin's `max-age=9223372036854775807` would
        /// otherwise give an expiry no cache file can record.
        public static func expiration(cacheControl: String, now: Date = Date()) -> Date? {
            var maxAge: Int?
            var sharedMaxAge: Int?
            for directive in cacheControl.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard let name = parts.first else { continue }
                let value = parts.count > 1 ? Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) : nil
                switch name {
                case "no-store": return now
                case "max-age": maxAge = value.map(lifetime)
                case "s-maxage": sharedMaxAge = value.map(lifetime)
                default: continue
                }
            }
            return (sharedMaxAge ?? maxAge).map { now.addingTimeInterval(TimeInterval($0)) }
        }

        /// Delta-seconds as a cache uses them: negative counts as 0, and anything over 2^31 as 2^31.
        private static func lifetime(_ seconds: Int) -> Int { min(max(0, seconds), 1 << 31) }
    }

    /// A stored entry: the bytes, their metadata, and when they were stored and last used.
    public struct Entry: Sendable {
        /// The cache key the entry was stored under.
        public var key: ImageCacheKey
        public var data: Data
        public var metadata: Metadata
        public var storedAt: Date
        public var lastAccessedAt: Date
        /// Bytes the entry occupies on disk (the data plus the cache's own metadata).
        public var size: Int
    }

    /// Counters since the cache was opened (or since ``DiskCache/resetStatistics()``), and the
    /// current totals.
    public struct Statistics: Sendable, Equatable {
        public var hits = 0
        public var misses = 0
        public var writes = 0
        public var failedWrites = 0
        /// Entries removed to honour the size or age limit.
        public var evictions = 0
        /// Entries dropped because their file vanished, was unreadable or was damaged.
        public var dropped = 0
        /// How many times a miss or a read went to the file system; a miss the in-memory index
        /// answers does not count.
        package var fileSystemReads = 0
        public var count = 0
        public var totalSize = 0
    }

    /// What a sweep found and fixed.
    package struct SweepReport: Sendable, Equatable {
        /// Temporary files of writers that no longer run, removed.
        package var removedTemporaryFiles = 0
        /// Valid entry files the index did not know, added to it.
        package var adoptedFiles = 0
        /// Damaged or foreign files in the entry folders, removed.
        package var removedDamagedFiles = 0
        /// Index entries whose file had vanished, removed.
        package var forgottenEntries = 0
        /// Entries past their age or expiry, removed.
        package var expiredEntries = 0
    }
}

extension DiskCache.Metadata {
    /// Takes what a `304` refreshed (validators and expiry), keeping the rest.
    mutating func merge(_ fresh: DiskCache.Metadata) {
        if let etag = fresh.etag { self.etag = etag }
        if let lastModified = fresh.lastModified { self.lastModified = lastModified }
        if let expiresAt = fresh.expiresAt { self.expiresAt = expiresAt }
        if let contentType = fresh.contentType { self.contentType = contentType }
    }
}
