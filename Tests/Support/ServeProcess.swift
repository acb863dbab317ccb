import Foundation
import Glibc

/// A running `webimage serve` (a ``ChildProcess`` started in the repository, without the
/// test runner's own `WEBIMAGE_*` settings), and the line that says where it listens: the
/// command's own tests start it, and so do the server's tests of a fleet and of nginx in front.
public final class ServeProcess: Sendable {
    public let child: ChildProcess

    /// The repository, where the command finds `Demo/images` and `Tests/Fixtures` by their
    /// relative paths.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        child = try ChildProcess(executable, arguments, environment: environment, directory: Self.repository) { !$0.hasPrefix("WEBIMAGE_") }
    }

    public var process: SpawnedProcess { child.process }
    public var stdout: [String] { child.stdout }
    public var stderr: [String] { child.stderr }

    public func waitForLine(stderr: Bool = false, where predicate: @escaping @Sendable (String) -> Bool) async -> String? {
        await child.waitForLine(stderr: stderr, where: predicate)
    }

    /// The port from `listening on http://HOST:PORT`.
    public func port() async throws -> Int {
        guard let line = await waitForLine(where: { $0.hasPrefix("listening on http://") }),
              let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            throw NotListening(stderr: stderr)
        }
        return port
    }

    public func terminate() { child.kill(SIGTERM) }

    public func waitForExit() async -> Int32 { await child.waitForExit() }

    /// The server ended, or printed something else, before saying where it listens.
    public struct NotListening: Error, CustomStringConvertible {
        public var stderr: [String]
        public var description: String { "webimage serve did not say where it listens; stderr: \(stderr.joined(separator: "\n"))" }
    }
}
