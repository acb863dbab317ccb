import Foundation

/// Thin wrappers over the POSIX calls the disk cache makes, each turning `-1` into a thrown
/// ``ImageError/storage(_:)`` that names the operation and path, and retrying on `EINTR`.
///
/// The disk cache talks to the kernel directly rather than through `FileManager` or
/// `FileHandle`: a cache hit must cost little more than `open` + `read` + `close`. The calls
/// themselves are ``Platform``'s, which holds everything that differs between C libraries.
package enum POSIXFile {
    static func failure(_ operation: String, _ path: String, _ code: Int32 = Platform.errorNumber) -> ImageError {
        .storage(.init(operation: operation, path: path, code: code))
    }

    static func open(_ path: String, _ flags: Platform.OpenFlags, mode: UInt32 = 0o644) throws -> Int32 {
        while true {
            let fd = Platform.openFile(path, flags, mode: mode)
            if fd >= 0 { return fd }
            if Platform.errorNumber != Platform.ErrorCode.interrupted { throw failure("open", path) }
        }
    }

    /// Writes every byte of `buffer` at the file's current offset (or its end, with `O_APPEND`).
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < buffer.count {
            let written = Platform.writeBytes(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if Platform.errorNumber == Platform.ErrorCode.interrupted { continue }
                throw failure("write", path)
            }
            offset += written
        }
    }

    /// Reads up to `count` bytes at `offset`, stopping early only at the end of the file.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int, path: String) throws -> Int {
        var total = 0
        while total < count {
            let read = Platform.readBytes(fd, into: buffer + total, count - total, at: offset + total)
            if read < 0 {
                if Platform.errorNumber == Platform.ErrorCode.interrupted { continue }
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
        let fd = try open(path, [.readOnly, .nonBlocking])
        defer { Platform.closeFile(fd) }
        guard let info = Platform.status(ofDescriptor: fd) else { throw failure("stat", path) }
        guard info.kind == .regular else {
            throw ImageError.invalidURL("\(path) is not a regular file")
        }
        let size = info.size
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
        guard let info = Platform.status(ofDescriptor: fd) else { throw failure("stat", path) }
        return info.size
    }

    static func rename(_ from: String, _ to: String) throws {
        guard Platform.renameFile(from, to) == 0 else { throw failure("rename", to) }
    }

    /// Removes a file; a file that is already gone is not an error.
    static func unlinkIfPresent(_ path: String) {
        Platform.unlinkFile(path)
    }

    /// Creates `path` and any missing parents; an existing directory is not an error.
    static func makeDirectories(_ path: String) throws {
        if Platform.makeDirectory(path) == 0 || Platform.errorNumber == Platform.ErrorCode.exists { return }
        guard Platform.errorNumber == Platform.ErrorCode.noEntry else { throw failure("mkdir", path) }
        let parent = (path as NSString).deletingLastPathComponent
        guard !parent.isEmpty, parent != path else { throw failure("mkdir", path) }
        try makeDirectories(parent)
        guard Platform.makeDirectory(path) == 0 || Platform.errorNumber == Platform.ErrorCode.exists else { throw failure("mkdir", path) }
    }

    /// The names in a directory, without `.` and `..`; empty when the directory is missing.
    static func directoryEntries(_ path: String) -> [String] {
        (Platform.directoryNames(path) ?? []).filter { $0 != "." && $0 != ".." }
    }

    /// Modification time (milliseconds since 1970) of a regular file, or of a directory too
    /// when `allowDirectories`.
    static func modificationTime(_ path: String, allowDirectories: Bool) -> Int64? {
        guard let info = Platform.status(atPath: path) else { return nil }
        guard info.kind == .regular || (allowDirectories && info.kind == .directory) else { return nil }
        return info.modifiedMilliseconds
    }
}
