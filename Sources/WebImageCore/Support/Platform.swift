#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every C-library call the core makes, in one place, so that a port to another C library
/// (Musl) or system (Darwin) edits this file only.
///
/// The rest of the core calls these wrappers and never names a libc function, constant or
/// structure itself: names and types differ between Glibc, Musl and Darwin (`stat`'s time
/// fields, the `open` flags' values, `pthread_setname_np`'s arguments, `/proc`), and keeping
/// them here keeps those differences out of the cache's logic. The wrappers add no policy:
/// they return the C result, and a failure leaves the code in ``errorNumber``, as the C call
/// does. Retrying on `EINTR` and turning failures into ``ImageError`` is ``POSIXFile``'s job.
///
/// Linux (Glibc) is the tested platform. The Darwin branches are written from the
/// documentation and compiled by nobody yet: treat them as a starting point, not as support.
enum Platform {
    // MARK: - Errors

    /// The calling thread's `errno`: read it right after the call that failed.
    static var errorNumber: Int32 { errno }

    /// The `errno` values the core tests for.
    enum ErrorCode {
        static let interrupted = EINTR
        static let noEntry = ENOENT
        static let exists = EEXIST
        static let noSuchProcess = ESRCH
        static let noSpace = ENOSPC
        static let quotaExceeded = EDQUOT
        static let fileTooLarge = EFBIG
    }

    /// The C library's message for an `errno` value.
    static func errorMessage(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    // MARK: - Files

    /// How ``openFile(_:_:mode:)`` opens; the values are the platform's `O_` flags.
    struct OpenFlags: OptionSet {
        let rawValue: Int32
        static let readOnly = OpenFlags(rawValue: O_RDONLY)
        static let writeOnly = OpenFlags(rawValue: O_WRONLY)
        static let readWrite = OpenFlags(rawValue: O_RDWR)
        static let create = OpenFlags(rawValue: O_CREAT)
        static let exclusive = OpenFlags(rawValue: O_EXCL)
        static let append = OpenFlags(rawValue: O_APPEND)
        static let truncate = OpenFlags(rawValue: O_TRUNC)
        static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
    }

    /// `open(2)`, always with `O_CLOEXEC` (a cache file must not leak into a spawned process).
    /// A descriptor, or -1.
    static func openFile(_ path: String, _ flags: OpenFlags, mode: UInt32 = 0o644) -> Int32 {
        open(path, flags.rawValue | O_CLOEXEC, mode_t(mode))
    }

    /// `close(2)`: 0, or -1.
    @discardableResult
    static func closeFile(_ fd: Int32) -> Int32 {
        close(fd)
    }

    /// `write(2)`: the bytes written, or -1.
    static func writeBytes(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        write(fd, buffer, count)
    }

    /// `pread(2)`: the bytes read (0 at the end of the file), or -1.
    static func readBytes(_ fd: Int32, into buffer: UnsafeMutableRawPointer, _ count: Int, at offset: Int) -> Int {
        pread(fd, buffer, count, off_t(offset))
    }

    /// `ftruncate(2)`: 0, or -1.
    static func truncateFile(_ fd: Int32, to size: Int) -> Int32 {
        ftruncate(fd, off_t(size))
    }

    /// `rename(2)`: 0, or -1.
    static func renameFile(_ from: String, _ to: String) -> Int32 {
        rename(from, to)
    }

    /// `unlink(2)`: 0, or -1.
    @discardableResult
    static func unlinkFile(_ path: String) -> Int32 {
        unlink(path)
    }

    /// `mkdir(2)`: 0, or -1.
    static func makeDirectory(_ path: String, mode: UInt32 = 0o755) -> Int32 {
        mkdir(path, mode_t(mode))
    }

    /// Whether `path` names anything (`access(F_OK)`), following symbolic links.
    static func fileExists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// `realpath(3)`: the absolute path with every link and `..` resolved, or `nil`.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// What the core reads from `stat`: the fields it uses, named the same on every platform.
    struct FileStatus {
        enum Kind { case regular, directory, other }
        var kind: Kind
        var size: Int
        /// Hard links to the file; 0 once it was deleted while open.
        var linkCount: Int
        /// The modification time, in milliseconds since 1970.
        var modifiedMilliseconds: Int64

        init(_ info: stat) {
            switch info.st_mode & S_IFMT {
            case S_IFREG: kind = .regular
            case S_IFDIR: kind = .directory
            default: kind = .other
            }
            size = Int(info.st_size)
            linkCount = Int(info.st_nlink)
            #if canImport(Darwin)
            // Untested: Darwin names the field st_mtimespec.
            let modified = info.st_mtimespec
            #else
            let modified = info.st_mtim
            #endif
            modifiedMilliseconds = Int64(modified.tv_sec) * 1000 + Int64(modified.tv_nsec) / 1_000_000
        }
    }

    /// `fstat(2)`, or `nil` (with ``errorNumber`` set).
    static func status(ofDescriptor fd: Int32) -> FileStatus? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return FileStatus(info)
    }

