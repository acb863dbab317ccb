#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CCodecShims
import Foundation
import WebImageCore

/// One renderer child of ``RenderProcess``: its process, the socket its standard input reads
/// (a socket, so that writing to a child that died is an error, `MSG_NOSIGNAL`, not a SIGPIPE
/// for the whole server), and those of its output and errors.
final class RendererChild {
    private var pid: pid_t = 0
    private var input: Int32 = -1
    private var output: Int32 = -1
    private var errors: Int32 = -1
    private var status: Int32?
    /// The format's name in messages: "SVG", "PDF".
    private let name: String

    init(executable: URL, arguments: [String], name: String) throws {
        self.name = name
        // Socket pairs for all three streams: made close-on-exec at once (pipe2 is not imported),
        // so that no other child started meanwhile inherits them.
        var socket: [Int32] = [-1, -1], outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1]
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, kind, 0, &socket) == 0, socketpair(AF_UNIX, kind, 0, &outputPipe) == 0,
              socketpair(AF_UNIX, kind, 0, &errorPipe) == 0 else {
            let error = errno
            for fd in socket + outputPipe + errorPipe where fd >= 0 { close(fd) }
            throw ImageError.corruptData("\(name): no socket for the renderer (errno \(error))")
        }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = wi_spawn(&pid, executable.path, argv, nil, nil, socket[1], outputPipe[1], errorPipe[1])
        close(socket[1])
        close(outputPipe[1])
        close(errorPipe[1])
        (input, output, errors) = (socket[0], outputPipe[0], errorPipe[0])
        guard spawned == 0 else {
            end()
            throw ImageError.corruptData("\(name): the renderer \(executable.path) could not be started (errno \(spawned))")
        }
    }

    /// Writes `document` to the child's standard input, then closes it.
    func send(_ document: Data) throws {
        defer {
            close(input)
            input = -1
        }
        try document.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                try WorkDeadline.check("sending the document to the \(name) renderer")
                let sent = Glibc.send(input, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { return } // the child stopped reading: its status says why
                offset += sent
            }
        }
    }

    /// Reads the child's output into `buffer` until it ends, the buffer is full, or `deadline`
    /// passes (the child is killed: ``ImageError/timeout(_:)``); between reads, at least every
    /// 50 ms, the work budget and the caller's presence are checked. The bytes read.
    func receive(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant) throws -> Int {
        var received = 0
        while received < buffer.count {
            do {
                try WorkDeadline.check("rendering the \(name) document")
            } catch {
                kill()
                throw error
            }
            guard ContinuousClock.now < deadline else {
                kill()
                throw ImageError.timeout("\(name): the renderer took longer than its time limit")
            }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 50)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = read(output, buffer.baseAddress! + received, buffer.count - received)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            received += count
        }
        return received
    }

    /// The child's standard error, one line (what it said before it ended).
    func errorMessage() -> String {
        reap()
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(errors, &bytes, bytes.count)
        return count > 0 ? LibraryMessage.oneLine(String(decoding: bytes.prefix(count), as: UTF8.self)) : ""
    }

    /// Whether the child was stopped by its CPU-time limit (SIGXCPU).
    var ranOutOfCPUTime: Bool {
        reap()
        return status.map { $0 & 0x7F == SIGXCPU } ?? false
    }

    /// How the child ended.
    func exitDescription() -> String {
        reap()
        guard let status else { return "still running" }
        if status & 0x7F != 0 { return "killed by signal \(status & 0x7F)" }
        return "exit status \((status >> 8) & 0xFF)"
    }

    private func kill() {
        if status == nil, pid > 0 { Glibc.kill(pid, SIGKILL) }
    }

    /// Waits for the child to end (it has closed its output, or was killed).
    private func reap() {
        guard status == nil, pid > 0 else { return }
        var value: Int32 = 0
        while waitpid(pid, &value, 0) < 0 && errno == EINTR {}
        status = value
    }

    /// Kills the child if it is still running, reaps it, and closes every descriptor.
    func end() {
        if status == nil, pid > 0 {
            var value: Int32 = 0
            if waitpid(pid, &value, WNOHANG) == pid { status = value } else { kill(); reap() }
        }
        for fd in [input, output, errors] where fd >= 0 { close(fd) }
        (input, output, errors) = (-1, -1, -1)
    }
}
