#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The server's C-library calls whose types differ between Glibc, Musl and Darwin, so the
/// socket and resolver code elsewhere reads the same on each (the core's counterpart is
/// WebImageCore's `Platform`).
///
/// Linux (Glibc) is the tested platform; the other branches are untested.
enum SocketPlatform {
    /// `SOCK_STREAM` as `socket(2)` and `addrinfo.ai_socktype` take it: Glibc imports it as
    /// an enum (`__socket_type`), Musl and Darwin as an `Int32`.
    static var streamType: Int32 {
        #if canImport(Glibc)
        Int32(SOCK_STREAM.rawValue)
        #else
        SOCK_STREAM
        #endif
    }

    /// The process's soft limit on open file descriptors (`getrlimit(RLIMIT_NOFILE)`), clamped
    /// to `Int` (so `RLIM_INFINITY` is `Int.max`); `nil` when it cannot be read.
    static func softDescriptorLimit() -> Int? {
        var limit = rlimit()
        #if canImport(Glibc)
        // Glibc declares the resource as an enum; Musl and Darwin as an Int32.
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return nil }
        return Int(clamping: limit.rlim_cur)
    }
}
