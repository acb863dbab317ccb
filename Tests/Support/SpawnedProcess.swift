import CTestSpawn
import Dispatch
import Foundation
import Synchronization

/// A child process of the tests: the part of Foundation's `Process` API the tests use, over
/// `wi_test_spawn` (Tests/CTestSpawn says why not `Process` itself).
///
/// Configure it, `run()` it, then wait with `waitUntilExit()` or a `terminationHandler`. A
/// standard stream left `nil` is inherited; `FileHandle.nullDevice` is /dev/null; a `Pipe`'s
/// child end is handed over and the parent's copy of it closed, as `Process` does.
public final class SpawnedProcess: Sendable {
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    /// A standard stream as given: a `Pipe` or a `FileHandle`.
    private enum Stream: @unchecked Sendable {
        // Both classes are thread-safe in Foundation; neither is declared Sendable on Linux.
        case pipe(Pipe)
        case handle(FileHandle)

        init?(_ value: Any?) {
            switch value {
            case let pipe as Pipe: self = .pipe(pipe)
            case let handle as FileHandle: self = .handle(handle)
            case nil: return nil
            default: preconditionFailure("a standard stream is a Pipe or a FileHandle")
            }
        }

        var object: Any {
            switch self {
            case .pipe(let pipe): pipe
            case .handle(let handle): handle
            }
        }

        /// The descriptor the child gets, and the handle to close in the parent once it has it.
        func childEnd(reading: Bool) -> (descriptor: Int32, closeAfterSpawn: FileHandle?) {
            switch self {
            case .pipe(let pipe):
                let end = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                return (end.fileDescriptor, end)
            case .handle(let handle):
                return (handle.fileDescriptor, nil)
            }
        }
    }

    private struct State {
        var executableURL: URL?
        var arguments: [String]?
        var environment: [String: String]?
        var currentDirectoryURL: URL?
        var streams: [Int: Stream] = [:]
        var terminationHandler: (@Sendable (SpawnedProcess) -> Void)?
        var processIdentifier: Int32 = 0
        var isRunning = false
        var terminationStatus: Int32 = 0
        var terminationReason = TerminationReason.exit
    }

    private let state = Mutex(State())
    /// Entered by `run()`, left when the child has been reaped.
    private let exited = DispatchGroup()

    public init() {}

    public var executableURL: URL? {
        get { state.withLock { $0.executableURL } }
        set { state.withLock { $0.executableURL = newValue } }
    }

    public var arguments: [String]? {
        get { state.withLock { $0.arguments } }
        set { state.withLock { $0.arguments = newValue } }
    }

    /// The child's whole environment; `nil` passes ours.
    public var environment: [String: String]? {
        get { state.withLock { $0.environment } }
        set { state.withLock { $0.environment = newValue } }
    }

    public var currentDirectoryURL: URL? {
        get { state.withLock { $0.currentDirectoryURL } }
        set { state.withLock { $0.currentDirectoryURL = newValue } }
    }

    public var standardInput: Any? {
        get { state.withLock { $0.streams[0]?.object } }
        set { state.withLock { $0.streams[0] = Stream(newValue) } }
    }

    public var standardOutput: Any? {
        get { state.withLock { $0.streams[1]?.object } }
        set { state.withLock { $0.streams[1] = Stream(newValue) } }
    }

    public var standardError: Any? {
        get { state.withLock { $0.streams[2]?.object } }
        set { state.withLock { $0.streams[2] = Stream(newValue) } }
    }

    /// Called once, on a thread of its own, after the child has exited.
    public var terminationHandler: (@Sendable (SpawnedProcess) -> Void)? {
        get { state.withLock { $0.terminationHandler } }
        set { state.withLock { $0.terminationHandler = newValue } }
    }

    public var processIdentifier: Int32 { state.withLock { $0.processIdentifier } }
    public var isRunning: Bool { state.withLock { $0.isRunning } }
    public var terminationStatus: Int32 { state.withLock { $0.terminationStatus } }
    public var terminationReason: TerminationReason { state.withLock { $0.terminationReason } }

    /// Starts the child; throws when it cannot be started (a missing executable included).
    public func run() throws {
        let configuration = state.withLock { $0 }
        guard let executable = configuration.executableURL else { throw POSIXError(.ENOENT) }
        var descriptors: [Int32] = [-1, -1, -1]
        var closeAfterSpawn: [FileHandle] = []
        var nullDevice: Int32 = -1
        defer { if nullDevice >= 0 { close(nullDevice) } }
        for (index, stream) in configuration.streams {
            var (descriptor, parentCopy) = stream.childEnd(reading: index == 0)
            if descriptor < 0 {
                // FileHandle.nullDevice has no descriptor of its own.
                if nullDevice < 0 { nullDevice = open("/dev/null", O_RDWR | O_CLOEXEC) }
                descriptor = nullDevice
            }
            descriptors[index] = descriptor
            if let parentCopy { closeAfterSpawn.append(parentCopy) }
        }
        let argv = [executable.path] + (configuration.arguments ?? [])
        let environment = configuration.environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let status = Self.withCStrings(argv) { argv in
            Self.withCStrings(envp) { envp in
                wi_test_spawn(&pid, executable.path, argv, envp, configuration.currentDirectoryURL?.path,
                              descriptors[0], descriptors[1], descriptors[2])
            }
        }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        for handle in closeAfterSpawn { try? handle.close() }
        exited.enter()
        let child = pid
        state.withLock {
            $0.processIdentifier = child
            $0.isRunning = true
        }
        Thread.detachNewThread { [self] in reap(child) }
    }

    /// Blocks the calling thread until the child has exited.
    public func waitUntilExit() {
        exited.wait()
    }

    /// Sends SIGTERM while the child runs.
    public func terminate() { signal(SIGTERM) }

    /// Sends SIGINT while the child runs.
    public func interrupt() { signal(SIGINT) }

    private func signal(_ number: Int32) {
        state.withLock { state in
            if state.isRunning { _ = kill(state.processIdentifier, number) }
        }
    }

    private func reap(_ pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let signal = status & 0x7F
        let handler = state.withLock { state in
            state.isRunning = false
            state.terminationReason = signal == 0 ? .exit : .uncaughtSignal
            state.terminationStatus = signal == 0 ? (status >> 8) & 0xFF : signal
            return state.terminationHandler
        }
        exited.leave()
        handler?(self)
    }

    /// `strings` as a NULL-terminated array of C strings, for the length of `body`.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) } + [nil]
        defer { for copy in copies { free(copy) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
