import Foundation
import Synchronization

/// The bytes the disk-cache tests store under `key`: derived from the key alone, so any process
/// can verify what it reads.
public func testPayload(forKey key: String, size: Int) -> Data {
    var state = key.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    var bytes = [UInt8](repeating: 0, count: size)
    for index in bytes.indices {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        bytes[index] = UInt8(truncatingIfNeeded: state >> 56)
    }
    return Data(bytes)
}

/// A fresh directory under the system's temporary folder, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(_ label: String = "test") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("webimage-\(label)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A running `webimage-test-probe`, the second process of the multi-process tests.
public final class Probe {
    public let process = SpawnedProcess()
    private let output = Pipe()
    private let input = Pipe()
    private var buffered = Data()

    /// The probe binary, built beside the test bundle by `swift build --build-tests`.
    public static var executable: URL {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            bundleDirectory.appendingPathComponent("webimage-test-probe"),
            Bundle.main.bundleURL.appendingPathComponent("webimage-test-probe"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("webimage-test-probe"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    public init(_ arguments: [String]) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = input
        try process.run()
    }

    /// The next line the probe prints, or `nil` once it has exited and printed everything.
    public func readLine() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[buffered.startIndex..<newline], as: UTF8.self)
                buffered = Data(buffered[(newline + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffered.append(chunk)
        }
    }

    /// Reads lines until one satisfies `predicate`; `nil` if the probe ends first.
    public func waitForLine(where predicate: (String) -> Bool) -> String? {
        while let line = readLine() {
            if predicate(line) { return line }
        }
        return nil
    }

    /// Kills the probe with SIGKILL: no clean-up code of its own runs.
    public func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the probe to exit and returns its status.
    public func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs the probe to completion and returns its status.
    @discardableResult
    public static func run(_ arguments: [String]) throws -> Int32 {
        let probe = try Probe(arguments)
        while probe.readLine() != nil {}
        return probe.wait()
    }
}

/// The built `webimage` executable beside the test runner, if there is one.
public enum WebImageExecutable {
    public static let url: URL? = {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        // On Linux the test runner is an executable in the build directory; on macOS it sits
        // inside an .xctest bundle three levels further down.
        for candidate in [directory, directory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("webimage")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        print("note: no webimage executable next to \(directory.path); the tests of the webimage command are skipped")
        return nil
    }()
}

/// One run of a command: its exit status and what it printed.
public struct CommandRun: Sendable {
    public var status: Int32
    /// `false` when a signal ended the process (a crash, an abort): ``status`` is then the signal.
    public var exited: Bool
    public var stdout: String
    public var stderr: String

    /// Runs `executable` with `arguments` in `directory` and waits for it. `input`, when given,
    /// is written to its standard input (which is then closed); otherwise it inherits ours.
    /// `environment` is set over ours.
    public init(_ executable: URL, _ arguments: [String], in directory: URL? = nil, input: Data? = nil,
                environment: [String: String] = [:]) throws {
        let process = SpawnedProcess()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        if let directory { process.currentDirectoryURL = directory }
        // Close-on-exec pipes: see CloseOnExecPipe.
        let out = try CloseOnExecPipe(), err = try CloseOnExecPipe()
        process.standardOutput = out.writing
        process.standardError = err.writing
        let stdin = try input.map { _ in try CloseOnExecPipe() }
        if let stdin { process.standardInput = stdin.reading }
        try process.run()
        try out.writing.close()
        try err.writing.close()
        try stdin?.reading.close()
        if let stdin, let input {
            // Small inputs only: the pipe's buffer takes them before the process reads.
            stdin.writing.write(input)
            try stdin.writing.close()
        }
        let stdout = out.reading.readDataToEndOfFile()
        let stderr = err.reading.readDataToEndOfFile()
        process.waitUntilExit()
        status = process.terminationStatus
        exited = process.terminationReason == .exit
        self.stdout = String(decoding: stdout, as: UTF8.self)
        self.stderr = String(decoding: stderr, as: UTF8.self)
    }
}

/// SplitMix64: a small seeded generator, so "random" test inputs are the same on every run and a
/// failure can be reproduced.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Yields (never sleeps) until `condition` holds; `false` after `timeout`, a safety net against
/// a hanging test when the feature is broken, not a timing assertion. Generous by default:
/// beside the whole suite on two cores, a yielding task may wait tens of seconds for a thread
/// (stretched by ``Deadlines/stretch``).
public func yieldUntil(timeout: Duration = .seconds(120), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout * Deadlines.stretch
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        await Task.yield()
    }
    return true
}

/// Loopback ports for processes of the tests' and benchmarks' own (nginx) that cannot pick a
/// port and report it.
public enum LoopbackPort {
    /// A port free on 127.0.0.1 right now: the kernel's pick for port 0.
    public static func free() -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return boundPort(fd)
    }

    /// A port on 127.0.0.1 that refuses connections for the rest of the process: its socket is
    /// bound and never listens, and stays open, so no server started later (by a test running
    /// beside) can be given the same port.
    public static func refusing() -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        guard let port = boundPort(fd) else {
            close(fd)
            return nil
        }
        heldSockets.withLock { $0.append(fd) }
        return port
    }

    private static let heldSockets = Mutex<[Int32]>([])

    /// Binds `fd` to 127.0.0.1, port 0, and returns the port the kernel chose.
    private static func boundPort(_ fd: Int32) -> Int? {
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard bound else { return nil }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        return named ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    public static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// An IMF-fixdate (`Date`, `Last-Modified`, `If-Modified-Since`), the only form the tests' servers
/// and ours send. A formatter per call: Foundation's are not safe to share across threads on Linux.
public func httpDate(_ string: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    return formatter.date(from: string)
}
