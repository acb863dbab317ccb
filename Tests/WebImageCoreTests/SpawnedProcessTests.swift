import Foundation
import Testing
import WebImageTestSupport

/// The tests' own process starter (Tests/Support/SpawnedProcess.swift), which every test that
/// runs a server or a peer's tool relies on.
@Suite("SpawnedProcess")
struct SpawnedProcessTests {
    /// The case that crashed Foundation's `Process` in CI: a parent holding some 1,400
    /// descriptors or more. The child must get none of them, only its standard streams.
    @Test("a child started while the parent holds 1,500 more descriptors inherits none of them")
    func manyOpenDescriptorsAreNotInherited() throws {
        // Room for them beside the rest of the parallel suite, as far as the hard limit allows.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 8_192 {
            limit.rlim_cur = min(limit.rlim_max, 8_192)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let extra = (0..<1_500).map { _ in open("/dev/null", O_RDONLY) }
        defer { for descriptor in extra where descriptor >= 0 { close(descriptor) } }
        #expect(extra.allSatisfy { $0 >= 0 })
        // `ls` itself opens the directory it lists: 3.
        let run = try CommandRun(URL(fileURLWithPath: "/bin/sh"), ["-c", "exec ls -1 /proc/self/fd"])
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").sorted() == ["0", "1", "2", "3"])
    }

    @Test("exit statuses, signals, the working directory, the environment and the termination handler")
    func statusSignalDirectoryAndEnvironment() async throws {
        let exit = try CommandRun(URL(fileURLWithPath: "/bin/sh"), ["-c", "exit 7"])
        #expect(exit.exited && exit.status == 7)
        let killed = try CommandRun(URL(fileURLWithPath: "/bin/sh"), ["-c", "kill -KILL $$"])
        #expect(!killed.exited && killed.status == SIGKILL)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let pwd = try CommandRun(URL(fileURLWithPath: "/bin/pwd"), [], in: directory.url)
        #expect(URL(fileURLWithPath: pwd.stdout.trimmingCharacters(in: .newlines)).resolvingSymlinksInPath().path
            == directory.url.resolvingSymlinksInPath().path)

        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exit $CODE"]
        process.environment = ["CODE": "3"]
        let status: Int32 = await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(returning: -1) }
        }
        #expect(status == 3)
        #expect(!process.isRunning)
        #expect(throws: POSIXError.self) {
            let missing = SpawnedProcess()
            missing.executableURL = URL(fileURLWithPath: "/nonexistent/program")
            try missing.run()
        }
    }
}
