import CGTK
import CWebImageGTK
import Foundation
import WebImage

/// The views' answer to memory pressure: when GIO's `GMemoryMonitor` warns that memory is low,
/// every live ``WebImageView`` drops the animation frames its player decoded ahead
/// (``AnimatedImagePlayer/trimMemory()``), and the memory caches the views load through shed
/// their least recently used images, more the graver the warning: what SDWebImage and
/// YYAnimatedImageView do on iOS's memory warning.
///
/// Linux's only system-wide low-memory notification for applications is GIO's: the first
/// ``WebImageView`` connects to `g_memory_monitor_dup_default()`'s `low-memory-warning`, so an
/// application does nothing to get this. On GLib 2.74 (Debian 12) the monitor relays the
/// `low-memory-monitor` service's warnings over the system bus, or the desktop portal's inside
/// a Flatpak; without either it never warns. An application with its own source (a cgroup v2
/// `memory.pressure` trigger, `MemAvailable` in `/proc/meminfo`) calls ``respond(to:)``.
///
/// ```swift
/// @MainActor func startUp() {
///     MemoryPressure.trimsMemoryCaches = false   // players only: the app trims its caches itself
/// }
/// @MainActor func cgroupReportedPressure() {
///     MemoryPressure.respond(to: .critical)      // from the app's own source of pressure
/// }
/// ```
@MainActor
public enum MemoryPressure {
    /// How grave a warning is: GIO's `GMemoryMonitorWarningLevel`.
    public enum Level: Sendable, Equatable {
        /// Memory is low; free what is cheap to make again.
        case low
        /// Free memory, or the system may end the process.
        case medium
        /// Free as much as possible, or the system will end the process.
        case critical

        /// GIO's level: at or above a level's value is that level (GIO allows values between).
        init(_ level: GMemoryMonitorWarningLevel) {
            self = level.rawValue >= G_MEMORY_MONITOR_WARNING_LEVEL_CRITICAL.rawValue ? .critical
                : level.rawValue >= G_MEMORY_MONITOR_WARNING_LEVEL_MEDIUM.rawValue ? .medium : .low
        }

        /// The part of a memory cache's cost kept at this level: half, a quarter, nothing.
        func keptCost(of cost: Int) -> Int {
            switch self {
            case .low: cost / 2
            case .medium: cost / 4
            case .critical: 0
            }
        }
    }

    /// Whether a warning trims the memory caches the live views load through too (to half their
    /// cost at ``Level/low``, a quarter at ``Level/medium``, nothing at ``Level/critical``).
    /// The players are trimmed in any case. Default: on.
    public static var trimsMemoryCaches = true

    /// What a warning does, for an application that learns of memory pressure from a source of
    /// its own: trims every live view's animation player and, with ``trimsMemoryCaches``, the
    /// memory caches the views load through.
    public static func respond(to level: Level) {
        var caches: [ObjectIdentifier: ImageCache] = [:]
        for view in views.values.compactMap(\.view) {
            view.animationPlayer?.trimMemory()
            guard let cache = view.loadingManager?.configuration.cache else { continue }
            caches[ObjectIdentifier(cache)] = cache
        }
        guard trimsMemoryCaches else { return }
        for cache in caches.values {
            cache.memory.trim(toCost: level.keptCost(of: cache.memoryCost))
        }
    }

    // MARK: The live views

    private struct WeakView {
        weak var view: WebImageView?
    }

    private static var views: [ObjectIdentifier: WeakView] = [:]
    private static var monitor: OpaquePointer?

    /// Counts `view` among the live views, connecting to GIO's monitor the first time.
    static func register(_ view: WebImageView) {
        views[ObjectIdentifier(view)] = WeakView(view: view)
        if monitor == nil { connect() }
    }

    /// Called from the view's deinit.
    static func forget(_ view: ObjectIdentifier) {
        views[view] = nil
    }

    /// The process keeps the default monitor (and the connection) for good, as GIO keeps it.
    private static func connect() {
        guard let made = g_memory_monitor_dup_default() else { return }
        monitor = made
        _ = wi_gtk_signal_connect(UnsafeMutableRawPointer(made), "low-memory-warning", unsafeBitCast(onWarning, to: GCallback.self), nil)
    }

    private static let onWarning: @convention(c) (OpaquePointer?, GMemoryMonitorWarningLevel, gpointer?) -> Void = { _, level, _ in
        let level = Level(level)
        // GIO emits the signal in the main context the monitor was made in: the main thread's,
        // as views connect it. Anywhere else, the trim waits for the main actor.
        if Thread.isMainThread {
            MainActor.assumeIsolated { respond(to: level) }
        } else {
            Task { @MainActor in respond(to: level) }
        }
    }
}
