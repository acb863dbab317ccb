import Testing
import WebImageCore
import WebImageTestSupport

@Suite("ProcessMemory")
struct ProcessMemoryTests {
    // Only whether glibc took the setting: what it does to a decoding process's peak memory is
    // measured by the prefetch benchmark, in a child process of its own (a test process shares
    // its heap with every other test running beside it).
    #if os(Linux)
    @Test("glibc takes a fixed mmap threshold", .disabled(if: Sanitizers.address, "ASan's allocator replaces glibc's malloc: mallopt has no effect"))
    func glibcTakesTheSetting() {
        #expect(ProcessMemory.returnLargeBlocksToSystem(threshold: 256 << 10))
    }
    #endif
}
