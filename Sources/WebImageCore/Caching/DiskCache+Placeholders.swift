/// Placeholders in the index: a few dozen bytes a source, kept in the journal beside the
/// entries so they survive a restart, reach every process sharing the directory, and outlive
/// the bytes they were computed from.
extension DiskCache {
    /// The most placeholders the index keeps (about 100 bytes of memory and 80 of journal each).
    static let placeholderLimit = 50_000

    /// The placeholder bytes remembered for the source of `key`, from the index in memory: no
    /// file is read.
    package func placeholderBytes(forKey key: ImageCacheKey) -> [UInt8]? {
        let digest = DiskCacheDigest(key: key.original)
        return state.withLock { state in
            state.catchUp(logger: logger)
            return state.placeholders[digest]
        }
    }

    /// Remembers `bytes` (at most 32) for the source of `key`, in the index and the journal.
    package func rememberPlaceholderBytes(_ bytes: [UInt8], forKey key: ImageCacheKey) {
        guard !bytes.isEmpty, bytes.count <= DiskCacheJournalRecord.placeholderCapacity else { return }
        let digest = DiskCacheDigest(key: key.original)
        state.withLock { state in
            state.catchUp(logger: logger)
            guard state.placeholders[digest] != bytes else { return }
            state.rememberPlaceholder(bytes, for: digest)
            state.record([DiskCacheJournalRecord(placeholder: bytes, digest: digest)], logger: logger)
        }
    }

    /// How many placeholders the index holds.
    package var placeholderCount: Int { state.withLock { $0.placeholders.count } }
}
