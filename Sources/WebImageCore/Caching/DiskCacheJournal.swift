import Atomics

/// One change to the disk cache's index, as 80 bytes in the journal.
///
/// Layout (little-endian): magic u32 · operation u8 · reserved ×3 · size i64 · stored-at ms i64 ·
/// accessed-at ms i64 · expires-at ms i64 · digest ×32 · checksum u64 (FNV-1a of the 72 before).
/// A placeholder record puts its payload's length in the first reserved byte and the payload
/// (at most 32 bytes) where the four times are.
struct DiskCacheJournalRecord: Equatable {
    enum Operation: UInt8 {
        /// An entry's file was stored; `remove` and `touch` name an entry too.
        case put = 1, remove = 2, touch = 3
        /// The ThumbHash of the source whose original bytes the digest names, remembered apart
        /// from the entry: it outlives the bytes' eviction.
        case placeholder = 4
    }

    /// The most bytes a placeholder record carries.
    static let placeholderCapacity = 32

    static let size = 80
    static let magic: UInt32 = 0x314A_4957  // "WIJ1"

    var operation: Operation
    var digest: DiskCacheDigest
    var size: Int64 = 0
    var storedAt: Int64 = 0
    var accessedAt: Int64 = 0
    var expiresAt: Int64 = 0
    /// A placeholder record's payload; empty for the others.
    var payload: [UInt8] = []

    func write(to raw: UnsafeMutableRawPointer) {
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: Self.size)
        raw.storeBytes(of: Self.magic.littleEndian, toByteOffset: 0, as: UInt32.self)
        raw.storeBytes(of: operation.rawValue, toByteOffset: 4, as: UInt8.self)
        if operation == .placeholder {
            let count = min(payload.count, Self.placeholderCapacity)
            raw.storeBytes(of: UInt8(count), toByteOffset: 5, as: UInt8.self)
            payload.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { (raw + 8).copyMemory(from: base, byteCount: count) }
            }
        } else {
            raw.storeBytes(of: size.littleEndian, toByteOffset: 8, as: Int64.self)
            raw.storeBytes(of: storedAt.littleEndian, toByteOffset: 16, as: Int64.self)
            raw.storeBytes(of: accessedAt.littleEndian, toByteOffset: 24, as: Int64.self)
            raw.storeBytes(of: expiresAt.littleEndian, toByteOffset: 32, as: Int64.self)
        }
        digest.write(to: raw + 40)
        let checksum = fnv1a64(UnsafeRawBufferPointer(start: raw, count: 72))
        raw.storeBytes(of: checksum.littleEndian, toByteOffset: 72, as: UInt64.self)
    }

    /// Decodes the record at `offset`, or `nil` when its magic, checksum or operation is wrong.
    init?(from raw: UnsafeRawBufferPointer, at offset: Int) {
        guard offset + Self.size <= raw.count else { return nil }
        let record = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + Self.size)])
        func load<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
            T(littleEndian: record.loadUnaligned(fromByteOffset: at, as: T.self))
        }
        guard load(0, UInt32.self) == Self.magic,
              load(72, UInt64.self) == fnv1a64(UnsafeRawBufferPointer(rebasing: record[0..<72])),
              let operation = Operation(rawValue: record[4])
        else { return nil }
        self.operation = operation
        digest = DiskCacheDigest(words: UnsafeRawBufferPointer(rebasing: record[40..<72]))
        if operation == .placeholder {
            let count = Int(record[5])
            guard count > 0, count <= Self.placeholderCapacity else { return nil }
            payload = Array(record[8..<(8 + count)])
            return
        }
        size = load(8, Int64.self)
        storedAt = load(16, Int64.self)
        accessedAt = load(24, Int64.self)
        expiresAt = load(32, Int64.self)
    }

    /// A placeholder record: `payload` (at most ``placeholderCapacity`` bytes) for `digest`.
    init(placeholder payload: [UInt8], digest: DiskCacheDigest) {
        self.operation = .placeholder
        self.digest = digest
        self.payload = payload
    }

    init(operation: Operation, digest: DiskCacheDigest, size: Int64 = 0, storedAt: Int64 = 0, accessedAt: Int64 = 0, expiresAt: Int64 = 0) {
        self.operation = operation
        self.digest = digest
        self.size = size
        self.storedAt = storedAt
        self.accessedAt = accessedAt
        self.expiresAt = expiresAt
    }
}

/// The append-only log of index changes that every process sharing a cache directory reads,
/// plus a small shared-memory page that tells a process, with one atomic load, whether anyone
/// has appended since it last looked.
///
/// Files in the cache's root: `journal` (records, appended with `O_APPEND` so concurrent
/// appends never interleave) and `shared` (one page, `mmap`ed by every process: a generation
/// counter bumped after each append, and an epoch bumped when the journal is replaced by a
/// compacted snapshot). Writers hold a shared `flock` on `shared` while appending; compaction,
/// eviction and clearing hold it exclusively, so they see a journal nobody is appending to.
///
/// Not thread-safe: the disk cache uses it only while holding its own lock, so at most one
/// thread per process touches the file descriptors and `flock` state.
final class DiskCacheJournal {
    let root: String
    private var journalPath: String { root + "/journal" }
    private var sharedPath: String { root + "/shared" }
    private static let pageSize = 4096
    private static let sharedMagic: UInt64 = 0x3153_4957_0000_0001

