#if canImport(Glibc)
import Glibc
#endif

/// Which sanitizer the test process runs under (scripts/sanitize.sh), for the few tests whose
/// subject a sanitizer's runtime replaces.
public enum Sanitizers {
    /// Whether AddressSanitizer's runtime is linked in: it exports `__asan_init`. Its allocator
    /// replaces glibc's malloc, so glibc's tunables (`mallopt`) have nothing to act on.
    public static let address = exports("__asan_init")

    /// Whether ThreadSanitizer's runtime is linked in: it exports `__tsan_init`.
    public static let thread = exports("__tsan_init")

    /// Whether a sanitizer reserves terabytes of address space for its shadow memory, so that a
    /// child process under a small `RLIMIT_AS` cannot even start.
    public static var reservesShadowMemory: Bool { address || thread }

    /// How many times the sanitizer in use slows the tests: the part of ``Deadlines/stretch``
    /// that the sanitizer accounts for. 5 under ThreadSanitizer, whose own documentation puts
    /// its cost at 5–15 times the time (every memory access of the instrumented code is
    /// checked, and the `webimage` processes the tests start are built with it too): the whole
    /// suite took 489–505 s under TSan against 152 s without, both beside other builds, and
    /// three tests missed a deadline by that much. 3 under AddressSanitizer (2–3 times the time):
    /// with 1, CI's ASan run of 2026-11-28 had 119 proxy requests run past their 60 s deadline
    /// while the parallel suite's CPU work shared two cores. 1 otherwise.
    public static let slowdown: Int = thread ? 5 : address ? 3 : 1

    private static func exports(_ symbol: String) -> Bool {
        #if canImport(Glibc)
        guard let process = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(process) }
        return dlsym(process, symbol) != nil
        #else
        return false
        #endif
    }
}