    /// `stat(2)`, following symbolic links, or `nil` (with ``errorNumber`` set).
    static func status(atPath path: String) -> FileStatus? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileStatus(info)
    }

    /// The names in a directory, `.` and `..` included; `nil` when it cannot be opened.
    static func directoryNames(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            // d_name is a fixed-size C array (256 bytes on Linux, 1024 on Darwin), NUL-terminated.
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            names.append(name)
        }
        return names
    }

    // MARK: - Shared memory and locks

    /// `mmap(2)` of `length` bytes of `fd`, readable, writable and shared with every process
    /// that maps the file; `nil` on failure.
    static func mapShared(_ fd: Int32, length: Int) -> UnsafeMutableRawPointer? {
        let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        guard let mapped, mapped != MAP_FAILED else { return nil }
        return mapped
    }

    /// `munmap(2)`.
    static func unmap(_ address: UnsafeMutableRawPointer, length: Int) {
        munmap(address, length)
    }

    /// The advisory whole-file locks of `flock(2)`.
    enum FileLock {
        case shared, exclusive, unlock

        fileprivate var operation: Int32 {
            switch self {
            case .shared: LOCK_SH
            case .exclusive: LOCK_EX
            case .unlock: LOCK_UN
            }
        }
    }

    /// `flock(2)`: 0, or -1 (`EINTR` when a signal interrupted the wait).
    @discardableResult
    static func lockFile(_ fd: Int32, _ lock: FileLock) -> Int32 {
        flock(fd, lock.operation)
    }

    // MARK: - Memory

    /// `malloc(3)`: memory that `Data(bytesNoCopy:count:deallocator: .free)` may take over.
    static func allocate(_ count: Int) -> UnsafeMutableRawPointer? {
        malloc(count)
    }

    /// `realloc(3)`; on `nil` the old block is still allocated.
    static func reallocate(_ pointer: UnsafeMutableRawPointer, _ count: Int) -> UnsafeMutableRawPointer? {
        realloc(pointer, count)
    }

    /// `free(3)`.
    static func deallocate(_ pointer: UnsafeMutableRawPointer) {
        free(pointer)
    }

    // MARK: - Processes, threads, clocks

    /// This process's ID, for naming temporary files.
    static var processID: Int32 { getpid() }

    /// Whether no process `pid` exists (`kill(pid, 0)` fails with `ESRCH`). `false` when it
    /// exists, or exists but belongs to another user.
    static func processIsGone(_ pid: Int32) -> Bool {
        kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Nanoseconds since an arbitrary point (boot), never decreasing, at the coarsest and
    /// cheapest resolution the system offers.
    static func coarseMonotonicNanoseconds() -> UInt64 {
        var time = timespec()
        #if os(Linux)
        // Read from the vDSO without touching the hardware counter; one scheduler tick (1–4 ms)
        // of resolution.
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        #else
        // Untested: Darwin has no coarse variant; its CLOCK_MONOTONIC is served from the commpage.
        clock_gettime(CLOCK_MONOTONIC, &time)
        #endif
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Names the calling thread, as `top`, `gdb` and crash reports show it; Linux keeps the
    /// first 15 bytes.
    static func nameCurrentThread(_ name: String) {
        #if os(Linux)
        // Glibc's pthread_setname_np is not visible to Swift (it needs _GNU_SOURCE), so the name
        // goes straight to the kernel, which is what that function does too.
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #elseif canImport(Darwin)
        // Untested: Darwin's form names only the calling thread, so it takes no thread argument.
        _ = pthread_setname_np(name)
        #endif
    }

    /// glibc's `malloc_trim(0)`: gives the free pages of every arena back to the system (see
    /// ``ProcessMemory``); `false` where there is no such function.
    static func trimMalloc() -> Bool {
        #if canImport(Glibc)
        // malloc_trim is in <malloc.h>, which the Glibc module does not export.
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return false }
        return unsafeBitCast(symbol, to: MallocTrim.self)(0) == 1
        #else
        return false
        #endif
    }

    /// Sets glibc's `M_MMAP_THRESHOLD` to `threshold` (see ``ProcessMemory``); `false` where
    /// there is no such setting (Musl, Darwin).
    static func setMallocMapThreshold(_ threshold: Int) -> Bool {
        #if canImport(Glibc)
        // mallopt is in <malloc.h>, which the Glibc module does not export; M_MMAP_THRESHOLD is
        // -3 in every glibc release (a stable ABI constant).
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return false }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        return mallopt(-3, Int32(clamping: max(0, threshold))) == 1
        #else
        return false
        #endif
    }
}
