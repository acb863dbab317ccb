/// A result a shared job hands to every subscriber, which says where it came from.
protocol Replayable {
    var cacheType: CacheType { get set }
}

extension Replayable {
    /// As a request that joined after the result was made gets it: from memory (the finished
    /// job's), not from the source, whatever the first requester was told.
    var replayed: Self {
        var copy = self
        if copy.cacheType == .none { copy.cacheType = .memory }
        return copy
    }
}
