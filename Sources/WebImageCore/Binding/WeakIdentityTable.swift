/// Values kept per object, by identity, without keeping the objects alive. An entry whose object
/// has gone (its identifier may be reused by a new object) is replaced, and dead entries are
/// swept whenever the table has doubled since the last sweep. Not synchronised: its owner locks.
struct WeakIdentityTable<Value> {
    private struct Entry {
        weak var object: AnyObject?
        let value: Value
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    private var sweepAt = 64

    /// Objects with an entry (gone ones included until the next sweep).
    var count: Int { entries.count }

    /// The value of `object`, made by `make` on first use.
    mutating func value(for object: AnyObject, make: () -> Value) -> Value {
        let id = ObjectIdentifier(object)
        if let entry = entries[id], entry.object === object { return entry.value }
        let value = make()
        entries[id] = Entry(object: object, value: value)
        if entries.count >= sweepAt {
            entries = entries.filter { $0.value.object != nil }
            sweepAt = max(64, entries.count * 2)
        }
        return value
    }
}
