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
        Platform.coarseMonotonicNanoseconds()
    }
}
