import Foundation
import Glibc
import Synchronization

/// A process of the tests' own whose output is read line by line as it comes, and whose
/// standard input the test can write to: a server to wait for, a probe to drive.
public final class ChildProcess: Sendable {
    private struct State {
        var stdout: [String] = []
        var stderr: [String] = []
        var pending: [Bool: Data] = [:]
        var closed = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// A waiting task was cancelled: every wait ends.
        var isCancelled = false
    }

    public let process: SpawnedProcess
    private let input: FileHandle
    private let state = Mutex(State())

    /// Starts `executable` in `directory` with this process's environment (the variables
    /// `inherits` keeps) and `environment` over it.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil,
        inherits: (String) -> Bool = { _ in true }
    ) throws {
        process = SpawnedProcess()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var merged = ProcessInfo.processInfo.environment.filter { inherits($0.key) }
        merged.merge(environment) { $1 }
        process.environment = merged
        let out = try CloseOnExecPipe(), err = try CloseOnExecPipe(), stdin = try CloseOnExecPipe()
        process.standardOutput = out.writing
        process.standardError = err.writing
        process.standardInput = stdin.reading
        input = stdin.writing
        read(out.reading, isStdout: true)
        read(err.reading, isStdout: false)
        try process.run()
        // The child has its copies; ours would keep the pipes open after it exits.
        try out.writing.close()
        try err.writing.close()
        try stdin.reading.close()
    }

    /// Reads `handle` to its end on a thread of its own, blocked in `read(2)`. Not a
    /// `readabilityHandler`: libdispatch's read sources on Linux lost the end of file of a pipe
    /// whose descriptor number a parallel test had just closed and reused, and the wait for the
    /// exit hung with the child long gone (`s3FlagsAreChecked`, 3 runs in 15). The thread holds
    /// the handle, so its descriptor cannot be closed (and its number reused) under the read.
    private func read(_ handle: FileHandle, isStdout: Bool) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                received(count > 0 ? Data(buffer[..<count]) : Data(), isStdout: isStdout)
                if count <= 0 { return }
            }
        }
    }

    /// Adds `chunk` to the output's lines (an empty chunk: the output has closed) and wakes the
    /// waiters.
    private func received(_ chunk: Data, isStdout: Bool) {
        let waiters = state.withLock { state in
            if chunk.isEmpty {
                state.closed += 1
            } else {
                var buffer = state.pending[isStdout, default: Data()]
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    if isStdout { state.stdout.append(line) } else { state.stderr.append(line) }
                    buffer = Data(buffer[(newline + 1)...])
                }
                state.pending[isStdout] = buffer
            }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    public var stdout: [String] { state.withLock { $0.stdout } }
    public var stderr: [String] { state.withLock { $0.stderr } }

    /// Writes `line` and a newline to the process's standard input.
    public func send(_ line: String) {
        input.write(Data((line + "\n").utf8))
    }

    /// Waits until a line of standard output (or error), after the first `skipping` lines,
    /// satisfies `predicate`; `nil` when the process closes both outputs first, or when the
    /// waiting task is cancelled (a test's time limit ends the wait, and the test fails on
    /// the `nil` where it stood, instead of hanging the suite).
    public func waitForLine(stderr: Bool = false, skipping: Int = 0, where predicate: @escaping @Sendable (String) -> Bool) async -> String? {
        func find(_ state: State) -> String? {
            (stderr ? state.stderr : state.stdout).dropFirst(skipping).first(where: predicate)
        }
        while !Task.isCancelled {
            let (match, closed) = state.withLock { state in (find(state), state.closed == 2) }
            if let match { return match }
            if closed { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state in
                        // Anything new since the check above, or cancelled meanwhile: look again at once.
                        let seen = find(state) != nil || state.closed == 2 || state.isCancelled
                        if !seen { state.waiters.append(continuation) }
                        return seen
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                let waiters = state.withLock { state in
                    state.isCancelled = true
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
            }
        }
        return nil
    }

    /// Sends `command`, then waits for the first line after it that starts with `prefix`.
    public func ask(_ command: String, expecting prefix: String) async -> String? {
        let seen = stdout.count
        send(command)
        return await waitForLine(skipping: seen) { $0.hasPrefix(prefix) }
    }

    public func kill(_ signal: Int32 = SIGKILL) {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
    }

    /// The exit status once the process has closed its outputs and exited; -1 when the waiting
    /// task is cancelled first.
    public func waitForExit() async -> Int32 {
        _ = await waitForLine { _ in false }   // both pipes closed: the process is gone
        guard !Task.isCancelled else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
