import Foundation
import Logging
import Synchronization

/// Encoded image bytes on disk, by key, with the metadata needed to revalidate them.
///
/// ```swift
/// let cache = try DiskCache(directory: URL(fileURLWithPath: "/var/cache/myapp/images"))
/// try await cache.store(bytes, forKey: ImageCacheKey(url.absoluteString),
///                       metadata: .init(contentType: "image/jpeg", etag: etag))
/// if let cached = await cache.entry(forKey: ImageCacheKey(url.absoluteString)) {
///     print(cached.data.count, cached.metadata.etag ?? "no etag")
/// }
/// ```
///
/// ## How it is laid out
///
/// Each entry is one file, `data/ab/abcdef…` (the SHA-256 of its key in hex, in one of 256
/// folders), holding the bytes followed by the metadata and a checksummed footer. Files are
/// written to a temporary name and renamed into place, so a reader never sees half a file, and a
/// writer killed midway leaves only a temporary file that the next sweep removes. A file whose
/// footer does not match its size is dropped, never returned.
///
/// An in-memory index answers "is it there?" and every miss without touching the file system.
/// It is rebuilt on open from `journal`, an append-only log of puts, removals and accesses that
/// every process using the directory appends to; a shared-memory counter tells a process, with
/// one atomic load, whether another process has appended since it last looked. So the
/// command-line tool and a server can share one directory: writes are atomic renames, eviction
/// and journal compaction take an exclusive `flock`, and each process catches up on the others'
/// changes before answering a miss.
///
/// Limits are enforced as entries are written: a write that takes the total size over
/// ``Configuration/sizeLimit`` evicts the least recently used entries down to the low-water
/// mark, and expired entries are never returned and are removed as writes happen.
///
/// The cache survives a restart, its directory being deleted (it is recreated on the next
/// write), files vanishing (the entry is forgotten), and a full disk (the write throws
/// ``ImageError/storage(_:)`` and the cache keeps serving what it has).
///
/// The `async` methods run their file I/O on ``Configuration/executor`` and never block the
/// caller's executor.
public final class DiskCache: Sendable {
    /// The cache's root directory.
    public let directory: URL
    public let configuration: Configuration

    let root: String
    let dataRoot: String
    let state: Mutex<State>
    private let temporaryCounter = Atomic<Int>(0)
    let logger = Logger(label: "webimage.disk-cache")

    /// Opens (creating when needed) the cache in `directory`.
    ///
    /// Reading the journal is proportional to the number of entries (about 8 MB for 100,000);
    /// when the journal is missing, the index is rebuilt from the files.
    ///
    /// - Throws: ``ImageError/storage(_:)`` when the directory cannot be created or opened.
    public init(directory: URL, configuration: Configuration = .init()) throws {
        self.directory = directory
        self.configuration = configuration
        self.root = directory.standardizedFileURL.path + "/v1"
        self.dataRoot = root + "/data"
        try POSIXFile.makeDirectories(dataRoot)
        let journal = try DiskCacheJournal(root: root)
        var initial = State(journal: journal)
        initial.catchUp(logger: logger)
        let rebuild = journal.created
        state = Mutex(initial)
        if rebuild {
            // No journal: a new directory, or one whose journal was lost. The files are the truth.
            _ = sweepBlocking()
        } else if configuration.sweepsOnOpen {
            configuration.executor.submit { [self] in _ = sweepBlocking() }
        }
    }

    /// A cache in the user's cache directory (`$XDG_CACHE_HOME` or `~/.cache`), in a folder
    /// named `name`.
    public convenience init(name: String, configuration: Configuration = .init()) throws {
        try self.init(directory: Self.userCacheDirectory.appendingPathComponent(name), configuration: configuration)
    }

    /// `$XDG_CACHE_HOME`, or `~/.cache` when it is unset or not absolute.
    public static var userCacheDirectory: URL {
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
    }

    // MARK: - Public API

    /// The entry stored under `key` with its metadata, or `nil`. A hit makes the entry the most
    /// recently used; an expired, vanished or damaged entry is removed and reported as a miss.
    public func entry(forKey key: ImageCacheKey) async -> Entry? {
        try? await configuration.executor.run { self.readEntry(forKey: key) }
    }

    /// The bytes stored under `key`, or `nil`. Cheaper than ``entry(forKey:)``: the metadata
    /// is not decoded.
    public func data(forKey key: ImageCacheKey) async -> Data? {
        try? await configuration.executor.run { self.readData(forKey: key) }
    }

