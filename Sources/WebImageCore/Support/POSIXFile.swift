#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Thin wrappers over the POSIX calls the disk cache makes, each turning `-1` into a thrown
/// ``ImageError/storage(_:)`` that names the operation and path, and retrying on `EINTR`.
///
/// The disk cache talks to the kernel directly rather than through `FileManager` or
/// `FileHandle`: a cache hit must cost little more than `open` + `read` + `close`.
package enum POSIXFile {
    static func failure(_ operation: String, _ path: String, _ code: Int32 = errno) -> ImageError {
        .storage(.init(operation: operation, path: path, code: code))
    }

    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw failure("open", path) }
        }
    }

    /// Writes every byte of `buffer` at the file's current offset (or its end, with `O_APPEND`).
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("write", path)
            }
            offset += written
        }
    }

    /// Reads up to `count` bytes at `offset`, stopping early only at the end of the file.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int, path: String) throws -> Int {
        var total = 0
        while total < count {
            let read = pread(fd, buffer + total, count - total, off_t(offset + total))
            if read < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            if read == 0 { break }
            total += read
        }
        return total
    }

    /// Up to `count` bytes from the start of the regular file at `path` (symbolic links
    /// followed). Anyone who can write into a served folder can leave a FIFO there, and opening
    /// one for reading waits for a writer: the file is opened with `O_NONBLOCK`, which makes
    /// that return at once (reads of a regular file ignore it), and refused unless `fstat` says
    /// it is a regular file. Shared by the file loader and the proxy's folder listing.
    ///
    /// - Throws: ``ImageError/storage(_:)`` when it cannot be opened or read,
    ///   ``ImageError/invalidURL(_:)`` when it is not a regular file (a FIFO, a device, a socket,
    ///   a folder), ``ImageError/tooLarge(_:)`` when it is larger than `limit`.
    package static func readRegularFile(_ path: String, upTo count: Int = .max, limit: Int = .max) throws -> Data {
        let fd = try open(path, O_RDONLY | O_NONBLOCK)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("stat", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ImageError.invalidURL("\(path) is not a regular file")
        }
        let size = Int(info.st_size)
        guard size <= limit else {
            throw ImageError.tooLarge("\(path) is \(size) bytes, over the limit of \(limit)")
        }
        let wanted = min(count, size)
        var data = Data(count: wanted)
        let read = try data.withUnsafeMutableBytes { buffer in
            try readFully(fd, into: buffer.baseAddress!, count: wanted, at: 0, path: path)
        }
        if read < wanted { data.removeSubrange(read...) }
        return data
    }

    static func fileSize(_ fd: Int32, path: String) throws -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("stat", path) }
        return Int(info.st_size)
    }

    static func rename(_ from: String, _ to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw failure("rename", to) }
    }

    /// Removes a file; a file that is already gone is not an error.
    static func unlinkIfPresent(_ path: String) {
        _ = Glibc.unlink(path)
    }

    /// Creates `path` and any missing parents; an existing directory is not an error.
    static func makeDirectories(_ path: String) throws {
        if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
        guard errno == ENOENT else { throw failure("mkdir", path) }
        let parent = (path as NSString).deletingLastPathComponent
        guard !parent.isEmpty, parent != path else { throw failure("mkdir", path) }
        try makeDirectories(parent)
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw failure("mkdir", path) }
    }

    /// The names in a directory, without `.` and `..`; empty when the directory is missing.
    static func directoryEntries(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Modification time (milliseconds since 1970) of a regular file, or of a directory too
    /// when `allowDirectories`.
    static func modificationTime(_ path: String, allowDirectories: Bool) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG || (allowDirectories && type == S_IFDIR) else { return nil }
        return Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec) / 1_000_000
    }
}