    private var journalDescriptor: Int32 = -1
    private var sharedDescriptor: Int32 = -1
    private var page: UnsafeMutableRawPointer?
    private var lockDepth = 0

    /// The epoch of the journal file this process has open.
    private var openEpoch: UInt64 = 0
    /// The epoch of the journal this process's index reflects.
    private var indexEpoch: UInt64 = 0
    /// How far this process has read and applied the journal.
    private(set) var readOffset = 0
    private var seenGeneration: UInt64 = 0
    /// Bytes read past the last whole valid record, or garbage skipped: compaction cleans up.
    private(set) var sawDamage = false

    /// Opens the journal in `root` (creating its files when missing). `created` tells whether
    /// the journal file did not exist before, so the caller rebuilds the index from the files.
    init(root: String) throws {
        self.root = root
        try open()
    }

    deinit { close() }

    private(set) var created = false

    private func open() throws {
        close()
        sharedDescriptor = try POSIXFile.open(sharedPath, [.readWrite, .create])
        try withExclusiveLock {
            if try POSIXFile.fileSize(sharedDescriptor, path: sharedPath) < Self.pageSize {
                guard Platform.truncateFile(sharedDescriptor, to: Self.pageSize) == 0 else { throw POSIXFile.failure("truncate", sharedPath) }
            }
            guard let mapped = Platform.mapShared(sharedDescriptor, length: Self.pageSize) else { throw POSIXFile.failure("mmap", sharedPath) }
            page = mapped
            if mapped.load(as: UInt64.self) != Self.sharedMagic {
                mapped.initializeMemory(as: UInt8.self, repeating: 0, count: Self.pageSize)
                mapped.storeBytes(of: Self.sharedMagic, as: UInt64.self)
            }
            let existed = Platform.fileExists(journalPath)
            journalDescriptor = try POSIXFile.open(journalPath, [.readWrite, .append, .create])
            created = !existed
            openEpoch = epochCounter.load(ordering: .acquiring)
            indexEpoch = openEpoch
        }
        readOffset = 0
        seenGeneration = 0
    }

    private func close() {
        if let page { Platform.unmap(page, length: Self.pageSize) }
        page = nil
        if journalDescriptor >= 0 { Platform.closeFile(journalDescriptor) }
        if sharedDescriptor >= 0 { Platform.closeFile(sharedDescriptor) }
        journalDescriptor = -1
        sharedDescriptor = -1
        lockDepth = 0
    }

    private var epochCounter: UnsafeAtomic<UInt64> {
        UnsafeAtomic(at: (page! + 8).assumingMemoryBound(to: UInt64.AtomicRepresentation.self))
    }

    private var generationCounter: UnsafeAtomic<UInt64> {
        UnsafeAtomic(at: (page! + 16).assumingMemoryBound(to: UInt64.AtomicRepresentation.self))
    }

    /// Whether another process (or this one) has changed the journal since the last read: one
    /// atomic load from shared memory, no system call.
    var hasNews: Bool {
        generationCounter.load(ordering: .acquiring) != seenGeneration || epochCounter.load(ordering: .acquiring) != indexEpoch
    }

    /// Whether the cache directory was deleted under us (our files are unlinked).
    var isOrphaned: Bool {
        guard let info = Platform.status(ofDescriptor: journalDescriptor) else { return true }
        return info.linkCount == 0
    }

    /// Reopens the files after the directory was deleted and recreated.
    func reopen() throws {
        try open()
    }

    enum Update {
        /// Apply these records on top of the current index.
        case records([DiskCacheJournalRecord])
        /// The journal was replaced: rebuild the index from these records alone.
        case snapshot([DiskCacheJournalRecord])
    }

    /// Reads what was appended since the last call (or everything, after a compaction).
    func readNews() throws -> Update {
        let generation = generationCounter.load(ordering: .acquiring)
        let currentEpoch = epochCounter.load(ordering: .acquiring)
        var isSnapshot = false
        if currentEpoch != indexEpoch {
            if currentEpoch != openEpoch { try reopenJournal(epoch: currentEpoch) }
            readOffset = 0
            indexEpoch = currentEpoch
            isSnapshot = true
        }
        let records = try readRecords()
        seenGeneration = generation
        return isSnapshot ? .snapshot(records) : .records(records)
    }

    /// Opens the journal file now at the path, after a compaction replaced the one we had.
    private func reopenJournal(epoch: UInt64) throws {
        let fd = try POSIXFile.open(journalPath, [.readWrite, .append, .create])
        Platform.closeFile(journalDescriptor)
        journalDescriptor = fd
        openEpoch = epoch
    }