    /// Stores `data` under `key`, replacing what was there, then evicts if the cache is over its
    /// size limit.
    ///
    /// - Throws: ``ImageError/storage(_:)`` when the file cannot be written (a full disk, say:
    ///   the entry is skipped and the cache keeps working); ``ImageError/tooLarge(_:)`` for an
    ///   entry larger than the whole cache.
    public func store(_ data: Data, forKey key: ImageCacheKey, metadata: Metadata = .init()) async throws {
        try await configuration.executor.run { try self.write(data, forKey: key, metadata: metadata) }
    }

    /// Removes the entry for `key`, if any.
    public func removeEntry(forKey key: ImageCacheKey) async {
        _ = try? await configuration.executor.run { self.removeEntry(forKey: key) }
    }

    /// Removes every entry, in every process sharing the directory.
    public func removeAll() async throws {
        try await configuration.executor.run { try self.removeAllEntries() }
    }

    /// Evicts least recently used entries until the total size is at most `size` bytes; with
    /// `0`, empties the cache.
    public func trim(toSize size: Int) async {
        _ = try? await configuration.executor.run { self.evict(toSize: max(0, size), now: self.configuration.now()) }
    }

    /// Reconciles the index with the files: removes temporary files that crashed writers left,
    /// adopts valid files the journal missed, forgets entries whose files vanished, removes
    /// damaged files and expired entries. Proportional to the number of files; runs in the
    /// background when the cache opens (see ``Configuration/sweepsOnOpen``).
    @discardableResult
    package func sweep() async -> SweepReport {
        (try? await configuration.executor.run { self.sweepBlocking() }) ?? SweepReport()
    }

    /// Whether an entry for `key` is in the index. Answered from memory, without touching the
    /// file system; an entry another process stored is seen once this process next reads or
    /// writes.
    public func contains(_ key: ImageCacheKey) -> Bool {
        let digest = DiskCacheDigest(key: key)
        return state.withLock { $0.entries[digest] != nil }
    }

    /// The bytes all entry files occupy, as the index knows them.
    public var totalSize: Int { state.withLock { $0.totalSize } }

    /// The number of entries, as the index knows them.
    public var count: Int { state.withLock { $0.entries.count } }

