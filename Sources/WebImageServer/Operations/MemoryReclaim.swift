import ServiceLifecycle
import WebImage

/// When the proxy gives memory back: one interval after a burst of renders has ended, and
/// whenever expired decoded images were dropped while it is idle. Never while renders go on:
/// returning free memory walks every `malloc` arena under its lock, and memory freed under
/// load is reused by the next renders anyway.
struct MemoryReclaim {
    private var rendersSinceTick = 0
    private var owesTrim = false

    mutating func rendered() {
        rendersSinceTick += 1
    }

    /// Whether this tick should return free memory; `released` says expired entries were
    /// just dropped.
    mutating func tick(released: Bool) -> Bool {
        if rendersSinceTick > 0 {
            rendersSinceTick = 0
            owesTrim = true
            return false
        }
        defer { owesTrim = false }
        return owesTrim || released
    }
}

extension ImageProxy {
    /// Drops the decoded images past ``Configuration/imageMemoryLifetime`` and, once the
    /// proxy is idle after rendering, returns the memory `malloc` holds free to the system
    /// (``ProcessMemory/returnFreeMemory()``). ``MemoryReclaimer`` calls it every few seconds.
    /// Returns whether it returned memory.
    @discardableResult
    package func reclaimMemory() -> Bool {
        let memory = manager.configuration.cache.memory
        let before = memory.totalCost
        memory.removeExpired()
        let trims = reclaim.withLock { $0.tick(released: memory.totalCost < before) }
        return trims && ProcessMemory.returnFreeMemory()
    }
}

/// Calls ``ImageProxy/reclaimMemory()`` every `interval` until the server shuts down.
struct MemoryReclaimer: Service {
    let proxy: ImageProxy
    var interval: Duration = .seconds(5)

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                proxy.reclaimMemory()
            }
        }
    }
}