    /// Every whole, valid record from `readOffset` to the end of the file. A torn record at the
    /// very end (an append in progress) is left for next time; garbage in the middle is skipped
    /// by searching for the next valid record.
    private func readRecords() throws -> [DiskCacheJournalRecord] {
        let end = try POSIXFile.fileSize(journalDescriptor, path: journalPath)
        guard end > readOffset else { return [] }
        let length = end - readOffset
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 8)
        defer { buffer.deallocate() }
        let count = try POSIXFile.readFully(journalDescriptor, into: buffer.baseAddress!, count: length, at: readOffset, path: journalPath)
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
        var records: [DiskCacheJournalRecord] = []
        records.reserveCapacity(count / DiskCacheJournalRecord.size)
        var offset = 0
        var consumed = 0
        while offset + DiskCacheJournalRecord.size <= count {
            if let record = DiskCacheJournalRecord(from: bytes, at: offset) {
                records.append(record)
                offset += DiskCacheJournalRecord.size
                consumed = offset
            } else {
                sawDamage = true
                offset += 1
            }
        }
        // Skipped garbage with no valid record after it stays unconsumed only while it could
        // still be a record being written; a longer run is damage to step over.
        if count - consumed >= DiskCacheJournalRecord.size { consumed = offset }
        readOffset += consumed
        return records
    }

    /// Appends records with one `write`, holding the shared lock (or the exclusive one, if the
    /// caller holds it).
    func append(_ records: [DiskCacheJournalRecord]) throws {
        guard !records.isEmpty else { return }
        let length = records.count * DiskCacheJournalRecord.size
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 8)
        defer { buffer.deallocate() }
        for (index, record) in records.enumerated() {
            record.write(to: buffer.baseAddress! + index * DiskCacheJournalRecord.size)
        }
        let write = {
            try POSIXFile.writeAll(self.journalDescriptor, UnsafeRawBufferPointer(buffer), path: self.journalPath)
            self.generationCounter.wrappingIncrement(ordering: .releasing)
        }
        try lock(.shared)
        defer { unlock() }
        // A compaction may have replaced the file since we opened it: appending to the old one
        // would be lost. Under the lock no compaction can start, so the reopened file is current;
        // the index catches up on its next read (the epoch differs), our record included.
        let currentEpoch = epochCounter.load(ordering: .acquiring)
        if currentEpoch != openEpoch { try reopenJournal(epoch: currentEpoch) }
        try write()
    }

    /// Runs `body` holding the exclusive lock that keeps every other process from appending.
    func withExclusiveLock<T>(_ body: () throws -> T) throws -> T {
        try lock(.exclusive)
        defer { unlock() }
        return try body()
    }

    /// Replaces the journal with `records` (a snapshot of the index) and bumps the epoch so
    /// every process rebuilds from it. Call while holding the exclusive lock.
    func compact(to records: [DiskCacheJournalRecord]) throws {
        precondition(lockDepth > 0, "compaction needs the exclusive lock")
        let temporary = journalPath + ".compact.\(Platform.processID)"
        let fd = try POSIXFile.open(temporary, [.writeOnly, .create, .truncate])
        do {
            let length = records.count * DiskCacheJournalRecord.size
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(length, 1), alignment: 8)
            defer { buffer.deallocate() }
            for (index, record) in records.enumerated() {
                record.write(to: buffer.baseAddress! + index * DiskCacheJournalRecord.size)
            }
            try POSIXFile.writeAll(fd, UnsafeRawBufferPointer(rebasing: buffer[0..<length]), path: temporary)
            Platform.closeFile(fd)
            try POSIXFile.rename(temporary, journalPath)
        } catch {
            Platform.closeFile(fd)
            POSIXFile.unlinkIfPresent(temporary)
            throw error
        }
        let newEpoch = epochCounter.wrappingIncrementThenLoad(ordering: .acquiringAndReleasing)
        try reopenJournal(epoch: newEpoch)
        indexEpoch = newEpoch
        readOffset = records.count * DiskCacheJournalRecord.size
        seenGeneration = generationCounter.load(ordering: .acquiring)
        sawDamage = false
    }

    /// Journal bytes past what a snapshot of `liveEntries` would need: when large, compact.
    func isWorthCompacting(liveEntries: Int) -> Bool {
        sawDamage || readOffset > (2 * liveEntries + 4096) * DiskCacheJournalRecord.size
    }

    private func lock(_ operation: Platform.FileLock) throws {
        if lockDepth > 0 {
            lockDepth += 1
            return
        }
        while Platform.lockFile(sharedDescriptor, operation) != 0 {
            if Platform.errorNumber != Platform.ErrorCode.interrupted { throw POSIXFile.failure("lock", sharedPath) }
        }
        lockDepth = 1
    }

    private func unlock() {
        lockDepth -= 1
        if lockDepth == 0 { Platform.lockFile(sharedDescriptor, .unlock) }
    }
}