    public var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.count = state.entries.count
            statistics.totalSize = state.totalSize
            return statistics
        }
    }

    public func resetStatistics() {
        state.withLock { $0.statistics = Statistics() }
    }

    /// The same operations, performed on the calling thread: for the pipeline's own I/O
    /// threads and the tests, where a hop to another thread would only add latency.
    package var blocking: Blocking { Blocking(cache: self) }

    /// Synchronous access to a ``DiskCache``; see `blocking`.
    package struct Blocking: Sendable {
        let cache: DiskCache

        package func entry(forKey key: ImageCacheKey) -> Entry? { cache.readEntry(forKey: key) }
        package func data(forKey key: ImageCacheKey) -> Data? { cache.readData(forKey: key) }
        package func store(_ data: Data, forKey key: ImageCacheKey, metadata: Metadata = .init()) throws {
            try cache.write(data, forKey: key, metadata: metadata)
        }
        package func removeEntry(forKey key: ImageCacheKey) { cache.removeEntry(forKey: key) }
        package func removeAll() throws { try cache.removeAllEntries() }
        package func trim(toSize size: Int) { cache.evict(toSize: max(0, size), now: cache.configuration.now()) }
        @discardableResult package func sweep() -> SweepReport { cache.sweepBlocking() }
    }

    // MARK: - The index

    struct IndexEntry {
        var size: Int
        var storedAt: Int64
        var accessedAt: Int64
        /// The last access time written to the journal.
        var recordedAccess: Int64
        /// 0 when the origin set no expiry.
        var expiresAt: Int64
        /// The payload checksum this process has verified for the entry's file: a later read of
        /// a file with the same checksum in its footer skips the verification (it costs more
        /// than the read itself), a file replaced since is verified anew.
        var verifiedChecksum: UInt64?
    }

    struct State {
        var entries: [DiskCacheDigest: IndexEntry] = [:]
        /// Each source's remembered placeholder (a ThumbHash's bytes), by the digest of the
        /// source's original key; kept apart from `entries` so it outlives the bytes.
        var placeholders: [DiskCacheDigest: [UInt8]] = [:]
        var totalSize = 0
        var journal: DiskCacheJournal
        var statistics = Statistics()
        var lastExpirySweep: Int64 = 0

        init(journal: DiskCacheJournal) {
            self.journal = journal
        }

        mutating func insert(_ digest: DiskCacheDigest, _ entry: IndexEntry) {
            if let old = entries.updateValue(entry, forKey: digest) { totalSize -= old.size }
            totalSize += entry.size
        }

        @discardableResult
        mutating func remove(_ digest: DiskCacheDigest) -> IndexEntry? {
            guard let old = entries.removeValue(forKey: digest) else { return nil }
            totalSize -= old.size
            return old
        }

        mutating func apply(_ record: DiskCacheJournalRecord) {
            switch record.operation {
            case .put:
                let accessed = max(record.accessedAt, entries[record.digest]?.accessedAt ?? 0)
                insert(record.digest, IndexEntry(size: Int(record.size), storedAt: record.storedAt, accessedAt: accessed,
                                                 recordedAccess: record.accessedAt, expiresAt: record.expiresAt))
            case .remove:
                remove(record.digest)
            case .touch:
                if var entry = entries[record.digest], record.accessedAt > entry.accessedAt {
                    entry.accessedAt = record.accessedAt
                    entry.recordedAccess = record.accessedAt
                    entries[record.digest] = entry
                }
            case .placeholder:
                rememberPlaceholder(record.payload, for: record.digest)
            }
        }

        /// Keeps `payload` for `digest`, dropping an arbitrary other placeholder when the index
        /// holds ``DiskCache/placeholderLimit`` already: the index stays bounded whatever the
        /// journal holds.
        mutating func rememberPlaceholder(_ payload: [UInt8], for digest: DiskCacheDigest) {
            if placeholders[digest] == nil, placeholders.count >= DiskCache.placeholderLimit {
                placeholders.remove(at: placeholders.startIndex)
            }
            placeholders[digest] = payload
        }

        /// Applies what other processes (and this one) appended since the last look. Costs one
        /// atomic load when nothing changed.
        mutating func catchUp(logger: Logger) {
            guard journal.hasNews else { return }
            do {
                switch try journal.readNews() {
                case .records(let records):
                    records.forEach { apply($0) }
                case .snapshot(let records):
                    // A compaction replaced the journal: rebuild, keeping our fresher access times.
                    let previous = entries
                    entries.removeAll(keepingCapacity: true)
                    placeholders.removeAll(keepingCapacity: true)
                    totalSize = 0
                    records.forEach { apply($0) }
                    for (digest, old) in previous where old.accessedAt > entries[digest]?.accessedAt ?? .max {
                        entries[digest]?.accessedAt = old.accessedAt
                    }
                }
            } catch {
                logger.warning("could not read the disk cache journal: \(error)")
            }
        }

        /// Appends to the journal; a failure (a full disk) only costs other processes and the
        /// next start this change, which the next sweep repairs.
        mutating func record(_ records: [DiskCacheJournalRecord], logger: Logger) {
            do {
                try journal.append(records)
            } catch {
                logger.warning("could not append to the disk cache journal: \(error)")
            }
        }
    }

    // MARK: - Paths

    func path(for digest: DiskCacheDigest) -> String {
        let name = digest.fileName
        return "\(dataRoot)/\(name.prefix(2))/\(name)"
    }

    func isExpired(storedAt: Int64, expiresAt: Int64, now: Int64) -> Bool {
        if expiresAt != 0 && now >= expiresAt { return true }
        if let limit = configuration.ageLimit, now - storedAt >= limit.milliseconds { return true }
        return false
    }

    // MARK: - Reading

    /// The outcome of reading one entry's file.
    private struct FileRead {
        var buffer: UnsafeMutableRawPointer
        var count: Int
        var footer: DiskCacheEntryFile.Footer
    }

    /// Looks `key` up and reads its file; the caller owns (and must free or wrap) the buffer.
    private func read(_ digest: DiskCacheDigest) -> FileRead? {
        let now = configuration.now()
        let indexed: (size: Int, verifiedChecksum: UInt64?)? = state.withLock { state in
            if state.entries[digest] == nil { state.catchUp(logger: logger) }
            guard let entry = state.entries[digest] else {
                state.statistics.misses += 1
                return nil
            }
            state.statistics.fileSystemReads += 1
            return (entry.size, entry.verifiedChecksum)
        }
        guard let (expectedSize, verifiedChecksum) = indexed else { return nil }

        let path = path(for: digest)
        do {
            guard let (buffer, count) = try readWholeFile(path, expectedSize: expectedSize) else {
                drop(digest, path: path, reason: .vanished)
                return nil
            }
            let whole = UnsafeRawBufferPointer(start: buffer, count: count)
            // The payload is verified once per process and file version: see verifiedChecksum.
            guard let footer = DiskCacheEntryFile.footer(inTail: whole, fileSize: count, digest: digest),
                  footer.payloadChecksum == verifiedChecksum
                    || payloadChecksum(UnsafeRawBufferPointer(rebasing: whole[..<footer.payloadLength])) == footer.payloadChecksum else {
                Platform.deallocate(buffer)
                drop(digest, path: path, reason: .damaged)
                return nil
            }
            if isExpired(storedAt: footer.storedAt, expiresAt: footer.expiresAt, now: now) {
                Platform.deallocate(buffer)
                drop(digest, path: path, reason: .expired)
                return nil
            }
            noteHit(digest, now: now, verifiedChecksum: footer.payloadChecksum)
            return FileRead(buffer: buffer, count: count, footer: footer)
        } catch {
            logger.debug("disk cache read failed: \(error)")
            drop(digest, path: path, reason: .damaged)
            return nil
        }
    }

    /// Reads a whole file in one `read` when its size is what the index says (one byte more is
    /// asked for, to notice a file another process made larger). `nil` when it does not exist.
    private func readWholeFile(_ path: String, expectedSize: Int) throws -> (UnsafeMutableRawPointer, Int)? {
        let fd: Int32
        do {
            fd = try POSIXFile.open(path, .readOnly)
        } catch ImageError.storage(let failure) where failure.code == Platform.ErrorCode.noEntry {
            return nil
        }
        defer { Platform.closeFile(fd) }
        var capacity = expectedSize + 1
        var buffer = Platform.allocate(capacity)!
        var count = try POSIXFile.readFully(fd, into: buffer, count: capacity, at: 0, path: path)
        if count == capacity {
            capacity = try POSIXFile.fileSize(fd, path: path)
            guard capacity <= configuration.sizeLimit, let grown = Platform.reallocate(buffer, capacity) else {
                Platform.deallocate(buffer)
                throw ImageError.tooLarge("\(path) is larger than the cache")
            }
            buffer = grown
            count = try POSIXFile.readFully(fd, into: buffer, count: capacity, at: 0, path: path)
        }
        return (buffer, count)
    }

    private func noteHit(_ digest: DiskCacheDigest, now: Int64, verifiedChecksum: UInt64) {
        let interval = configuration.accessRecordingInterval.milliseconds
        state.withLock { state in
            state.statistics.hits += 1
            guard var entry = state.entries[digest] else { return }
            entry.accessedAt = max(entry.accessedAt, now)
            entry.verifiedChecksum = verifiedChecksum
            if now - entry.recordedAccess >= interval {
                entry.recordedAccess = now
                state.record([.init(operation: .touch, digest: digest, accessedAt: now)], logger: logger)
            }
            state.entries[digest] = entry
        }
    }

    private enum DropReason { case vanished, damaged, expired }

    /// Forgets an entry whose file could not serve a hit, and removes what is left of the file.
    private func drop(_ digest: DiskCacheDigest, path: String, reason: DropReason) {
        if reason != .vanished { POSIXFile.unlinkIfPresent(path) }
        state.withLock { state in
            state.statistics.misses += 1
            if reason == .expired { state.statistics.evictions += 1 } else { state.statistics.dropped += 1 }
            if state.remove(digest) != nil {
                state.record([.init(operation: .remove, digest: digest)], logger: logger)
            }
            if reason == .vanished && state.journal.isOrphaned { reopenAfterDeletion(&state) }
        }
    }

    func readData(forKey key: ImageCacheKey) -> Data? {
        let digest = DiskCacheDigest(key: key)
        guard let read = read(digest) else { return nil }
        return Data(bytesNoCopy: read.buffer, count: read.footer.payloadLength, deallocator: .free)
    }

    func readEntry(forKey key: ImageCacheKey) -> Entry? {
        let digest = DiskCacheDigest(key: key)
        guard let read = read(digest) else { return nil }
        let footer = read.footer
        let metadataBytes = UnsafeRawBufferPointer(start: read.buffer + footer.payloadLength, count: footer.metadataLength)
        let (storedKey, metadata) = DiskCacheEntryFile.decodeMetadata(metadataBytes, expiresAt: footer.expiresAt)
        let accessed = state.withLock { $0.entries[digest]?.accessedAt } ?? configuration.now()
        return Entry(
            key: storedKey ?? key,
            data: Data(bytesNoCopy: read.buffer, count: footer.payloadLength, deallocator: .free),
            metadata: metadata,
            storedAt: date(milliseconds: footer.storedAt),
            lastAccessedAt: date(milliseconds: accessed),
            size: read.count
        )
    }

    // MARK: - Writing

    func write(_ data: Data, forKey key: ImageCacheKey, metadata: Metadata) throws {
        let digest = DiskCacheDigest(key: key)
        let now = configuration.now()
        let checksum = data.withUnsafeBytes(payloadChecksum)
        let trailer = DiskCacheEntryFile.trailer(
            metadata: metadata, key: key, payloadLength: data.count, payloadChecksum: checksum, storedAt: now, digest: digest)
        let size = data.count + trailer.count
        guard size <= configuration.sizeLimit else {
            throw ImageError.tooLarge("an entry of \(size) bytes does not fit a disk cache of \(configuration.sizeLimit) bytes")
        }
        let path = path(for: digest)
        let temporary: String
        do {
            temporary = try writeTemporaryFile(beside: path, data: data, trailer: trailer)
        } catch {
            state.withLock { $0.statistics.failedWrites += 1 }
            throw error
        }
        let expiresAt = metadata.expiresAt.map(milliseconds) ?? 0
        let (overLimit, dueForExpirySweep) = try state.withLock { state in
            // The rename and the index update happen under one lock, as a removal's unlink and
            // index update do: otherwise a removal between the two could leave a file the index
            // does not know (or an index entry without its file).
            do {
                try POSIXFile.rename(temporary, path)
            } catch {
                POSIXFile.unlinkIfPresent(temporary)
                state.statistics.failedWrites += 1
                throw error
            }
            if state.journal.isOrphaned { reopenAfterDeletion(&state) }
            state.catchUp(logger: logger)
            state.insert(digest, IndexEntry(size: size, storedAt: now, accessedAt: now, recordedAccess: now, expiresAt: expiresAt))
            state.record([.init(operation: .put, digest: digest, size: Int64(size), storedAt: now, accessedAt: now, expiresAt: expiresAt)], logger: logger)
            state.statistics.writes += 1
            let dueForExpirySweep = configuration.ageLimit.map { now - state.lastExpirySweep >= min($0.milliseconds / 8, 60_000) } ?? false
            return (state.totalSize > configuration.sizeLimit, dueForExpirySweep)
        }
        if overLimit || dueForExpirySweep {
            evict(toSize: overLimit ? lowWaterMark : nil, now: now)
        }
    }

    var lowWaterMark: Int {
        Int(Double(configuration.sizeLimit) * configuration.lowWaterFraction)
    }

    /// Writes the file under a temporary name in its final folder and returns that name; the
    /// caller renames it into place.
    private func writeTemporaryFile(beside path: String, data: Data, trailer: [UInt8]) throws -> String {
        let folder = String(path[..<path.lastIndex(of: "/")!])
        let temporary = "\(folder)/.tmp.\(Platform.processID).\(temporaryCounter.wrappingAdd(1, ordering: .relaxed).newValue)"
        let fd: Int32
        do {
            fd = try POSIXFile.open(temporary, [.writeOnly, .create, .exclusive])
        } catch ImageError.storage(let failure) where failure.code == Platform.ErrorCode.noEntry {
            // The folder (or the whole directory) was deleted under us: recreate it once.
            try POSIXFile.makeDirectories(folder)
            fd = try POSIXFile.open(temporary, [.writeOnly, .create, .exclusive])
        }
        do {
            try data.withUnsafeBytes { bytes in
                if let interrupt = configuration.afterPartialWrite {
                    let half = bytes.count / 2
                    try POSIXFile.writeAll(fd, UnsafeRawBufferPointer(rebasing: bytes[..<half]), path: temporary)
                    interrupt()
                    try POSIXFile.writeAll(fd, UnsafeRawBufferPointer(rebasing: bytes[half...]), path: temporary)
                } else {
                    try POSIXFile.writeAll(fd, bytes, path: temporary)
                }
            }
            try trailer.withUnsafeBytes { try POSIXFile.writeAll(fd, $0, path: temporary) }
            guard Platform.closeFile(fd) == 0 else { throw POSIXFile.failure("close", temporary) }
            return temporary
        } catch {
            Platform.closeFile(fd)
            POSIXFile.unlinkIfPresent(temporary)
            throw error
        }
    }

    /// The directory was deleted while we had it open: start over on a fresh one.
    private func reopenAfterDeletion(_ state: inout State) {
        do {
            try POSIXFile.makeDirectories(dataRoot)
            try state.journal.reopen()
            state.entries.removeAll()
            state.placeholders.removeAll()
            state.totalSize = 0
            state.catchUp(logger: logger)
            logger.info("disk cache directory \(root) was deleted; recreated it")
        } catch {
            logger.warning("could not recreate the disk cache directory \(root): \(error)")
        }
    }

    // MARK: - Removing

    func removeEntry(forKey key: ImageCacheKey) {
        let digest = DiskCacheDigest(key: key)
        let path = path(for: digest)
        state.withLock { state in
            // Under the lock, like a write's rename (see `write`).
            POSIXFile.unlinkIfPresent(path)
            state.catchUp(logger: logger)
            if state.remove(digest) != nil {
                state.record([.init(operation: .remove, digest: digest)], logger: logger)
            }
        }
    }

    /// Removes expired entries and, when `size` is given, least recently used ones until the
    /// total is at most `size`. Holds the cross-process lock while choosing, so two processes
    /// never both evict for the same overflow.
    func evict(toSize size: Int?, now: Int64) {
        let victims: [DiskCacheDigest] = state.withLock { state in
            do {
                return try state.journal.withExclusiveLock {
                    state.catchUp(logger: logger)
                    var victims: [DiskCacheDigest] = []
                    for (digest, entry) in state.entries where isExpired(storedAt: entry.storedAt, expiresAt: entry.expiresAt, now: now) {
                        victims.append(digest)
                    }
                    victims.forEach { state.remove($0) }
                    let expired = victims.count
                    if let size, state.totalSize > size {
                        let byAge = state.entries.sorted { $0.value.accessedAt < $1.value.accessedAt }
                        for (digest, _) in byAge where state.totalSize > size {
                            state.remove(digest)
                            victims.append(digest)
                        }
                    }
                    state.statistics.evictions += victims.count
                    state.lastExpirySweep = now
                    if !victims.isEmpty {
                        state.record(victims.map { .init(operation: .remove, digest: $0) }, logger: logger)
                    }
                    compactIfWorthIt(&state)
                    logger.debug("disk cache evicted \(victims.count) entries (\(expired) expired)")
                    return victims
                }
            } catch {
                logger.warning("disk cache eviction could not lock the journal: \(error)")
                return []
            }
        }
        // Unlinking outside the locks keeps readers of this process going during a large
        // eviction. Another process re-storing a victim in this window loses its file; its
        // index entry is then dropped on the next read.
        for digest in victims { POSIXFile.unlinkIfPresent(path(for: digest)) }
    }

    /// Rewrites the journal as a snapshot of the index once it has grown well past one.
    /// Call holding the exclusive lock.
    private func compactIfWorthIt(_ state: inout State) {
        guard state.journal.isWorthCompacting(liveEntries: state.entries.count + state.placeholders.count) else { return }
        var snapshot = state.entries.map { digest, entry in
            DiskCacheJournalRecord(operation: .put, digest: digest, size: Int64(entry.size), storedAt: entry.storedAt,
                                   accessedAt: entry.accessedAt, expiresAt: entry.expiresAt)
        }
        snapshot += state.placeholders.map { DiskCacheJournalRecord(placeholder: $1, digest: $0) }
        do {
            try state.journal.compact(to: snapshot)
        } catch {
            logger.warning("could not compact the disk cache journal: \(error)")
        }
    }

    func removeAllEntries() throws {
        // Move the entry folder aside under the lock (one rename), delete it afterwards.
        let trash = "\(root)/trash.\(Platform.processID).\(temporaryCounter.wrappingAdd(1, ordering: .relaxed).newValue)"
        try state.withLock { state in
            try state.journal.withExclusiveLock {
                state.catchUp(logger: logger)
                if Platform.renameFile(dataRoot, trash) != 0 && Platform.errorNumber != Platform.ErrorCode.noEntry { throw POSIXFile.failure("rename", dataRoot) }
                try POSIXFile.makeDirectories(dataRoot)
                state.entries.removeAll()
                state.placeholders.removeAll()
                state.totalSize = 0
                try state.journal.compact(to: [])
            }
        }
        try? FileManager.default.removeItem(atPath: trash)
    }
}
