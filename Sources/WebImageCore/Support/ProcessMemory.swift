/// Process-wide memory settings for programs that decode many large images.
///
/// A decode's large buffers (a photo's bitmap, its DCT coefficients, a PNG's inflated rows)
/// live for tens of milliseconds and are then freed. glibc's `malloc` serves blocks of 128 KiB
/// and more with their own mappings at first, but each time such a block is freed it raises
/// that threshold to the block's size (up to 32 MiB). After the first few photos, 5 to 30 MB
/// buffers therefore come from malloc's arenas, and what is freed there mostly stays in the
/// process: the prefetch benchmark's peak RSS was 240 MiB with glibc's defaults and 144 MiB with
/// a fixed threshold of 256 KiB, for the same work (docs/benchmarks.md).
///
/// The setting belongs to the program, not to a library, so nothing sets it by itself; the
/// `webimage` command calls it at start.
///
/// ```swift
/// // The first line of a program's main.swift, before any image is decoded:
/// ProcessMemory.returnLargeBlocksToSystem()
/// ```
public enum ProcessMemory {
    /// Makes glibc's `malloc` serve every block of `threshold` bytes or more with a mapping of
    /// its own, given back to the system as soon as it is freed, and stops it from raising the
    /// threshold on its own. Returns `false` where that is not possible (another C library,
    /// another system).
    @discardableResult
    public static func returnLargeBlocksToSystem(threshold: Int = 256 << 10) -> Bool {
        Platform.setMallocMapThreshold(threshold)
    }

    /// Gives the memory `malloc` holds free back to the system: the pages of freed small
    /// blocks, which glibc otherwise keeps in each thread's arena for later allocations, so a
    /// process's resident memory stays near its peak after a burst of work. Returns `true` when
    /// some memory was returned, `false` when none was or where that is not possible.
    ///
    /// It walks every arena under its lock, so call it when the program is idle, not per
    /// image: `webimage serve` calls it once after a burst of renders has ended.
    ///
    /// ```swift
    /// // A batch job, between batches:
    /// ProcessMemory.returnFreeMemory()
    /// ```
    @discardableResult
    public static func returnFreeMemory() -> Bool {
        Platform.trimMalloc()
    }
}
