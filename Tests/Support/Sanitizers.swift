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
