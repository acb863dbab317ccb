#if canImport(Glibc)
import Glibc
#endif

/// Which sanitizer the test process runs under (scripts/sanitize.sh), for the few tests whose
/// subject a sanitizer's runtime replaces.
public enum Sanitizers {
    /// Whether AddressSanitizer's runtime is linked in: it exports `__asan_init`. Its allocator
    /// replaces glibc's malloc, so glibc's tunables (`mallopt`) have nothing to act on.
    public static let address: Bool = {
        #if canImport(Glibc)
        guard let process = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(process) }
        return dlsym(process, "__asan_init") != nil
        #else
        return false
        #endif
    }()
}
