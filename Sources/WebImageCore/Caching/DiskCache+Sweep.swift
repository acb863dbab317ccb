import Foundation
import Logging
import Synchronization

/// The sweep: expired entries and abandoned temporary files removed, files another process
/// wrote adopted into the index.
extension DiskCache {
    func sweepBlocking() -> SweepReport {
        var report = SweepReport()
        let now = configuration.now()
        let known = state.withLock { state in
            state.catchUp(logger: logger)
            return Set(state.entries.keys)
        }
        removeAbandonedRootFiles(now: now, report: &report)
        let (adopted, seen) = scanDataFiles(known: known, now: now, report: &report)
        state.withLock { state in
            _ = try? state.journal.withExclusiveLock {
                state.catchUp(logger: logger)
                var changes: [DiskCacheJournalRecord] = []
                for record in adopted where state.entries[record.digest] == nil {
                    state.apply(record)
                    changes.append(record)
                    report.adoptedFiles += 1
                }
                // Entries known before the scan whose file was not found, and still not there.
                for digest in known.subtracting(seen) where state.entries[digest] != nil && !Platform.fileExists(path(for: digest)) {
                    state.remove(digest)
                    changes.append(.init(operation: .remove, digest: digest))
                    report.forgottenEntries += 1
                }
                state.record(changes, logger: logger)
            }
        }
        let before = state.withLock { $0.statistics.evictions }
        evict(toSize: state.withLock { $0.totalSize > configuration.sizeLimit } ? lowWaterMark : nil, now: now)
        report.expiredEntries = state.withLock { $0.statistics.evictions } - before
        return report
    }

    /// What an interrupted removeAll (a trash folder) or compaction left in the root, once the
    /// process that left it is gone.
    private func removeAbandonedRootFiles(now: Int64, report: inout SweepReport) {
        for name in POSIXFile.directoryEntries(root) where name.hasPrefix("trash.") || name.hasPrefix("journal.compact.") {
            let path = "\(root)/\(name)"
            if isAbandonedTemporaryFile(name, path: path, now: now, allowDirectories: true) {
                try? FileManager.default.removeItem(atPath: path)
                report.removedTemporaryFiles += 1
            }
        }
    }

    /// The scan of the data folders, before the index is locked: abandoned temporary files and
    /// damaged entry files are removed on the way; returns a put record for each valid file the
    /// index did not know (`known`, read before the scan) and every digest found.
    private func scanDataFiles(
        known: Set<DiskCacheDigest>, now: Int64, report: inout SweepReport
    ) -> (adopted: [DiskCacheJournalRecord], seen: Set<DiskCacheDigest>) {
        var adopted: [DiskCacheJournalRecord] = []
        var seen = Set<DiskCacheDigest>()
        for shard in POSIXFile.directoryEntries(dataRoot) {
            let folder = "\(dataRoot)/\(shard)"
            for name in POSIXFile.directoryEntries(folder) {
                let path = "\(folder)/\(name)"
                if name.hasPrefix(".tmp.") {
                    if isAbandonedTemporaryFile(name, path: path, now: now) {
                        POSIXFile.unlinkIfPresent(path)
                        report.removedTemporaryFiles += 1
                    }
                    continue
                }
                guard let digest = DiskCacheDigest(fileName: name), name.hasPrefix(shard) else {
                    POSIXFile.unlinkIfPresent(path)
                    report.removedDamagedFiles += 1
                    continue
                }
                seen.insert(digest)
                guard !known.contains(digest) else { continue }
                if let record = adoptionRecord(for: digest, path: path, now: now) {
                    adopted.append(record)
                } else {
                    POSIXFile.unlinkIfPresent(path)
                    report.removedDamagedFiles += 1
                }
            }
        }
        return (adopted, seen)
    }

    /// A temporary file (`prefix.PID.N`) is abandoned when the process that named it is gone,
    /// or, for a live process (PIDs are reused), when it is over an hour old.
    private func isAbandonedTemporaryFile(_ name: String, path: String, now: Int64, allowDirectories: Bool = false) -> Bool {
        let parts = name.split(separator: ".")
        guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]) ?? Int32(parts[parts.count - 1]) else { return true }
        if Platform.processIsGone(pid) { return true }
        guard let modified = POSIXFile.modificationTime(path, allowDirectories: allowDirectories) else { return false }
        return now - modified > 3_600_000
    }

    /// A put record for a valid entry file the index does not know, read from its footer.
    private func adoptionRecord(for digest: DiskCacheDigest, path: String, now: Int64) -> DiskCacheJournalRecord? {
        guard let fd = try? POSIXFile.open(path, .readOnly) else { return nil }
        defer { Platform.closeFile(fd) }
        guard let size = try? POSIXFile.fileSize(fd, path: path), size >= DiskCacheEntryFile.footerSize else { return nil }
        // The footer first, then as much of the tail as its metadata needs.
        var tail = [UInt8](repeating: 0, count: min(size, 4096))
        let count = tail.withUnsafeMutableBytes { (try? POSIXFile.readFully(fd, into: $0.baseAddress!, count: $0.count, at: size - $0.count, path: path)) ?? 0 }
        guard count == tail.count else { return nil }
        let footer = tail.withUnsafeBytes { DiskCacheEntryFile.footer(inTail: $0, fileSize: size, digest: digest) }
        guard let footer, !isExpired(storedAt: footer.storedAt, expiresAt: footer.expiresAt, now: now) else { return nil }
        let accessed = POSIXFile.modificationTime(path, allowDirectories: false) ?? footer.storedAt
        return .init(operation: .put, digest: digest, size: Int64(size), storedAt: footer.storedAt, accessedAt: accessed, expiresAt: footer.expiresAt)
    }
}
