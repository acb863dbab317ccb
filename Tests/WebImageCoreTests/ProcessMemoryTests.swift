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

    /// 32 MiB in 4 KiB blocks (under any mmap threshold, so from an arena), freed: glibc keeps
    /// those pages until it is asked for them, and `malloc_trim` reports that it returned some.
    /// What that does to a server's resident memory after a burst is `make bench GROUPS=memory`.
    @Test("glibc returns freed arena pages", .disabled(if: Sanitizers.address, "ASan's allocator replaces glibc's malloc"))
    func glibcReturnsFreePages() {
        let blocks = (0..<8192).map { _ in
            let block = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
            block.initializeMemory(as: UInt8.self, repeating: 1, count: 4096)
            return block
        }
        blocks.forEach { $0.deallocate() }
        #expect(ProcessMemory.returnFreeMemory())
    }
    #endif
}
