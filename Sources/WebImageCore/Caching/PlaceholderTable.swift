import Synchronization

/// The placeholders this process has met, by source: what ``ImageManager/placeholder(for:)``
/// answers from, one dictionary lookup under a lock. The disk cache's index keeps them across
/// restarts; this table is what makes the answer a memory lookup.
final class PlaceholderTable: Sendable {
    /// Sources kept before arbitrary ones are dropped: about 100 bytes each.
    static let limit = 20_000

    private let table = Mutex<[String: ImagePlaceholder]>([:])

    func placeholder(forSource source: String) -> ImagePlaceholder? {
        table.withLock { $0[source] }
    }

    func set(_ placeholder: ImagePlaceholder, forSource source: String) {
        table.withLock { table in
            if table[source] == nil, table.count >= Self.limit { table.remove(at: table.startIndex) }
            table[source] = placeholder
        }
    }

    func removeAll() {
        table.withLock { $0.removeAll() }
    }
}
