#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Reads files of a served folder only when they are regular files.
///
/// Anyone who can write into a served folder can leave a FIFO there: opening one for reading
/// waits for a writer, so a plain `open` (`FileHandle`, `Data(contentsOf:)`) blocks the thread
/// for ever, and the proxy, which lists the folder at start, never starts. A device or a socket
/// is no image either. The file is opened with `O_NONBLOCK`, which makes opening a FIFO return
/// at once, and refused unless `fstat` says it is a regular file; reads of a regular file
/// ignore `O_NONBLOCK`.
///
/// ```swift
/// let head = RegularFile.read("/srv/images/a.jpg", upTo: 64)   // nil for a FIFO
/// ```
enum RegularFile {
    /// Up to `count` bytes from the start of the regular file at `path`; `nil` when it is
    /// missing, unreadable, or not a regular file (symbolic links are followed).
    static func read(_ path: String, upTo count: Int) -> Data? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let wanted = min(count, Int(info.st_size))
        var data = Data(count: wanted)
        var total = 0
        while total < wanted {
            let got = data.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + total, wanted - total, off_t(total)) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            total += got
        }
        return total < wanted ? data.prefix(total) : data
    }
}
