#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The clock that ages ``MemoryCache`` entries.
///
/// Linux's `CLOCK_MONOTONIC_COARSE` is read from the vDSO without touching the hardware
/// counter, a few nanoseconds per call, at the price of a resolution of one scheduler tick
/// (1–4 ms): plenty for age limits meant in seconds or minutes, and cheap enough to read on
/// every hit of a cache with an age limit.
@usableFromInline
enum MonotonicClock {
    /// Nanoseconds since an arbitrary point (boot), never decreasing.
    @usableFromInline
    static func coarseNanoseconds() -> UInt64 {
        var time = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        #else
        // Darwin has no coarse variant; its CLOCK_MONOTONIC is served from the commpage.
        clock_gettime(CLOCK_MONOTONIC, &time)
        #endif
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
